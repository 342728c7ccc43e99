package luaredis

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"
)

// Redis scripts have lua-cjson 2.1.0 as cjson. The JSON modules for
// gopher-lua encode through encoding/json, which prints numbers, empty
// tables, sparse arrays and escapes otherwise and words its errors its own
// way, so cjson is written here after lua-cjson's rules: numbers as
// "%.14g", "/" escaped, an empty table as {}, an array with holes as
// nulls unless it is excessively sparse, nesting up to 1000, and
// lua-cjson's error texts. The encoder stops at the playground's string
// limit as it writes, so its work is linear in what it may produce.
//
// Two things differ on purpose: object keys come out in gopher-lua's table
// order, not in C Lua's hash order (neither is one a script can rely
// on), and the configuration functions report lua-cjson's defaults
// without changing them, so that one script cannot change how another's
// JSON reads.

const cjsonMaxDepth = 1000

// libLimits are what the libraries' Go functions work within: the longest
// string they may build, and work, which stops the script when the
// watchdog says so.
type libLimits struct {
	maxBytes int
	work     func(L *lua.LState)
	// pad is called before a table is given an integer key, which may
	// fill its array with nils up to it (see vm.padTo).
	pad func(L *lua.LState, t *lua.LTable, key lua.LValue)
	// order lists a table's keys in C Lua's order (see lua51Order).
	order func(t *lua.LTable) []lua.LValue
}

// jsonNull marks cjson.null, which tostring prints as C Lua does.
type jsonNull struct{}

// cjsonTable builds the cjson library.
func cjsonTable(L *lua.LState, lim libLimits) *lua.LTable {
	t := L.CreateTable(0, 16)
	null := L.NewUserData() // lua-cjson's null is a NULL light userdata
	null.Value = jsonNull{}
	t.RawSetString("null", null)
	t.RawSetString("_NAME", lua.LString("cjson"))
	t.RawSetString("_VERSION", lua.LString("2.1.0"))
	t.RawSetString("encode", L.NewFunction(func(L *lua.LState) int {
		if L.GetTop() != 1 {
			argError(L, 1, "encode", "expected 1 argument")
		}
		lim.work(L)
		e := jsonEncoder{L: L, null: null, max: lim.maxBytes, order: lim.order}
		e.value(L.Get(1), 0)
		L.Push(lua.LString(e.b.String()))
		return 1
	}))
	t.RawSetString("decode", L.NewFunction(func(L *lua.LState) int {
		if L.GetTop() != 1 {
			argError(L, 1, "decode", "expected 1 argument")
		}
		var s string
		switch v := L.Get(1).(type) {
		case lua.LString:
			s = string(v)
		case lua.LNumber:
			s = formatNumber(float64(v))
		default:
			argTypeError(L, 1, "decode", "string")
		}
		lim.work(L)
		d := jsonDecoder{L: L, s: s, null: null}
		var tok jsonToken
		d.next(&tok)
		v := d.value(&tok)
		d.next(&tok)
		if tok.typ != tEnd {
			d.fail("the end", &tok)
		}
		L.Push(v)
		return 1
	}))
	// The configuration functions answer lua-cjson's defaults.
	cfg := func(name string, vals ...lua.LValue) {
		t.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
			for _, v := range vals {
				L.Push(v)
			}
			return len(vals)
		}))
	}
	cfg("encode_sparse_array", lua.LFalse, lua.LNumber(2), lua.LNumber(10))
	cfg("encode_max_depth", lua.LNumber(cjsonMaxDepth))
	cfg("decode_max_depth", lua.LNumber(cjsonMaxDepth))
	cfg("encode_number_precision", lua.LNumber(14))
	cfg("encode_keep_buffer", lua.LTrue)
	cfg("encode_invalid_numbers", lua.LFalse)
	cfg("decode_invalid_numbers", lua.LTrue)
	t.RawSetString("new", L.NewFunction(func(L *lua.LState) int {
		L.Push(t)
		return 1
	}))
	return t
}

