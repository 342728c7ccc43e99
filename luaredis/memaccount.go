package luaredis

import (
	"fmt"
	"reflect"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// account estimates the bytes a sandbox's Lua state holds: everything
// reachable from its value stack, its call frames, its globals, its
// registry and the string metatable. Go's runtime counts allocations only
// for the whole process, so this is how a script is judged by its own
// memory: the watchdog asks for it when the process has allocated enough
// since the last judgement that the script might have passed the limit.
//
// The walk counts what it reaches once (tables, functions, upvalues,
// prototypes, userdata, long strings and the blocks that numbers are
// allocated in) and stops as soon as the count passes the limit, so that
// its work grows with the limit, not with what the state holds. What a
// script allocated and dropped is not counted: it is garbage, which the
// collector takes back, and making it costs the script time, which the
// deadline bounds.
//
// gopher-lua keeps some of what a state holds in unexported fields: the
// value stack (temporaries and varargs, which the debug API does not
// show), a table's array capacity and every key a table was ever given
// (it never forgets one). The account reads them at offsets found by
// reflection when the state is built; TestAccountSeesGopherLua fails if a
// new version of gopher-lua moves them.
type account struct {
	L        *lua.LState
	lay      layout
	baseline uint64 // what a new state holds, before any script

	// Per walk; the maps are kept from one walk to the next within a run
	// and dropped at its end.
	seen    map[unsafe.Pointer]struct{} // tables, functions, upvalues, protos, userdata, states, long strings
	regions map[uintptr]struct{}        // 256-byte blocks holding numbers
	todo    []lua.LValue
	n, max  uint64
	walks   int // how many walks were made, for tests
}

// Estimated sizes, in bytes, of what gopher-lua allocates; see
// TestAccountEstimate, which checks them against the heap.
const (
	slotBytes     = 16  // an LValue in a slice or a register
	boxBytes      = 16  // the boxed header of a string held as an LValue
	tableBytes    = 96  // an LTable
	funcBytes     = 64  // an LFunction
	upvalueBytes  = 48  // an Upvalue
	userdataBytes = 64  // an LUserData
	frameBytes    = 96  // a call frame
	threadBytes   = 512 // an LState besides its stack
	// lazyStrdict is the hash part gopher-lua makes for a table's first
	// string key when its constructor made none: a map sized for 32
	// entries. A table made by a constructor with string keys has a
	// smaller one, which the account cannot tell apart, so it errs on the
	// side of the larger.
	lazyStrdict = 2200
	// smallMapBytes is a Go map of at most 8 entries, besides its group
	// of 8 slots: the header and the group's control word.
	smallMapBytes = 56
	// numberBlock is how gopher-lua allocates numbers: 32 at a time, so
	// one number kept keeps its block of 256 bytes.
	numberBlock = 256
	// shortString is the length under which a string is counted each time
	// it is reached rather than once: short strings are seldom shared, and
	// remembering each would cost the walk more than they weigh.
	shortString = 64
)

// mapBytes estimates a Go map of n entries of entry bytes each: small
// maps are one group of 8; larger ones are between 7/16 and 7/8 full.
func mapBytes(n, entry int) uint64 {
	if n <= 8 {
		return uint64(smallMapBytes + 8*(entry+1))
	}
	return uint64(48 + 2*n*(entry+1))
}

// layout is where gopher-lua keeps, in unexported fields, what the
// account needs: offsets into LState, its registry (the value stack) and
// LTable.
type layout struct {
	reg, regArray                   uintptr
	array, keys, dict, strdict, k2i uintptr
	// The running call frame, and its function, next instruction and
	// first register: what the watchdog reads to see a table write
	// coming (see padGuard).
	frame, frameFn, framePc, frameBase uintptr
}

// findLayout finds the offsets of layout by reflection, checking each
// field's type, so that a gopher-lua that changed them is refused rather
// than misread.
func findLayout() (layout, error) {
	var lay layout
	field := func(t reflect.Type, name string, want reflect.Type, off *uintptr) (reflect.Type, error) {
		f, ok := t.FieldByName(name)
		if !ok || len(f.Index) != 1 || (want != nil && f.Type != want) {
			return nil, fmt.Errorf("gopher-lua's %s has no field %s of type %v", t, name, want)
		}
		*off = f.Offset
		return f.Type, nil
	}
	values := reflect.TypeFor[[]lua.LValue]()
	reg, err := field(reflect.TypeFor[lua.LState](), "reg", nil, &lay.reg)
	if err != nil {
		return lay, err
	}
	if reg.Kind() != reflect.Pointer || reg.Elem().Kind() != reflect.Struct {
		return lay, fmt.Errorf("gopher-lua's LState.reg is a %v, not a pointer to a registry", reg)
	}
	frame, err := field(reflect.TypeFor[lua.LState](), "currentFrame", nil, &lay.frame)
	if err != nil {
		return lay, err
	}
	if frame.Kind() != reflect.Pointer || frame.Elem().Kind() != reflect.Struct {
		return lay, fmt.Errorf("gopher-lua's LState.currentFrame is a %v, not a pointer to a call frame", frame)
	}
	table := reflect.TypeFor[lua.LTable]()
	for _, f := range []struct {
		t    reflect.Type
		name string
		want reflect.Type
		off  *uintptr
	}{
		{reg.Elem(), "array", values, &lay.regArray},
		{table, "array", values, &lay.array},
		{table, "keys", values, &lay.keys},
		{table, "dict", reflect.TypeFor[map[lua.LValue]lua.LValue](), &lay.dict},
		{table, "strdict", reflect.TypeFor[map[string]lua.LValue](), &lay.strdict},
		{table, "k2i", reflect.TypeFor[map[lua.LValue]int](), &lay.k2i},
		{frame.Elem(), "Fn", reflect.TypeFor[*lua.LFunction](), &lay.frameFn},
		{frame.Elem(), "Pc", reflect.TypeFor[int](), &lay.framePc},
		{frame.Elem(), "LocalBase", reflect.TypeFor[int](), &lay.frameBase},
	} {
		if _, err := field(f.t, f.name, f.want, f.off); err != nil {
			return lay, err
		}
	}
	return lay, nil
}

// stack returns L's whole value stack: every register, above the top too,
// where values of returned calls may linger.
func (lay *layout) stack(L *lua.LState) []lua.LValue {
	reg := *(*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(L), lay.reg))
	if reg == nil {
		return nil
	}
	return *(*[]lua.LValue)(unsafe.Add(reg, lay.regArray))
}

