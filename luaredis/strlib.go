package luaredis

import (
	"math"
	"strings"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/pm"
)

// installLimitedLibs wraps the library functions that can build large
// strings or run long inside Go, where the watchdog cannot see them.
func installLimitedLibs(L *lua.LState, v *vm, l Limits) {
	str := v.globals.RawGetString("string").(*lua.LTable)
	tbl := v.globals.RawGetString("table").(*lua.LTable)
	wrap := func(t *lua.LTable, name string, check func(L *lua.LState)) {
		orig := t.RawGetString(name).(*lua.LFunction)
		t.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
			check(L)
			L.Insert(orig, 1)
			L.Call(L.GetTop()-1, lua.MultRet)
			return L.GetTop()
		}))
	}
	// wrapPieces wraps a function that returns pieces of its first
	// argument (string.sub, the captures of find and match) so that a
	// small piece is a copy: see keepPart.
	wrapPieces := func(t *lua.LTable, name string, check func(L *lua.LState)) {
		orig := t.RawGetString(name).(*lua.LFunction)
		t.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
			check(L)
			whole := len(L.CheckString(1))
			L.Insert(orig, 1)
			L.Call(L.GetTop()-1, lua.MultRet)
			keepPieces(L, 1, whole)
			return L.GetTop()
		}))
	}

	wrap(str, "rep", func(L *lua.LState) {
		s := L.CheckString(1)
		n := L.CheckInt(2)
		if n > 0 && float64(len(s))*float64(n) > float64(l.MaxStringBytes) {
			L.RaiseError("resulting string too large: the playground allows %d bytes", l.MaxStringBytes)
		}
		if n > 0 {
			v.build(L, len(s)*n)
		}
	})

	wrap(str, "format", func(L *lua.LState) {
		f := L.CheckString(1)
		size := len(f)
		for i := 0; i < len(f); i++ {
			if f[i] != '%' {
				continue
			}
			i++
			if i < len(f) && f[i] == '%' {
				continue
			}
			// Lua 5.1 allows at most two digits of width and of precision.
			for i < len(f) && (f[i] == '-' || f[i] == '+' || f[i] == ' ' || f[i] == '#' || f[i] == '0') {
				i++
			}
			if digits(f, &i) > 2 {
				L.RaiseError("invalid format (width or precision too long)")
			}
			if i < len(f) && f[i] == '.' {
				i++
				if digits(f, &i) > 2 {
					L.RaiseError("invalid format (width or precision too long)")
				}
			}
			size += 100
		}
		for i := 2; i <= L.GetTop(); i++ {
			if s, ok := L.Get(i).(lua.LString); ok {
				size += len(s)
			}
		}
		if size > l.MaxStringBytes {
			L.RaiseError("resulting string too large: the playground allows %d bytes", l.MaxStringBytes)
		}
		v.build(L, size)
	})

	// string.format as Lua 5.1's: %q quotes as addquoted does (\n as a
	// backslash and a newline, \0 as \000), and a conversion to a number
	// refuses a string that is not one, which gopher-lua prints as 0.
	limited := str.RawGetString("format").(*lua.LFunction)
	str.RawSetString("format", L.NewFunction(func(L *lua.LState) int {
		f := L.CheckString(1)
		var out strings.Builder
		arg := 1
		for i := 0; i < len(f); i++ {
			out.WriteByte(f[i])
			if f[i] != '%' {
				continue
			}
			if i+1 < len(f) && f[i+1] == '%' {
				out.WriteByte('%')
				i++
				continue
			}
			arg++
			j := i + 1
			for j < len(f) && strings.IndexByte("-+ #0", f[j]) >= 0 {
				j++
			}
			for j < len(f) && (isDec(f[j]) || f[j] == '.') {
				j++
			}
			if j >= len(f) {
				L.RaiseError("%s", "invalid option '%' to 'format'")
			}
			conv := f[j]
			if strings.IndexByte("cdiouxXeEfgGqs", conv) < 0 {
				L.RaiseError("invalid option '%%%s' to 'format'", f[j:j+1])
			}
			if arg > L.GetTop() {
				argError(L, arg, "format", "no value")
			}
			switch {
			case conv == 'q':
				s, ok := L.Get(arg).(lua.LString)
				if !ok {
					if n, isNum := L.Get(arg).(lua.LNumber); isNum {
						s = lua.LString(formatNumber(float64(n)))
					} else {
						argTypeError(L, arg, "format", "string")
					}
				}
				L.Replace(arg, lua.LString(quoteLua51(string(s))))
				out.WriteByte('s')
			case strings.IndexByte("eEfgG", conv) >= 0:
				n := checkNumber(L, arg, "format")
				if math.IsInf(n, 0) || math.IsNaN(n) {
					// C's printf writes inf and nan as words, padded to
					// the width, whatever the precision.
					text, spec := nonFinite(n, f[i+1:j], conv)
					L.Replace(arg, lua.LString(text))
					out.WriteString(spec)
					break
				}
				L.Replace(arg, lua.LNumber(n))
				out.WriteString(f[i+1 : j+1])
			case conv != 's':
				L.Replace(arg, lua.LNumber(checkNumber(L, arg, "format")))
				out.WriteString(f[i+1 : j+1])
			default:
				out.WriteString(f[i+1 : j+1])
			}
			i = j
		}
		L.Replace(1, lua.LString(out.String()))
		L.Insert(limited, 1)
		L.Call(L.GetTop()-1, 1)
		return 1
	}))

	patternCheck := func(L *lua.LState) {
		s := L.CheckString(1)
		p := L.CheckString(2)
		if patternSteps(p, len(s)) > l.MaxPatternSteps {
			L.RaiseError("pattern too complex for a string of %d bytes: the playground limits backtracking", len(s))
		}
	}
	wrapPieces(str, "sub", func(*lua.LState) {})
	wrapPieces(str, "find", patternCheck)
	wrapPieces(str, "match", patternCheck)
	gmatch := L.NewFunction(func(L *lua.LState) int {
		patternCheck(L)
		return newGmatch(L)
	})
	str.RawSetString("gmatch", gmatch)
	str.RawSetString("gfind", gmatch)
	wrap(str, "gsub", func(L *lua.LState) {
		patternCheck(L)
		s := L.CheckString(1)
		switch r := L.Get(3).(type) {
		case lua.LString:
			// Every match (at most len(s)+1) can add the replacement.
			if float64(len(s))+float64(len(s)+1)*float64(len(r)) > float64(l.MaxStringBytes) {
				L.RaiseError("resulting string too large: the playground allows %d bytes", l.MaxStringBytes)
			}
		case *lua.LFunction, *lua.LTable:
			L.Replace(3, limitedRepl(L, r, len(s), l.MaxStringBytes))
		}
		v.build(L, len(s))
	})

	wrap(tbl, "insert", func(L *lua.LState) {
		if t := L.CheckTable(1); L.GetTop() >= 3 {
			v.padTo(L, t, L.Get(2))
		}
	})
	wrap(tbl, "concat", func(L *lua.LState) {
		t := L.CheckTable(1)
		sep := len(L.OptString(2, ""))
		i := L.OptInt(3, 1)
		j := L.OptInt(4, t.Len())
		size := 0
		for k := i; k <= j; k++ {
			switch x := t.RawGetInt(k).(type) {
			case lua.LString:
				size += len(x) + sep
			case lua.LNumber:
				size += 24 + sep
			default:
				L.RaiseError("invalid value (%s) at index %d in table for 'concat'", x.Type().String(), k)
			}
			if size > l.MaxStringBytes {
				L.RaiseError("resulting string too large: the playground allows %d bytes", l.MaxStringBytes)
			}
		}
		v.build(L, size)
	})
}

