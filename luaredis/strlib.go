package luaredis

import (
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
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

	wrap(str, "rep", func(L *lua.LState) {
		s := L.CheckString(1)
		n := L.CheckInt(2)
		if n > 0 && float64(len(s))*float64(n) > float64(l.MaxStringBytes) {
			L.RaiseError("resulting string too large: the playground allows %d bytes", l.MaxStringBytes)
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
	wrap(str, "find", patternCheck)
	wrap(str, "match", patternCheck)
	wrap(str, "gmatch", patternCheck)
	wrap(str, "gfind", patternCheck)
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
				return // the original reports the bad element
			}
			if size > l.MaxStringBytes {
				L.RaiseError("resulting string too large: the playground allows %d bytes", l.MaxStringBytes)
			}
		}
	})
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
// strings it hands back cannot add up to more than max bytes.
func limitedRepl(L *lua.LState, repl lua.LValue, base, max int) *lua.LFunction {
	total := base
	return L.NewFunction(func(L *lua.LState) int {
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
