package luaredis

import (
	"regexp"

	lua "github.com/yuin/gopher-lua"
)

// gopher-lua words some runtime errors its own way. lua51Message rewords
// those it can into Lua 5.1's text: the operand's type is in gopher-lua's
// message, so "attempt to perform arithmetic on a nil value" is exact
// where the operand is no named variable (a call's result, a constant);
// where it is one, Lua 5.1 would name it too ("on local 'x' (a nil
// value)"), which gopher-lua does not tell.

var (
	arithError = regexp.MustCompile(`cannot perform \w+ operation between (\w+) and (\w+)`)
	indexError = regexp.MustCompile(`attempt to index a non-table object\((\w+)\) with key '.*'$`)
	argError51 = regexp.MustCompile(`bad argument #(\d+) to (\w+) \(`)
	unaryError = regexp.MustCompile(`cannot perform unm operation on (\w+)`)
	forError   = regexp.MustCompile(`for statement (init|limit|step) must be a number`)
	compareTwo = regexp.MustCompile(`attempt to compare (\w+) with (\w+)`)
)

// forWords are Lua 5.1's names of a numeric for's three values.
var forWords = map[string]string{"init": "initial value", "limit": "limit", "step": "step"}

// lua51Message rewords a gopher-lua error message as Lua 5.1's.
func lua51Message(s string) string {
	s = arithError.ReplaceAllStringFunc(s, func(m string) string {
		sub := arithError.FindStringSubmatch(m)
		bad := sub[2]
		if sub[1] != "number" {
			bad = sub[1] // Lua 5.1 blames the first operand if it is not a number
		}
		return "attempt to perform arithmetic on a " + bad + " value"
	})
	s = unaryError.ReplaceAllString(s, "attempt to perform arithmetic on a $1 value")
	s = indexError.ReplaceAllString(s, "attempt to index a $1 value")
	s = forError.ReplaceAllStringFunc(s, func(m string) string {
		return "'for' " + forWords[forError.FindStringSubmatch(m)[1]] + " must be a number"
	})
	s = compareTwo.ReplaceAllStringFunc(s, func(m string) string {
		if sub := compareTwo.FindStringSubmatch(m); sub[1] == sub[2] {
			return "attempt to compare two " + sub[1] + " values"
		}
		return m
	})
	return argError51.ReplaceAllString(s, "bad argument #$1 to '$2' (")
}

// lua51Error rewords err's message if it is a string.
func lua51Error(obj lua.LValue) lua.LValue {
	if s, ok := obj.(lua.LString); ok {
		return lua.LString(lua51Message(string(s)))
	}
	return obj
}