// nonFinite is how C's printf writes an infinity or a NaN under the
// flags and width of spec (what follows %, without the conversion): the
// word ("inf", "nan", upper case for E and G), its sign (a NaN's from its
// sign bit, as glibc prints -nan), and the spec of a %s that pads it.
func nonFinite(n float64, spec string, conv byte) (text, sspec string) {
	text = "inf"
	if math.IsNaN(n) {
		text = "nan"
	}
	switch {
	case math.Signbit(n):
		text = "-" + text
	case strings.IndexByte(spec, '+') >= 0:
		text = "+" + text
	case strings.IndexByte(spec, ' ') >= 0:
		text = " " + text
	}
	if conv == 'E' || conv == 'G' {
		text = strings.ToUpper(text)
	}
	flags := strings.TrimLeft(spec, "-+ #0")
	width, _, _ := strings.Cut(flags, ".")
	if strings.IndexByte(spec[:len(spec)-len(flags)], '-') >= 0 {
		return text, "-" + width + "s"
	}
	return text, width + "s"
}

// quoteLua51 is Lua 5.1's addquoted, what string.format's %q writes.
func quoteLua51(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\', '\n':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\r':
			b.WriteString(`\r`)
		case 0:
			b.WriteString(`\000`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func digits(f string, i *int) int {
	n := 0
	for *i < len(f) && '0' <= f[*i] && f[*i] <= '9' {
		*i++
		n++
	}
	return n
}

// limitedRepl wraps a gsub replacement function or table so that the
// strings it hands back cannot add up to more than max bytes, and the
// captures it is given are copies when small (see keepPart).
func limitedRepl(L *lua.LState, repl lua.LValue, base, max int) *lua.LFunction {
	total := base
	return L.NewFunction(func(L *lua.LState) int {
		keepPieces(L, 1, base)
		var out lua.LValue
		switch r := repl.(type) {
		case *lua.LTable:
			out = L.GetTable(r, L.Get(1))
		default:
			L.Insert(repl, 1)
			L.Call(L.GetTop()-1, 1)
			out = L.Get(-1)
		}
		if s, ok := out.(lua.LString); ok {
			total += len(s)
			if total > max {
				L.RaiseError("resulting string too large: the playground allows %d bytes", max)
			}
		}
		L.SetTop(0)
		L.Push(out)
		return 1
	})
}

// patternSteps estimates the worst-case work of matching pattern p against
// n bytes: a backtracking matcher can try every split of the subject among
// the pattern's quantifiers, from every start position unless the pattern
// is anchored. An optional item (?) only doubles the work.
func patternSteps(p string, n int) float64 {
	q, opt := 0, 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '%':
			i++
		case '[':
			// Skip the set; a ] right after [ or [^ belongs to it.
			i++
			if i < len(p) && p[i] == '^' {
				i++
			}
			if i < len(p) && p[i] == ']' {
				i++
			}
			for i < len(p) && p[i] != ']' {
				if p[i] == '%' {
					i++
				}
				i++
			}
		case '*', '+', '-':
			q++
		case '?':
			opt++
		}
	}
	exp := float64(q)
	if len(p) == 0 || p[0] != '^' {
		exp++
	}
	return math.Pow(float64(n+1), exp) * math.Pow(2, float64(opt))
}

