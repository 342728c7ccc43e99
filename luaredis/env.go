package luaredis

import (
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

const (
	readonlyMsg  = "Attempt to modify a readonly table"
	redisVersion = "7.0.15"
	// redisVersionNum is 7.0.15 as Redis encodes it: 0x00MMmmpp.
	redisVersionNum = 0x0007000f
)

// vm is a sandbox's Lua state, built on the first script and dropped by
// Engine.Release when the sandbox goes idle.
type vm struct {
	L       *lua.LState
	globals *lua.LTable // the real globals, reached by scripts only through env
	env     *lua.LTable // the empty, read-only table scripts see as _G
	// protected holds every table a script must not change: env, globals,
	// the library tables and their read-only stand-ins.
	protected map[*lua.LTable]bool
	strProxy  *lua.LTable // what getmetatable("") returns
	envMeta   *lua.LTable // what getmetatable(_G) returns
	handler   *lua.LFunction
	// chunkNames maps the chunkID of chunks loadstring and load made to
	// their names as given, for the end of an error's message.
	chunkNames map[string]string
	// pcallHandler is the message handler of the scripts' pcall: it
	// closes the upvalues of the frames the error unwinds and names what
	// a type error was about, before they unwind. pcallBases holds where
	// the function of each protected call running sits (see
	// protectedCall), innermost last.
	pcallHandler *lua.LFunction
	pcallBases   []int
	run          *run // the script being run, nil between runs
	acct         *account
	held         func(max uint64) uint64 // acct.held, made once
	pad          *padGuard
	built        int // bytes of strings built since the watchdog last looked (see build)
	// libEnv is the environment of function libraries, libMeta its
	// metatable, whose __index is libAPI while a library loads and the
	// globals otherwise; loading collects what the library registers
	// (see libenv.go).
	libEnv, libMeta, libAPI *lua.LTable
	loading                 *loadCtx
}

// newVM builds a Lua state with the base, table, string and math libraries,
// the bit, cjson, cmsgpack and struct libraries Redis adds, and the redis
// table, and makes every global read-only as Redis 7 does:
// reading a missing global and writing any global are errors.
func newVM(e *Engine) *vm {
	L := lua.NewState(lua.Options{
		SkipOpenLibs:        true,
		CallStackSize:       200,
		MinimizeStackMemory: true,
		RegistrySize:        256,
		RegistryMaxSize:     256 * 1024,
	})
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
	} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	v := &vm{L: L, globals: L.G.Global, protected: map[*lua.LTable]bool{}}
	g := v.globals

	// What Redis leaves out or gopher-lua adds: files, modules, printing,
	// environments and the garbage collector.
	for _, name := range []string{"dofile", "loadfile", "print", "module", "require",
		"newproxy", "getfenv", "setfenv", "_printregs", "_GOPHER_LUA_VERSION", "package"} {
		g.RawSetString(name, lua.LNil)
	}
	// math.huge is HUGE_VAL, infinity, in Lua 5.1; gopher-lua gives the
	// largest finite number.
	g.RawGetString("math").(*lua.LTable).RawSetString("huge", lua.LNumber(math.Inf(1)))
	str := g.RawGetString("string").(*lua.LTable)
	// string.dump gives Lua 5.1's bytecode header and no more: gopher-lua
	// compiles to its own code, and Redis 7 loads no bytecode, so all a
	// script can do with a dump is have loadstring refuse it, as here.
	str.RawSetString("dump", L.NewFunction(func(L *lua.LState) int {
		fn, ok := L.Get(1).(*lua.LFunction)
		if !ok {
			argTypeError(L, 1, "dump", "function")
		}
		if fn.IsG {
			L.RaiseError("unable to dump given function")
		}
		L.Push(lua.LString(lua51Header))
		return 1
	}))
	// collectgarbage would run Go's collector for the whole process.
	g.RawSetString("collectgarbage", L.NewFunction(func(L *lua.LState) int { L.Push(lua.LNumber(0)); return 1 }))
	g.RawSetString("gcinfo", L.NewFunction(func(L *lua.LState) int { L.Push(lua.LNumber(0)); return 1 }))

	v.installBase(e)
	installLimitedLibs(L, v, e.opts.Limits)
	installNumericArgs(L, g)
	v.installRandom(e)
	g.RawSetString("redis", v.redisTable())
	lim := libLimits{maxBytes: e.opts.Limits.MaxStringBytes, work: v.work, pad: v.padTo, order: v.order}
	g.RawSetString("bit", bitTable(L))
	g.RawSetString("cjson", cjsonTable(L, lim))
	g.RawSetString("cmsgpack", cmsgpackTable(L, lim))
	g.RawSetString("struct", structTable(L, lim))

	// Library tables become read-only stand-ins.
	for _, name := range []string{"string", "table", "math", "redis", "bit", "cjson", "cmsgpack", "struct"} {
		real := g.RawGetString(name).(*lua.LTable)
		g.RawSetString(name, v.readonly(real))
	}
	// Strings' metatable is {__index = string}, as in Lua 5.1; gopher-lua
	// makes the string table its own (string.__index is string), through
	// which a script could write into it. Scripts see a read-only one
	// whose __index is the read-only string table.
	str.RawSetString("__index", lua.LNil)
	smt := L.CreateTable(0, 1)
	smt.RawSetString("__index", str)
	L.SetMetatable(lua.LString(""), smt)
	v.protected[smt] = true
	visible := L.CreateTable(0, 1)
	visible.RawSetString("__index", g.RawGetString("string"))
	v.strProxy = v.readonly(visible)

	// Scripts see env: empty, so that every assignment reaches __newindex;
	// reads fall through to the globals, whose own __index reports a missing
	// global as Redis does.
	gmt := L.CreateTable(0, 2)
	gmt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("Script attempted to access nonexistent global variable '%s'", L.ToString(2))
		return 0
	}))
	gmt.RawSetString("__metatable", lua.LFalse)
	L.SetMetatable(g, gmt)
	v.env = v.readonly(g)
	// Redis 7.0 lets a script see _G's metatable, read-only: its __index
	// reports a missing global.
	envMeta := L.CreateTable(0, 1)
	envMeta.RawSetString("__index", gmt.RawGetString("__index"))
	v.envMeta = v.readonly(envMeta)
	g.RawSetString("_G", v.env)
	v.protected[g] = true
	L.Env = v.env // loadstring and friends give new functions this env
	v.installLibraryEnv()

	v.handler = L.NewFunction(v.onError)
	v.pcallHandler = L.NewFunction(func(L *lua.LState) int {
		// The frames the error unwinds are still there: close their
		// upvalues (see upvalues.go) while their registers hold the
		// values, above the function the innermost pcall called.
		v.closeUnwound(L)
		L.Push(v.namedTypeError(L, L.Get(1)))
		return 1
	})
	acct, err := newAccount(L)
	if err != nil {
		// Only a gopher-lua other than the one go.mod names gets here,
		// and TestAccountSeesGopherLua fails first.
		panic("luaredis: the memory account cannot read this version of gopher-lua: " + err.Error())
	}
	v.acct, v.held, v.pad = acct, acct.held, newPadGuard(L, &acct.lay)
	return v
}