// arrayLen is the length of a table's array part.
func (lay *layout) arrayLen(t *lua.LTable) int {
	return len(*(*[]lua.LValue)(unsafe.Add(unsafe.Pointer(t), lay.array)))
}

// tableParts is what a table holds besides its metatable.
type tableParts struct {
	array, keys []lua.LValue
	dict        map[lua.LValue]lua.LValue
	strdict     map[string]lua.LValue
	k2i         map[lua.LValue]int
}

func (lay *layout) table(t *lua.LTable) tableParts {
	p := unsafe.Pointer(t)
	return tableParts{
		array:   *(*[]lua.LValue)(unsafe.Add(p, lay.array)),
		keys:    *(*[]lua.LValue)(unsafe.Add(p, lay.keys)),
		dict:    *(*map[lua.LValue]lua.LValue)(unsafe.Add(p, lay.dict)),
		strdict: *(*map[string]lua.LValue)(unsafe.Add(p, lay.strdict)),
		k2i:     *(*map[lua.LValue]int)(unsafe.Add(p, lay.k2i)),
	}
}

// newAccount returns the account of L, a state with its libraries and
// globals in place and no script run yet: what it holds now is the
// baseline, which held does not count.
func newAccount(L *lua.LState) (*account, error) {
	lay, err := findLayout()
	if err != nil {
		return nil, err
	}
	a := &account{L: L, lay: lay}
	a.baseline = a.walk(^uint64(0))
	a.walks = 0
	a.release()
	return a, nil
}

