package luaredis

import (
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// gopher-lua keeps a table's integer keys from 1 up in an array, and a
// write to a key past its end fills the array with nil up to it: t[1e7] = 1
// on an empty table allocates 160 MB, and more to grow the array, in one
// instruction that the watchdog cannot stop halfway (Lua puts such a key
// in the hash part). So the watchdog looks at each table write before it
// runs, and counts the nils it would add as bytes allocated: a write that
// would take the script past its memory limit is stopped before it starts,
// with the memory error. Only the instructions of scripts that have such a
// write (SETTABLE, t[k] = v with k computed as the script runs) are looked
// at; code that loadstring compiles turns it on if it has one.

// padFree is how many nils a write may add before it is counted: small
// gaps cost little, and most writes append.
const padFree = 4096

// padGuard is what the watchdog needs to see the instruction about to
// run, which guarded.Done reads: the running frame's function, and its
// Pc, which gopher-lua has moved past the instruction when it calls Done.
type padGuard struct {
	L            *lua.LState
	lay          *layout
	frame        unsafe.Pointer // &L.currentFrame
	fnOff, pcOff uintptr        // of the frame's Fn and Pc
}

func newPadGuard(L *lua.LState, lay *layout) *padGuard {
	return &padGuard{L: L, lay: lay, frame: unsafe.Add(unsafe.Pointer(L), lay.frame), fnOff: lay.frameFn, pcOff: lay.framePc}
}

// setTable looks at R(A)[RK(B)] := RK(C) before it runs.
func (w *watchdog) setTable(g *padGuard, cf unsafe.Pointer, fn *lua.LFunction, inst uint32) {
	const rk = 1 << 8 // B names a constant rather than a register
	base := *(*int)(unsafe.Add(cf, g.lay.frameBase))
	regs := g.lay.stack(g.L)
	a, b := base+int(inst>>18)&0xff, int(inst&0x1ff)
	var key lua.LValue
	switch {
	case b&rk != 0 && b&^rk < len(fn.Proto.Constants):
		key = fn.Proto.Constants[b&^rk]
	case b&rk == 0 && base+b < len(regs):
		key = regs[base+b]
	}
	n, ok := key.(lua.LNumber)
	if !ok || n <= padFree || a >= len(regs) {
		return
	}
	// A table with a metatable may have its writes go to another
	// (__newindex), whose array may be empty.
	have := 0
	if t, ok := regs[a].(*lua.LTable); ok && t.Metatable == lua.LNil {
		have = g.lay.arrayLen(t)
	}
	w.padding(n, have)
}

// padding counts what writing integer key n to a table whose array holds
// have values adds: the nils between, and as much again for the copies
// that growing the array leaves. It looks at the limits at once, with the
// nils counted as held, so that a write that would pass them does not
// start.
func (w *watchdog) padding(n lua.LNumber, have int) {
	if n != lua.LNumber(int64(n)) || n >= lua.LNumber(lua.MaxArrayIndex) {
		return // a key gopher-lua keeps in the hash part
	}
	gap := int64(n) - int64(have)
	if gap <= padFree {
		return
	}
	bytes := uint64(gap) * slotBytes
	w.virtual += 2 * bytes
	w.extra = bytes
	w.check()
	w.extra = 0
}

// padTo is padding for the library's Go functions that write integer keys
// (rawset, table.insert, cmsgpack.unpack): it raises the watchdog's error
// if the write would pass the limits.
func (v *vm) padTo(L *lua.LState, t *lua.LTable, key lua.LValue) {
	r := v.run
	n, ok := key.(lua.LNumber)
	if r == nil || !ok || n <= padFree {
		return
	}
	if r.watchdog.padding(n, v.acct.lay.arrayLen(t)); r.watchdog.err != nil {
		L.RaiseError("%v", r.watchdog.err)
	}
}