// order lists t's keys in C Lua 5.1's traversal order (see lua51Order).
func (v *vm) order(t *lua.LTable) []lua.LValue { return v.acct.lay.lua51Order(t) }

// readonly returns an empty table that reads through to t and refuses
// writes, and marks both as protected.
func (v *vm) readonly(t *lua.LTable) *lua.LTable {
	L := v.L
	proxy := L.CreateTable(0, 0)
	mt := L.CreateTable(0, 3)
	mt.RawSetString("__index", t)
	mt.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError(readonlyMsg)
		return 0
	}))
	mt.RawSetString("__metatable", lua.LFalse)
	L.SetMetatable(proxy, mt)
	v.protected[proxy] = true
	v.protected[t] = true
	return proxy
}

// installBase replaces the base functions whose gopher-lua behaviour differs
// from what Redis 7 scripts see, or which could bypass the protection.
func (v *vm) installBase(e *Engine) {
	L, g := v.L, v.globals

	// error: Lua 5.1's, which adds the position to numbers too and accepts
	// no argument (error() raises nil).
	g.RawSetString("error", L.NewFunction(func(L *lua.LState) int {
		obj := L.Get(1)
		level := 1
		if L.Get(2) != lua.LNil {
			level = checkInt(L, 2, "error")
		}
		if n, ok := obj.(lua.LNumber); ok {
			obj = lua.LString(formatNumber(float64(n)))
		}
		// luaL_where gives no position for a Go (C) function, such as
		// pcall calling error directly, ...
		// ... nor past the script's main chunk, which Redis calls from C.
		if level > 0 {
			dbg, ok := L.GetStack(level)
			if !ok {
				level = 0
			} else if _, err := L.GetInfo("S", dbg, lua.LNil); err == nil && dbg.What == "G" {
				level = 0
			}
		}
		L.Error(obj, level)
		return 0
	}))

	// xpcall: Lua 5.1's luaB_xpcall. f is called with no arguments and
	// handler as its message handler, which gets the error as pcall's
	// does (named, with the unwound frames' upvalues closed); an error in
	// the handler, or a handler that cannot be called, is "error in error
	// handling".
	g.RawSetString("xpcall", L.NewFunction(func(L *lua.LState) int {
		if L.GetTop() < 2 {
			argError(L, 2, "xpcall", "value expected")
		}
		fn, handler := L.Get(1), L.Get(2)
		L.SetTop(0)
		handle := func(L *lua.LState, msg lua.LValue) lua.LValue {
			L.Push(handler)
			L.Push(msg)
			if err := L.PCall(1, 1, nil); err != nil {
				v.reraiseStop(L)
				return lua.LString("error in error handling")
			}
			out := L.Get(-1)
			L.Pop(1)
			return out
		}
		if _, ok := fn.(*lua.LFunction); !ok && L.GetMetaField(fn, "__call") == lua.LNil {
			// Lua calls it anyway, from C: the error has no position.
			return failed(L, handle(L, lua.LString("attempt to call a "+fn.Type().String()+" value")))
		}
		L.Push(fn)
		obj, ok := v.protectedCall(L, 0, L.NewFunction(func(L *lua.LState) int {
			v.closeUnwound(L)
			L.Push(handle(L, lua51Error(v.namedTypeError(L, L.Get(1)))))
			return 1
		}))
		if ok {
			L.Insert(lua.LTrue, 1)
			return L.GetTop()
		}
		return failed(L, obj)
	}))

	// pcall: Redis 7's, which hands back the err field of an error table
	// (what redis.call raises) as the message.
	g.RawSetString("pcall", L.NewFunction(func(L *lua.LState) int {
		if L.GetTop() == 0 {
			L.ArgError(1, "value expected")
		}
		obj, ok := v.protectedCall(L, L.GetTop()-1, v.pcallHandler)
		if ok {
			L.Insert(lua.LTrue, 1)
			return L.GetTop()
		}
		obj = lua51Error(obj)
		if t, ok := obj.(*lua.LTable); ok {
			if s, ok := t.RawGetString("err").(lua.LString); ok {
				obj = s
			}
		}
		return failed(L, obj)
	}))

	g.RawSetString("rawset", L.NewFunction(func(L *lua.LState) int {
		t := L.CheckTable(1)
		if v.protected[t] {
			L.Error(lua.LString(readonlyMsg), 0)
		}
		v.padTo(L, t, L.CheckAny(2))
		t.RawSet(L.CheckAny(2), L.CheckAny(3))
		L.Push(t)
		return 1
	}))

	setmt := g.RawGetString("setmetatable").(*lua.LFunction)
	g.RawSetString("setmetatable", L.NewFunction(func(L *lua.LState) int {
		// Lua 5.1's checks: gopher-lua would also set the metatable of
		// every number or string.
		t, ok := L.Get(1).(*lua.LTable)
		if !ok {
			argTypeError(L, 1, "setmetatable", "table")
		}
		if mt := L.Get(2); mt != lua.LNil && mt.Type() != lua.LTTable {
			argError(L, 2, "setmetatable", "nil or table expected")
		}
		if v.protected[t] {
			L.Error(lua.LString(readonlyMsg), 0)
		}
		L.Insert(setmt, 1)
		L.Call(L.GetTop()-1, 1)
		return 1
	}))

	g.RawSetString("getmetatable", L.NewFunction(func(L *lua.LState) int {
		obj := L.CheckAny(1)
		if _, ok := obj.(lua.LString); ok {
			L.Push(v.strProxy)
			return 1
		}
		if t, ok := obj.(*lua.LTable); ok && v.protected[t] {
			// Redis's read-only tables have no metatable of their own,
			// but for _G's.
			if t == v.env {
				L.Push(v.envMeta)
			} else {
				L.Push(lua.LNil)
			}
			return 1
		}
		mt := L.GetMetatable(obj)
		if t, ok := mt.(*lua.LTable); ok {
			if p := t.RawGetString("__metatable"); p != lua.LNil {
				mt = p
			}
		}
		L.Push(mt)
		return 1
	}))

	// tonumber: Lua 5.1's, which reads strings with strtod (exponents,
	// hexadecimal, spaces around) and other bases with strtoul.
	g.RawSetString("tonumber", L.NewFunction(func(L *lua.LState) int {
		base := 10
		if L.GetTop() >= 2 && L.Get(2) != lua.LNil {
			base = int(checkNumber(L, 2, "tonumber"))
		}
		if L.GetTop() == 0 {
			argError(L, 1, "tonumber", "value expected")
		}
		if base == 10 {
			switch x := L.Get(1).(type) {
			case lua.LNumber:
				L.Push(x)
				return 1
			case lua.LString:
				if f, err := parseLuaNumber(string(x)); err == nil {
					L.Push(lua.LNumber(f))
					return 1
				}
			}
			L.Push(lua.LNil)
			return 1
		}
		var s string
		switch x := L.Get(1).(type) {
		case lua.LString:
			s = string(x)
		case lua.LNumber:
			s = formatNumber(float64(x))
		default:
			argTypeError(L, 1, "tonumber", "string")
		}
		if base < 2 || base > 36 {
			argError(L, 2, "tonumber", "base out of range")
		}
		if n, ok := strtoul(s, base); ok {
			L.Push(lua.LNumber(n))
			return 1
		}
		L.Push(lua.LNil)
		return 1
	}))

	// tostring: numbers as Lua 5.1 prints them ("%.14g").
	tostr := g.RawGetString("tostring").(*lua.LFunction)
	g.RawSetString("tostring", L.NewFunction(func(L *lua.LState) int {
		if L.GetTop() == 0 {
			argError(L, 1, "tostring", "value expected")
		}
		if n, ok := L.Get(1).(lua.LNumber); ok {
			L.Push(lua.LString(formatNumber(float64(n))))
			return 1
		}
		if u, ok := L.Get(1).(*lua.LUserData); ok {
			if _, null := u.Value.(jsonNull); null {
				L.Push(lua.LString("userdata: (nil)")) // a NULL light userdata in C Lua
				return 1
			}
		}
		L.Insert(tostr, 1)
		L.Call(L.GetTop()-1, 1)
		return 1
	}))

	// unpack: Lua 5.1 refuses more results than its C stack holds.
	g.RawSetString("unpack", L.NewFunction(func(L *lua.LState) int {
		t := L.CheckTable(1)
		i, j := 1, t.Len()
		if L.Get(2) != lua.LNil {
			i = checkInt(L, 2, "unpack")
		}
		if L.Get(3) != lua.LNil {
			j = checkInt(L, 3, "unpack")
		}
		if i > j {
			return 0
		}
		if j-i >= 8000 {
			L.RaiseError("too many results to unpack")
		}
		for k := i; k <= j; k++ {
			L.Push(t.RawGetInt(k))
		}
		return j - i + 1
	}))

	// loadstring and load compile through the same checked path as EVAL.
	g.RawSetString("loadstring", L.NewFunction(func(L *lua.LState) int {
		src := L.CheckString(1)
		return v.load(L, src, L.OptString(2, src), e.opts.Limits)
	}))
	g.RawSetString("load", L.NewFunction(func(L *lua.LState) int {
		fn := L.CheckFunction(1)
		var b strings.Builder
		for {
			L.Push(fn)
			L.Call(0, 1)
			piece := L.Get(-1)
			L.Pop(1)
			s, ok := piece.(lua.LString)
			if !ok || s == "" {
				break
			}
			if b.Len()+len(s) > e.opts.Limits.MaxStringBytes {
				L.RaiseError("chunk too large")
			}
			b.WriteString(string(s))
		}
		return v.load(L, b.String(), L.OptString(2, "=(load)"), e.opts.Limits)
	}))

	g.RawSetString(concatFunc, L.NewFunction(func(L *lua.LState) int {
		return concat(L, e.opts.Limits.MaxStringBytes, v.build)
	}))
}