// jsonEncoder writes one cjson.encode result.
type jsonEncoder struct {
	L    *lua.LState
	null lua.LValue
	b    strings.Builder
	max  int
	// order lists a table's keys in C Lua's order.
	order func(t *lua.LTable) []lua.LValue
}

func (e *jsonEncoder) write(s string) {
	if e.b.Len()+len(s) > e.max {
		e.L.RaiseError("resulting string too large: the playground allows %d bytes", e.max)
	}
	e.b.WriteString(s)
}

// fail raises lua-cjson's "Cannot serialise <type>: <why>".
func (e *jsonEncoder) fail(v lua.LValue, why string) {
	e.L.RaiseError("Cannot serialise %s: %s", v.Type().String(), why)
}

func (e *jsonEncoder) value(v lua.LValue, depth int) {
	switch v := v.(type) {
	case *lua.LNilType:
		e.write("null")
	case lua.LBool:
		if v {
			e.write("true")
		} else {
			e.write("false")
		}
	case lua.LNumber:
		e.number(v)
	case lua.LString:
		e.str(string(v))
	case *lua.LTable:
		depth++
		if depth > cjsonMaxDepth {
			e.L.RaiseError("Cannot serialise, excessive nesting (%d)", depth)
		}
		e.table(v, depth)
	case *lua.LUserData:
		if v == e.null {
			e.write("null")
			return
		}
		e.fail(v, "type not supported")
	default:
		e.fail(v, "type not supported")
	}
}

func (e *jsonEncoder) number(n lua.LNumber) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		e.fail(n, "must not be NaN or Inf")
	}
	e.write(formatNumber(f))
}

// jsonEscapes is lua-cjson's char2escape for the bytes it escapes.
var jsonEscapes = func() [256]string {
	var t [256]string
	for c := range 0x20 {
		t[c] = `\u00` + string("0123456789abcdef"[c>>4]) + string("0123456789abcdef"[c&15])
	}
	t['\b'], t['\t'], t['\n'], t['\f'], t['\r'] = `\b`, `\t`, `\n`, `\f`, `\r`
	t['"'], t['\\'], t['/'], t[0x7f] = `\"`, `\\`, `\/`, `\u007f`
	return t
}()

func (e *jsonEncoder) str(s string) {
	e.write(`"`)
	start := 0
	for i := 0; i < len(s); i++ {
		if esc := jsonEscapes[s[i]]; esc != "" {
			e.write(s[start:i])
			e.write(esc)
			start = i + 1
		}
	}
	e.write(s[start:])
	e.write(`"`)
}

// table writes t as an array when every key is a positive integer and the
// array is not excessively sparse (more than twice as long as it has
// elements, and longer than 10), else as an object; an empty table is an
// object.
//
// lua-cjson keeps the largest key in a C int: a key of 2^31 or more
// stores as INT_MIN (the x86 conversion), which makes the table an object.
func (e *jsonEncoder) table(t *lua.LTable, depth int) {
	var maxKey int32
	items, isArray := 0, true
	t.ForEach(func(k, _ lua.LValue) {
		if !isArray {
			return
		}
		if n, ok := k.(lua.LNumber); ok && float64(n) >= 1 && math.Floor(float64(n)) == float64(n) {
			if float64(n) > float64(maxKey) {
				maxKey = math.MinInt32
				if float64(n) < 1<<31 {
					maxKey = int32(n)
				}
			}
			items++
			return
		}
		isArray = false
	})
	if isArray && int(maxKey) > 2*items && maxKey > 10 {
		e.fail(t, "excessively sparse array")
	}
	if isArray && maxKey > 0 {
		e.write("[")
		for i := 1; i <= int(maxKey); i++ {
			if i > 1 {
				e.write(",")
			}
			e.value(t.RawGetInt(i), depth)
		}
		e.write("]")
		return
	}
	e.write("{")
	first := true
	for _, k := range e.order(t) {
		v := t.RawGet(k)
		if !first {
			e.write(",")
		}
		first = false
		switch k := k.(type) {
		case lua.LString:
			e.str(string(k))
		case lua.LNumber:
			e.write(`"`)
			e.number(k)
			e.write(`"`)
		default:
			e.fail(k, "table key must be a number or string")
		}
		e.write(":")
		e.value(v, depth)
	}
	e.write("}")
}