// held returns the bytes the state holds beyond its baseline, or a
// number past max once the walk has counted that far.
func (a *account) held(max uint64) uint64 {
	n := a.walk(a.baseline + max)
	if n < a.baseline {
		return 0
	}
	return n - a.baseline
}

// release drops what the walks keep for the next one; the engine calls
// it when a script ends.
func (a *account) release() {
	a.seen, a.regions, a.todo = nil, nil, nil
}

// clearStack empties every register of L, so that nothing a script left
// on the stack outlives it. Reading is cheaper than writing (which the
// collector may have to watch): it clears up to the last register used.
func (a *account) clearStack() {
	regs := a.lay.stack(a.L)
	n := len(regs)
	for n > 0 && regs[n-1] == nil {
		n--
	}
	clear(regs[:n])
}

// walk counts what the state holds, stopping once the count passes max.
func (a *account) walk(max uint64) uint64 {
	a.walks++
	if a.seen == nil {
		a.seen = map[unsafe.Pointer]struct{}{}
		a.regions = map[uintptr]struct{}{}
	}
	a.n, a.max = 0, max
	L := a.L
	a.see(unsafe.Pointer(L))
	a.state(L)
	a.value(L.G.Global)
	a.value(L.G.Registry)
	if L.Env != nil {
		a.value(L.Env)
	}
	a.value(L.GetMetatable(lua.LString("")))
	for len(a.todo) > 0 && !a.over() {
		v := a.todo[len(a.todo)-1]
		a.todo[len(a.todo)-1] = nil
		a.todo = a.todo[:len(a.todo)-1]
		a.object(v)
	}
	n := a.n
	clear(a.seen)
	clear(a.regions)
	clear(a.todo[:cap(a.todo)])
	a.todo = a.todo[:0]
	return n
}

func (a *account) over() bool { return a.n > a.max }

// see reports whether p is reached for the first time, and remembers it.
func (a *account) see(p unsafe.Pointer) bool {
	if _, ok := a.seen[p]; ok {
		return false
	}
	a.seen[p] = struct{}{}
	return true
}

// state counts a state's value stack and call frames.
func (a *account) state(L *lua.LState) {
	regs := a.lay.stack(L)
	a.n += uint64(len(regs)) * slotBytes
	for _, v := range regs {
		if a.over() {
			return
		}
		a.value(v)
	}
	// A frame's function is on the stack too, but frames are what the VM
	// goes back to: count them from the frames themselves as well.
	for level := 0; !a.over(); level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			break
		}
		a.n += frameBytes
		if fn, err := L.GetInfo("f", dbg, lua.LNil); err == nil {
			a.value(fn)
		}
	}
}

// value counts v if it is a scalar, or queues it if it is an object not
// reached before.
func (a *account) value(v lua.LValue) {
	switch x := v.(type) {
	case nil, *lua.LNilType, lua.LBool:
	case lua.LNumber:
		a.number(v, x)
	case lua.LString:
		a.n += boxBytes
		a.str(string(x))
	case *lua.LTable:
		if x != nil && a.see(unsafe.Pointer(x)) {
			a.todo = append(a.todo, v)
		}
	case *lua.LFunction:
		if x != nil && a.see(unsafe.Pointer(x)) {
			a.todo = append(a.todo, v)
		}
	case *lua.LUserData:
		if x != nil && a.see(unsafe.Pointer(x)) {
			a.todo = append(a.todo, v)
		}
	case *lua.LState:
		if x != nil && a.see(unsafe.Pointer(x)) {
			a.todo = append(a.todo, v)
		}
	default: // channels, which scripts cannot make
		a.n += userdataBytes
	}
}