// buildCheck is how many bytes of strings the libraries may build
// between two looks at the watchdog: between two of its checks, 1,024
// instructions apart, a script could otherwise build hundreds of
// megabytes.
const buildCheck = 64 << 10

// build counts n bytes of a string about to be built, and looks at the
// watchdog (see work) once buildCheck bytes were built since it last did.
func (v *vm) build(L *lua.LState, n int) {
	if v.built += n; v.built >= buildCheck {
		if r := v.run; r != nil {
			r.watchdog.work += uint64(v.built) / 1024
		}
		v.built = 0
		v.work(L)
	}
}

// work looks at the watchdog and raises its error if it says stop. The
// libraries' Go functions do work the VM cannot see between two
// instructions: each that takes long or builds a big string calls it
// first, so that a loop of calls stops within one call of the limits.
func (v *vm) work(L *lua.LState) {
	if r := v.run; r != nil {
		if r.watchdog.check(); r.watchdog.err != nil {
			L.RaiseError("%v", r.watchdog.err)
		}
	}
}

func (v *vm) load(L *lua.LState, src, name string, l Limits) int {
	id := chunkID(name)
	proto, err := compile(src, id, l)
	if err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(err.Error()))
		return 2
	}
	if r := v.run; r != nil && r.watchdog.pad == nil && countProto(proto).setTable {
		r.watchdog.pad = v.pad
		L.SetContext(r.watchdog.context())
	}
	// Redis's error ends with the chunk's name as given, where its
	// message starts with the chunkID: remember which is which, for the
	// last few chunks.
	if len(v.chunkNames) >= maxChunkNames {
		clear(v.chunkNames)
	}
	if v.chunkNames == nil {
		v.chunkNames = map[string]string{}
	}
	v.chunkNames[id] = name
	fn := L.NewFunctionFromProto(proto)
	fn.Env = v.env
	L.Push(fn)
	return 1
}