// The token types of lua-cjson's parser, by the names its errors give.
type jsonTokenType int

const (
	tObjBegin jsonTokenType = iota
	tObjEnd
	tArrBegin
	tArrEnd
	tString
	tNumber
	tBoolean
	tNull
	tColon
	tComma
	tEnd
	tError
)

var jsonTokenNames = [...]string{"T_OBJ_BEGIN", "T_OBJ_END", "T_ARR_BEGIN", "T_ARR_END",
	"T_STRING", "T_NUMBER", "T_BOOLEAN", "T_NULL", "T_COLON", "T_COMMA", "T_END", "T_ERROR"}

type jsonToken struct {
	typ   jsonTokenType
	index int    // where the token starts, or where its error was found
	str   string // a string's value, or an error's text
	num   float64
	b     bool
}

// jsonDecoder is one cjson.decode.
type jsonDecoder struct {
	L     *lua.LState
	s     string
	pos   int
	depth int
	null  lua.LValue
}

func (d *jsonDecoder) fail(expected string, tok *jsonToken) {
	found := tok.str
	if tok.typ != tError {
		found = jsonTokenNames[tok.typ]
	}
	d.L.RaiseError("Expected %s but found %s at character %d", expected, found, tok.index+1)
}

func (d *jsonDecoder) at(i int) byte {
	if i < len(d.s) {
		return d.s[i]
	}
	return 0 // the C string's terminator: lua-cjson stops at a NUL byte
}

func (d *jsonDecoder) errorToken(tok *jsonToken, msg string) {
	tok.typ, tok.index, tok.str = tError, d.pos, msg
}

func (d *jsonDecoder) next(tok *jsonToken) {
	for {
		c := d.at(d.pos)
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			break
		}
		d.pos++
	}
	*tok = jsonToken{index: d.pos}
	c := d.at(d.pos)
	if i := strings.IndexByte("{}[]:,", c); i >= 0 && c != 0 {
		tok.typ = [...]jsonTokenType{tObjBegin, tObjEnd, tArrBegin, tArrEnd, tColon, tComma}[i]
		d.pos++
		return
	}
	rest := d.s[d.pos:]
	switch {
	case c == 0:
		tok.typ = tEnd
	case c == '"':
		d.string(tok)
	case c == '-' || isDigit(c):
		d.number(tok)
	case strings.HasPrefix(rest, "true"):
		tok.typ, tok.b = tBoolean, true
		d.pos += 4
	case strings.HasPrefix(rest, "false"):
		tok.typ = tBoolean
		d.pos += 5
	case strings.HasPrefix(rest, "null"):
		tok.typ = tNull
		d.pos += 4
	case strings.ContainsRune("+iInN", rune(c)) && jsonInvalidNumber(rest):
		d.number(tok)
	default:
		d.errorToken(tok, "invalid token")
	}
}

// jsonInvalidNumber is lua-cjson's test for the numbers JSON does not
// allow but it decodes anyway: a plus sign, hexadecimal, leading zeros,
// inf and nan.
func jsonInvalidNumber(s string) bool {
	if strings.HasPrefix(s, "+") {
		return true
	}
	s = strings.TrimPrefix(s, "-")
	if strings.HasPrefix(s, "0") {
		return len(s) > 1 && (s[1]|0x20 == 'x' || isDigit(s[1]))
	}
	if s != "" && s[0] <= '9' {
		return false
	}
	l := strings.ToLower(s[:min(len(s), 3)])
	return l == "inf" || l == "nan"
}

