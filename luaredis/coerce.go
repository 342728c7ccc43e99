package luaredis

import (
	lua "github.com/yuin/gopher-lua"
)

// Lua 5.1's luaL_checknumber and luaL_checkint take a string that reads
// as a number ("5", " 5 ", "0x10", "1e2") wherever a library function
// wants a number; gopher-lua's CheckInt refuses every string. Scripts pass
// ARGV straight to string.sub or math.floor, so the library functions are
// wrapped to convert such strings first, and to refuse anything else with
// Lua 5.1's words.

// numArgs says which arguments of a library function are numbers: the
// positions that must be there, those that may be left out, and whether
// every argument from the first is one (math.max, string.char). strings
// lists the string arguments that come before them: Lua 5.1 checks
// arguments in order, so string.rep() is refused for its missing string
// (#1), not for its missing count (#2). table.concat reads its separator
// (optStrings) before its table.
type numArgs struct {
	optStrings []int
	strings    []int
	tables     []int
	required   []int
	optional   []int
	all        bool
}

// numericArgs lists the functions of each library whose arguments Lua 5.1
// reads with luaL_checknumber, luaL_checkint or their opt forms. The
// functions Lock Lab writes itself (string.format, tonumber, math.random,
// select, the bit and struct libraries) read their numbers as Lua 5.1 does
// on their own.
var numericArgs = map[string]map[string]numArgs{
	"string": {
		"byte": {strings: []int{1}, optional: []int{2, 3}},
		"char": {all: true},
		"find": {strings: []int{1, 2}, optional: []int{3}},
		"gsub": {strings: []int{1, 2}, optional: []int{4}},
		"rep":  {strings: []int{1}, required: []int{2}},
		"sub":  {strings: []int{1}, required: []int{2}, optional: []int{3}},
	},
	"table": {
		"concat": {optStrings: []int{2}, tables: []int{1}, optional: []int{3, 4}},
		"remove": {tables: []int{1}, optional: []int{2}},
	},
	"math": {
		"abs": {required: []int{1}}, "acos": {required: []int{1}}, "asin": {required: []int{1}},
		"atan": {required: []int{1}}, "atan2": {required: []int{1, 2}}, "ceil": {required: []int{1}},
		"cos": {required: []int{1}}, "cosh": {required: []int{1}}, "deg": {required: []int{1}},
		"exp": {required: []int{1}}, "floor": {required: []int{1}}, "fmod": {required: []int{1, 2}},
		"frexp": {required: []int{1}}, "ldexp": {required: []int{1, 2}}, "log": {required: []int{1}},
		"log10": {required: []int{1}}, "max": {all: true}, "min": {all: true},
		"modf": {required: []int{1}}, "pow": {required: []int{1, 2}}, "rad": {required: []int{1}},
		"sin": {required: []int{1}}, "sinh": {required: []int{1}}, "sqrt": {required: []int{1}},
		"tan": {required: []int{1}}, "tanh": {required: []int{1}},
	},
}

// installNumericArgs wraps the functions numericArgs lists, table.insert,
// whose position is a number when it has one, and table.concat, whose
// separator may be a number (written as a string), and replaces select.
func installNumericArgs(L *lua.LState, g *lua.LTable) {
	for lib, fns := range numericArgs {
		t := g.RawGetString(lib).(*lua.LTable)
		for name, spec := range fns {
			orig := t.RawGetString(name).(*lua.LFunction)
			t.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
				for _, i := range spec.optStrings {
					if L.Get(i) != lua.LNil {
						checkStringArg(L, i, name)
					}
				}
				for _, i := range spec.strings {
					checkStringArg(L, i, name)
				}
				for _, i := range spec.tables {
					checkTableArg(L, i, name)
				}
				if spec.all {
					if L.GetTop() == 0 && (name == "max" || name == "min") {
						argTypeError(L, 1, name, "number")
					}
					for i := 1; i <= L.GetTop(); i++ {
						toNumberArg(L, i, name)
					}
				}
				for _, i := range spec.required {
					toNumberArg(L, i, name)
				}
				for _, i := range spec.optional {
					if L.Get(i) != lua.LNil {
						toNumberArg(L, i, name)
					}
				}
				if name == "concat" {
					if n, ok := L.Get(2).(lua.LNumber); ok {
						L.Replace(2, lua.LString(formatNumber(float64(n))))
					}
				}
				return callOrig(L, orig)
			}))
		}
	}
	tbl := g.RawGetString("table").(*lua.LTable)
	insert := tbl.RawGetString("insert").(*lua.LFunction)
	tbl.RawSetString("insert", L.NewFunction(func(L *lua.LState) int {
		checkTableArg(L, 1, "insert")
		if L.GetTop() == 3 {
			toNumberArg(L, 2, "insert")
		}
		return callOrig(L, insert)
	}))
	// select: Lua 5.1 counts the arguments for any string that starts
	// with '#', and reads any other as an integer.
	g.RawSetString("select", L.NewFunction(func(L *lua.LState) int {
		n := L.GetTop()
		if s, ok := L.Get(1).(lua.LString); ok && len(s) > 0 && s[0] == '#' {
			L.Push(lua.LNumber(n - 1))
			return 1
		}
		i := checkInt(L, 1, "select")
		if i < 0 {
			i += n
		} else if i > n {
			i = n
		}
		if i < 1 {
			argError(L, 1, "select", "index out of range")
		}
		return n - i
	}))
}

// checkStringArg raises Lua 5.1's error for argument i of name unless it
// is a string or a number (which Lua reads as one).
func checkStringArg(L *lua.LState, i int, name string) {
	switch L.Get(i).(type) {
	case lua.LString, lua.LNumber:
	default:
		argTypeError(L, i, name, "string")
	}
}

// checkTableArg raises Lua 5.1's error for argument i of name unless it is
// a table.
func checkTableArg(L *lua.LState, i int, name string) {
	if _, ok := L.Get(i).(*lua.LTable); !ok {
		argTypeError(L, i, name, "table")
	}
}

// callOrig calls orig with the arguments on the stack and returns all it
// returns.
func callOrig(L *lua.LState, orig *lua.LFunction) int {
	L.Insert(orig, 1)
	L.Call(L.GetTop()-1, lua.MultRet)
	return L.GetTop()
}

// toNumberArg replaces argument i with the number Lua 5.1 reads from it,
// or raises Lua 5.1's error for name if it is not one.
func toNumberArg(L *lua.LState, i int, name string) {
	if _, ok := L.Get(i).(lua.LNumber); ok {
		return
	}
	L.Replace(i, lua.LNumber(checkNumber(L, i, name)))
}

// checkInt is luaL_checkint: checkNumber, converted to a 64-bit
// integer (luaL_checkinteger) and then to a C int, which keeps its low 32
// bits: math.randomseed(2^40) seeds with 0.
func checkInt(L *lua.LState, i int, name string) int {
	return int(int32(toInteger(checkNumber(L, i, name))))
}

// cInt converts f to a C int as an (int) cast of a double does on x86:
// truncation toward zero, and INT_MIN for what does not fit. Redis's
// redis.log, redis.setresp and redis.set_repl read their numbers so.
func cInt(f float64) int {
	if f != f || f >= 2147483648.0 || f <= -2147483649.0 {
		return -2147483648
	}
	return int(int32(f))
}