// str counts a string's bytes: a long one once, however many values
// share it, and a short one each time, as the allocator rounds it.
func (a *account) str(s string) {
	if len(s) < shortString {
		a.n += uint64(len(s)+15) &^ 15
	} else if a.see(unsafe.Pointer(unsafe.StringData(s))) {
		a.n += uint64(len(s))
	}
}

// number counts the block a number is kept in, once: gopher-lua boxes
// numbers 32 to a 256-byte block (all but the integers 0 to 127, which
// are shared), and one number kept keeps its whole block.
func (a *account) number(v lua.LValue, x lua.LNumber) {
	if x >= 0 && x < 128 && x == lua.LNumber(int64(x)) {
		return
	}
	word := uintptr((*[2]unsafe.Pointer)(unsafe.Pointer(&v))[1])
	block := word &^ (numberBlock - 1)
	if _, ok := a.regions[block]; !ok {
		a.regions[block] = struct{}{}
		a.n += numberBlock
	}
}

// object counts an object taken from the queue and reaches into it.
func (a *account) object(v lua.LValue) {
	switch x := v.(type) {
	case *lua.LTable:
		a.table(x)
	case *lua.LFunction:
		a.function(x)
	case *lua.LUserData:
		a.n += userdataBytes
		a.userdata(x.Value)
		a.value(x.Metatable)
		if x.Env != nil {
			a.value(x.Env)
		}
	case *lua.LState:
		a.n += threadBytes
		a.state(x)
		if x.Env != nil {
			a.value(x.Env)
		}
	}
}

// table counts a table: its slices by capacity, its maps by the keys it
// was ever given (gopher-lua keeps them all, and Go's maps do not shrink),
// and everything it reaches: metatable, keys and values.
func (a *account) table(t *lua.LTable) {
	p := a.lay.table(t)
	a.n += tableBytes + slotBytes*uint64(cap(p.array)+cap(p.keys))
	a.value(t.Metatable)
	for _, v := range p.array {
		if a.over() {
			return
		}
		a.value(v)
	}
	strKeys := 0
	for _, k := range p.keys {
		if a.over() {
			return
		}
		if _, ok := k.(lua.LString); ok {
			strKeys++
		}
		a.value(k)
	}
	if p.k2i != nil {
		a.n += mapBytes(len(p.keys), 24)
	}
	if p.strdict != nil {
		// The map holds its keys' headers besides the LValues in keys.
		a.n += max(lazyStrdict, mapBytes(strKeys, 32))
		for _, v := range p.strdict {
			if a.over() {
				return
			}
			a.value(v)
		}
	}
	if p.dict != nil {
		// Made with room for as many entries as the string part had.
		a.n += mapBytes(max(len(p.keys)-strKeys, strKeys), 32)
		for _, v := range p.dict {
			if a.over() {
				return
			}
			a.value(v)
		}
	}
}

// function counts a closure, its upvalues and, once each, the compiled
// code of its prototype.
func (a *account) function(fn *lua.LFunction) {
	a.n += funcBytes + 8*uint64(len(fn.Upvalues))
	for _, uv := range fn.Upvalues {
		if uv != nil && a.see(unsafe.Pointer(uv)) {
			a.n += upvalueBytes
			a.value(uv.Value())
		}
	}
	if fn.Env != nil {
		a.value(fn.Env)
	}
	if fn.Proto != nil {
		a.proto(fn.Proto)
	}
}

// proto counts a prototype and the ones nested in it, each once.
func (a *account) proto(p *lua.FunctionProto) {
	if !a.see(unsafe.Pointer(p)) {
		return
	}
	a.n += uint64(protoBytes(p))
	for _, c := range p.FunctionPrototypes {
		a.proto(c)
	}
}

// userdata counts the Go value of a userdata. Scripts reach only the
// libraries' own: cjson.null, which holds nothing, and the state of a
// string.gmatch iterator, which holds its subject and pattern.
func (a *account) userdata(v any) {
	if st, ok := v.(*gmatchState); ok {
		a.n += 64
		a.str(st.subject)
		a.str(st.pattern)
	}
}