// keepPart returns part, a piece of a string of whole bytes, or a copy of
// it if it is less than half of that string. A Go substring keeps the
// whole string it was cut from alive; without the copy, a script could
// keep one-byte pieces of many large strings it dropped, and hold far more
// than the memory account counts.
func keepPart(part string, whole int) string {
	if 2*len(part) < whole {
		return strings.Clone(part)
	}
	return part
}

// keepPieces applies keepPart to the strings on the stack from index
// from to the top, pieces of a string of whole bytes.
func keepPieces(L *lua.LState, from, whole int) {
	for i := from; i <= L.GetTop(); i++ {
		if s, ok := L.Get(i).(lua.LString); ok && 2*len(s) < whole {
			L.Replace(i, lua.LString(strings.Clone(string(s))))
		}
	}
}

// gmatchState is where a string.gmatch iterator is: its subject, its
// pattern and the position the next match is looked for from.
type gmatchState struct {
	subject, pattern string
	pos              int
	done             bool
}

// newGmatch is string.gmatch: it returns one iterator, as Lua 5.1 does,
// which finds each match when it is called rather than all of them at
// once, and keeps its state where the memory account sees it (an upvalue
// holding a userdata). It matches what gopher-lua's own finds: after a
// match the search goes on from its end, or one byte further after an
// empty match, and a pattern anchored with ^ matches at most once.
func newGmatch(L *lua.LState) int {
	subject := L.CheckString(1)
	pattern := L.CheckString(2)
	// A malformed pattern is an error now, as it is for gopher-lua.
	if _, err := pm.Find(pattern, nil, 0, 1); err != nil {
		L.RaiseError("%s", err.Error())
	}
	ud := L.NewUserData()
	ud.Value = &gmatchState{subject: subject, pattern: pattern}
	L.Push(L.NewClosure(gmatchNext, ud))
	return 1
}

// gmatchNext is a string.gmatch iterator: the next match's captures, or
// the whole match when the pattern has none, or nothing at the end.
func gmatchNext(L *lua.LState) int {
	st := L.Get(lua.UpvalueIndex(1)).(*lua.LUserData).Value.(*gmatchState)
	if st.done || st.pos > len(st.subject) {
		return 0
	}
	// pm only reads the subject: the bytes need not be copied.
	src := unsafe.Slice(unsafe.StringData(st.subject), len(st.subject))
	mds, err := pm.Find(st.pattern, src, st.pos, 1)
	if err != nil {
		L.RaiseError("%s", err.Error())
	}
	if len(mds) == 0 {
		st.done = true
		return 0
	}
	md := mds[0]
	start, end := md.Capture(0), md.Capture(1)
	st.pos = max(start+1, end)
	st.done = strings.HasPrefix(st.pattern, "^")
	piece := func(i int) lua.LValue {
		return lua.LString(keepPart(st.subject[md.Capture(i):md.Capture(i+1)], len(st.subject)))
	}
	if md.CaptureLength() == 2 {
		L.Push(piece(0))
		return 1
	}
	for i := 2; i < md.CaptureLength(); i += 2 {
		if md.IsPosCapture(i) {
			L.Push(lua.LNumber(md.Capture(i)))
		} else {
			L.Push(piece(i))
		}
	}
	return md.CaptureLength()/2 - 1
}
