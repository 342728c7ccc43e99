package luaredis

import (
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/locklab/locklab/resp"
)

// TestGlobalsReadOnly checks that no table a script can reach from the
// globals, the libraries or the string metatable can be written to: the
// account skips nothing, but a script must not keep data in the state
// from one run to the next, and Redis 7 refuses these writes.
func TestGlobalsReadOnly(t *testing.T) {
	e := NewEngine(Options{})
	for _, src := range []string{
		"string.__index.x = 1",
		"getmetatable('').__index.x = 1",
		"getmetatable('').__index.__index.x = 1",
		"string.x = 1",
		"cjson.x = 1",
		"rawset(getmetatable('').__index, 'x', 1)",
	} {
		got := eval(t, e, newMapCaller(), src)
		if !got.IsError() {
			t.Errorf("EVAL %q = %v; want an error", src, got)
		}
		if got := eval(t, e, newMapCaller(), "return string.x or getmetatable('').__index.x"); got.Kind != resp.Nil {
			t.Errorf("after EVAL %q, string.x = %v; want nil", src, got)
		}
	}
	// Every table a script reaches by reading globals is protected.
	v := e.vm
	seen := map[*lua.LTable]bool{}
	todo := []*lua.LTable{v.env, v.strProxy}
	for len(todo) > 0 {
		tb := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if seen[tb] {
			continue
		}
		seen[tb] = true
		if !v.protected[tb] {
			t.Errorf("a script reaches a table it can write to: %v", tb)
		}
		tb.ForEach(func(_, val lua.LValue) {
			if x, ok := val.(*lua.LTable); ok {
				todo = append(todo, x)
			}
		})
		// Reads go through __index; the metatables themselves are
		// hidden by __metatable.
		if mt, ok := tb.Metatable.(*lua.LTable); ok {
			if idx, ok := mt.RawGetString("__index").(*lua.LTable); ok {
				todo = append(todo, idx)
			}
		}
	}
}