// maxChunkNames bounds vm.chunkNames.
const maxChunkNames = 16

// chunkID is Lua 5.1's luaO_chunkid: how a chunk's name shows in its
// errors. "=name" shows as name (at most 59 bytes), "@file" as the file
// ("..." and its last 52 bytes if it is longer), and a chunk's source as
// [string "its first line"], cut at 43 bytes with "..." if there is more.
// Like C, it stops at a NUL byte.
func chunkID(name string) string {
	const idSize = 60 // LUA_IDSIZE
	if i := strings.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	switch {
	case strings.HasPrefix(name, "="):
		return name[1:min(len(name), idSize)]
	case strings.HasPrefix(name, "@"):
		file, room := name[1:], idSize-len(" '...' ")-1
		if len(file) > room {
			return "..." + file[len(file)-room:]
		}
		return file
	}
	room := idSize - len(` [string "..."] `) - 1
	n := strings.IndexAny(name, "\n\r")
	if n < 0 {
		n = len(name)
	}
	if n > room {
		n = room
	}
	if n < len(name) {
		return `[string "` + name[:n] + `..."]`
	}
	return `[string "` + name + `"]`
}

// concat is the .. operator: strings and numbers, joined only if the result
// stays under max bytes; build counts the bytes before they are.
func concat(L *lua.LState, max int, build func(L *lua.LState, n int)) int {
	n := L.GetTop()
	total := 0
	parts := make([]string, n)
	for i := 1; i <= n; i++ {
		switch x := L.Get(i).(type) {
		case lua.LString:
			parts[i-1] = string(x)
		case lua.LNumber:
			parts[i-1] = formatNumber(float64(x))
		default:
			L.RaiseError("attempt to concatenate a %s value", x.Type().String())
		}
		total += len(parts[i-1])
		if total > max {
			L.RaiseError("string too long: the playground allows %d bytes", max)
		}
	}
	build(L, total)
	L.Push(lua.LString(strings.Join(parts, "")))
	return 1
}

// lua51Header is how Lua 5.1 starts a dump on a 64-bit machine: its
// signature, version 5.1, the official format, little-endian, and the
// sizes of int, size_t, an instruction and a number, which is no
// integer.
const lua51Header = "\x1bLuaQ\x00\x01\x04\x08\x04\x08\x00"
