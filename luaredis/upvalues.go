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

// protectedCall calls the function below the nargs arguments on top of
// L's stack, as pcall and xpcall do, with handler as its message handler:
// the results are left on the stack, or ok is false and obj is the error.
// A script the watchdog stopped is stopped for good: no pcall catches it.
func (v *vm) protectedCall(L *lua.LState, nargs int, handler *lua.LFunction) (obj lua.LValue, ok bool) {
	base := stackBase(L) // for closeUnwound: where the function called sits
	if base >= 0 {
		base += L.GetTop() - nargs - 1
	}
	v.pcallBases = append(v.pcallBases, base)
	err := L.PCall(nargs, lua.MultRet, handler)
	v.pcallBases = v.pcallBases[:len(v.pcallBases)-1]
	if err == nil {
		return nil, true
	}
	v.reraiseStop(L)
	obj = lua.LString(err.Error())
	if apiErr, isAPI := err.(*lua.ApiError); isAPI {
		obj = apiErr.Object
	}
	return obj, false
}

// closeUnwound closes, from the message handler of protectedCall, the
// upvalues of the frames the error unwinds: those above the function the
// innermost protected call called.
func (v *vm) closeUnwound(L *lua.LState) {
	if n := len(v.pcallBases); n > 0 && v.pcallBases[n-1] >= 0 {
		closeUpvalues(L, v.pcallBases[n-1]+1)
	}
}

// reraiseStop raises again the error of a script the watchdog stopped.
func (v *vm) reraiseStop(L *lua.LState) {
	if r := v.run; r != nil && r.watchdog.err != nil {
		L.RaiseError("%v", r.watchdog.err)
	}
}

// failed is what pcall and xpcall return for an error: false and obj.
func failed(L *lua.LState, obj lua.LValue) int {
	L.SetTop(0)
	L.Push(lua.LFalse)
	L.Push(obj)
	return 2
}
