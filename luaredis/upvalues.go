package luaredis

import (
	"reflect"
	_ "unsafe" // for go:linkname

	lua "github.com/yuin/gopher-lua"
)

// A Lua function's upvalues stay open, pointing at the registers of the
// frame whose locals they capture, until that frame returns and closes
// them. When an error unwinds frames instead, gopher-lua closes the open
// upvalues only if no message handler is set, and then all of them, its
// callers' too; scripts always run with a handler, so a closure made in a
// function that pcall caught would read whatever later took its
// register. pcall's message handler, which runs before the frames
// unwind, closes their upvalues itself, with gopher-lua's own
// closeUpvalues (of v1.1.2, the version go.mod names;
// TestPcallClosesUpvalues fails first if it changes).

//go:linkname closeUpvalues github.com/yuin/gopher-lua.(*LState).closeUpvalues
func closeUpvalues(ls *lua.LState, idx int)

// stackBase is the register of stack index 1 of the Go function running
// on L, or -1 if it cannot be read.
func stackBase(L *lua.LState) int {
	dbg, ok := L.GetStack(0)
	if !ok {
		return -1
	}
	frame := reflect.ValueOf(dbg).Elem().FieldByName("frame")
	if !frame.IsValid() || frame.IsNil() {
		return -1
	}
	base := frame.Elem().FieldByName("LocalBase")
	if !base.IsValid() {
		return -1
	}
	return int(base.Int())
}
