package luaredis

import (
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// A library's code runs twice over in Redis 7: once when FUNCTION LOAD
// runs its top level, which may only register functions (redis.log and
// the version constants aside: no other global is there), and again and
// again when FCALL calls what it registered, which sees the globals an
// EVAL script sees, without KEYS and ARGV. Redis swaps what the one
// globals table reads through to; so does libEnv here, as library
// functions keep the environment they were made in.

// libChunkName is the name Redis 7 gives every library's code; errors
// point at user_function:LINE.
const libChunkName = "user_function"

// loadCtx collects what a library's top level registers.
type loadCtx struct {
	funcs  []libFunction
	protos map[string]*lua.LFunction // by exact name
}

// installLibraryEnv builds the environment library code runs in: libEnv,
// read-only, reading through libMeta's __index to the load-time API
// (libAPI, only redis with register_function, log and the constants)
// while a library loads, and to the globals while one of its functions
// runs.
func (v *vm) installLibraryEnv() {
	L := v.L
	missing := L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("Script attempted to access nonexistent global variable '%s'", L.ToString(2))
		return 0
	})
	errMeta := L.CreateTable(0, 2)
	errMeta.RawSetString("__index", missing)
	errMeta.RawSetString("__metatable", lua.LFalse)
	v.protected[errMeta] = true

	red := L.CreateTable(0, 10)
	red.RawSetString("register_function", L.NewFunction(v.registerFunction))
	runtime := v.redisTable()
	for _, name := range []string{"log", "LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING", "REDIS_VERSION", "REDIS_VERSION_NUM"} {
		red.RawSetString(name, runtime.RawGetString(name))
	}
	L.SetMetatable(red, errMeta)
	api := L.CreateTable(0, 2)
	api.RawSetString("redis", v.readonly(red))
	// .. is compiled into a call of this global (see rewriteConcat), so
	// the top level needs it as much as a function does.
	api.RawSetString(concatFunc, v.globals.RawGetString(concatFunc))
	L.SetMetatable(api, errMeta)
	v.protected[api] = true
	v.libAPI = api

	v.libEnv = L.CreateTable(0, 0)
	v.libMeta = L.CreateTable(0, 3)
	v.libMeta.RawSetString("__index", v.globals)
	v.libMeta.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError(readonlyMsg)
		return 0
	}))
	v.libMeta.RawSetString("__metatable", lua.LFalse)
	L.SetMetatable(v.libEnv, v.libMeta)
	v.protected[v.libEnv] = true
	v.protected[v.libMeta] = true
}

// instantiate runs lib's top level, as FUNCTION LOAD does, and returns
// what it registered; err is what it raised, with Redis's wording of a
// load error as its message (see loadError). The caller has begun a run,
// so that the watchdog bounds the code.
func (v *vm) instantiate(lib *library) (*loadCtx, error) {
	L := v.L
	lc := &loadCtx{protos: map[string]*lua.LFunction{}}
	v.loading = lc
	v.libMeta.RawSetString("__index", v.libAPI)
	defer func() {
		v.loading = nil
		v.libMeta.RawSetString("__index", v.globals)
	}()
	fn := L.NewFunctionFromProto(lib.proto)
	fn.Env = v.libEnv
	L.Push(fn)
	if err := L.PCall(0, 0, nil); err != nil {
		var obj lua.LValue = lua.LString(err.Error())
		if apiErr, ok := err.(*lua.ApiError); ok {
			obj = apiErr.Object
		}
		return nil, &loadError{msg: loadErrorText(lua51Error(obj))}
	}
	return lc, nil
}

// loadError is a library whose top level raised an error.
type loadError struct{ msg string }

func (e *loadError) Error() string { return e.msg }