func (d *jsonDecoder) number(tok *jsonToken) {
	f, n := strtodPrefix(d.s[d.pos:])
	if n == 0 {
		d.errorToken(tok, "invalid number")
		return
	}
	tok.typ, tok.num = tNumber, f
	d.pos += n
}

func (d *jsonDecoder) string(tok *jsonToken) {
	d.pos++ // the opening quote
	var b strings.Builder
	for {
		c := d.at(d.pos)
		if c == '"' {
			break
		}
		if c == 0 {
			d.errorToken(tok, "unexpected end of string")
			return
		}
		if c == '\\' {
			esc := d.at(d.pos + 1)
			switch esc {
			case '"', '\\', '/':
				c = esc
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'u':
				if !d.unicode(&b) {
					d.errorToken(tok, "invalid unicode escape code")
					return
				}
				continue
			default:
				d.errorToken(tok, "invalid escape code")
				return
			}
			d.pos++
		}
		b.WriteByte(c)
		d.pos++
	}
	d.pos++
	tok.typ, tok.str = tString, b.String()
}

// unicode decodes \uXXXX, or a surrogate pair of them, at d.pos into b.
func (d *jsonDecoder) unicode(b *strings.Builder) bool {
	hex := func(i int) (rune, bool) {
		if i+6 > len(d.s) || d.s[i] != '\\' || d.s[i+1] != 'u' {
			return 0, false
		}
		n, err := strconv.ParseUint(d.s[i+2:i+6], 16, 16)
		return rune(n), err == nil
	}
	r, ok := hex(d.pos)
	if !ok {
		return false
	}
	n := 6
	switch {
	case r >= 0xdc00 && r <= 0xdfff:
		return false
	case r >= 0xd800 && r <= 0xdbff:
		lo, ok := hex(d.pos + 6)
		if !ok || lo < 0xdc00 || lo > 0xdfff {
			return false
		}
		r = (r-0xd800)<<10 + (lo - 0xdc00) + 0x10000
		n = 12
	}
	var buf [4]byte
	b.Write(buf[:utf8.EncodeRune(buf[:], r)])
	d.pos += n
	return true
}

func (d *jsonDecoder) value(tok *jsonToken) lua.LValue {
	switch tok.typ {
	case tString:
		return lua.LString(tok.str)
	case tNumber:
		return lua.LNumber(tok.num)
	case tBoolean:
		return lua.LBool(tok.b)
	case tNull:
		return d.null
	case tObjBegin:
		return d.object()
	case tArrBegin:
		return d.array()
	}
	d.fail("value", tok)
	return nil
}

func (d *jsonDecoder) descend() {
	d.depth++
	if d.depth > cjsonMaxDepth {
		d.L.RaiseError("Found too many nested data structures (%d) at character %d", d.depth, d.pos)
	}
}

func (d *jsonDecoder) array() lua.LValue {
	d.descend()
	t := d.L.CreateTable(0, 0)
	var tok jsonToken
	d.next(&tok)
	if tok.typ == tArrEnd {
		d.depth--
		return t
	}
	for i := 1; ; i++ {
		t.RawSetInt(i, d.value(&tok))
		d.next(&tok)
		if tok.typ == tArrEnd {
			d.depth--
			return t
		}
		if tok.typ != tComma {
			d.fail("comma or array end", &tok)
		}
		d.next(&tok)
	}
}

func (d *jsonDecoder) object() lua.LValue {
	d.descend()
	t := d.L.CreateTable(0, 0)
	var tok jsonToken
	d.next(&tok)
	if tok.typ == tObjEnd {
		d.depth--
		return t
	}
	for {
		if tok.typ != tString {
			d.fail("object key string", &tok)
		}
		key := tok.str
		d.next(&tok)
		if tok.typ != tColon {
			d.fail("colon", &tok)
		}
		d.next(&tok)
		t.RawSetString(key, d.value(&tok))
		d.next(&tok)
		if tok.typ == tObjEnd {
			d.depth--
			return t
		}
		if tok.typ != tComma {
			d.fail("comma or object end", &tok)
		}
		d.next(&tok)
	}
}