// loadErrorText is Redis's luaExtractErrorInformation of an error raised
// while a library loads: an error table's err text, or "ERR " and the
// message.
func loadErrorText(obj lua.LValue) string {
	switch o := obj.(type) {
	case *lua.LTable:
		if s, ok := o.RawGetString("err").(lua.LString); ok {
			return string(s)
		}
		return "ERR unknown error"
	case lua.LNumber:
		return "ERR " + formatNumber(float64(o))
	}
	return "ERR " + obj.String()
}

// registerFunction is redis.register_function, in its two forms:
// (name, callback), and one table of named arguments (function_name,
// callback, flags, description, in any case), read in C Lua's traversal
// order as Redis reads them, so that the first bad one is the one Redis
// names.
func (v *vm) registerFunction(L *lua.LState) int {
	fail := func(msg string) { L.Error(errTable(L, "ERR "+msg), 0) }
	lc := v.loading
	if lc == nil {
		fail("redis.register_function can only be called on FUNCTION LOAD command")
	}
	var (
		f       libFunction
		fn      *lua.LFunction
		hasName bool
	)
	switch L.GetTop() {
	case 1:
		t, ok := L.Get(1).(*lua.LTable)
		if !ok {
			fail("calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).")
		}
		for _, k := range v.order(t) {
			val := t.RawGet(k)
			key, ok := luaString(k)
			if !ok {
				fail("named argument key given to redis.register_function is not a string")
			}
			switch strings.ToLower(key) {
			case "function_name":
				if f.name, hasName = luaString(val); !hasName {
					fail("function_name argument given to redis.register_function must be a string")
				}
			case "description":
				d, ok := luaString(val)
				if !ok {
					fail("description argument given to redis.register_function must be a string")
				}
				f.desc, f.hasDesc = d, true
			case "callback":
				if fn, ok = val.(*lua.LFunction); !ok {
					fail("callback argument given to redis.register_function must be a function")
				}
			case "flags":
				ft, ok := val.(*lua.LTable)
				if !ok {
					fail("flags argument to redis.register_function must be a table representing function flags")
				}
				if f.flags, ok = readFlags(ft); !ok {
					fail("unknown flag given")
				}
			default:
				fail("unknown argument given to redis.register_function")
			}
		}
		if !hasName {
			fail("redis.register_function must get a function name argument")
		}
		if fn == nil {
			fail("redis.register_function must get a callback argument")
		}
	case 2:
		if f.name, hasName = luaString(L.Get(1)); !hasName {
			fail("first argument to redis.register_function must be a string")
		}
		var ok bool
		if fn, ok = L.Get(2).(*lua.LFunction); !ok {
			fail("second argument to redis.register_function must be a function")
		}
	default:
		fail("wrong number of arguments to redis.register_function")
	}
	if !validName(f.name) {
		// Redis 7.0 says "Library" here too.
		fail(badLibraryName)
	}
	if _, dup := lc.protos[f.name]; dup {
		fail("Function already exists in the library")
	}
	lc.funcs = append(lc.funcs, f)
	lc.protos[f.name] = fn
	return 0
}

// readFlags reads a flags table as Redis does: its elements from 1 up to
// the first nil, each a flag name in any case; ok is false for anything
// else.
func readFlags(t *lua.LTable) (scriptFlagSet, bool) {
	var set scriptFlagSet
	for i := 1; ; i++ {
		val := t.RawGetInt(i)
		if val == lua.LNil {
			return set, true
		}
		s, ok := luaString(val)
		if !ok {
			return 0, false
		}
		known := false
		for bit, name := range shebangFlags {
			if strings.EqualFold(name, s) {
				set |= 1 << bit
				known = true
				break
			}
		}
		if !known {
			return 0, false
		}
	}
}

// luaString is lua_isstring and lua_tostring: a string, or a number as
// Lua 5.1 writes it.
func luaString(x lua.LValue) (string, bool) {
	switch x := x.(type) {
	case lua.LString:
		return string(x), true
	case lua.LNumber:
		return formatNumber(float64(x)), true
	}
	return "", false
}
