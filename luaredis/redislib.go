package luaredis

import (
	"crypto/sha1"
	"encoding/hex"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/locklab/locklab/resp"
)

// redisTable builds the redis table of Redis 7.0 scripts. Logging,
// replication and debugging calls check their arguments as Redis does and
// then do nothing, as they have no effect a learner could see.
func (v *vm) redisTable() *lua.LTable {
	L := v.L
	t := L.CreateTable(0, 32)
	fn := func(name string, f lua.LGFunction) { t.RawSetString(name, L.NewFunction(f)) }
	fn("call", func(L *lua.LState) int { return v.call(L, true) })
	fn("pcall", func(L *lua.LState) int { return v.call(L, false) })
	fn("error_reply", func(L *lua.LState) int {
		s, ok := L.Get(1).(lua.LString)
		if L.GetTop() != 1 || !ok {
			L.Push(errTable(L, "ERR wrong number or type of arguments"))
			return 1
		}
		L.Push(errTable(L, errorReplyText(string(s))))
		return 1
	})
	fn("status_reply", func(L *lua.LState) int {
		s, ok := L.Get(1).(lua.LString)
		if L.GetTop() != 1 || !ok {
			L.Push(errTable(L, "ERR wrong number or type of arguments"))
			return 1
		}
		r := L.CreateTable(0, 1)
		r.RawSetString("ok", s)
		L.Push(r)
		return 1
	})
	fn("sha1hex", func(L *lua.LState) int {
		if L.GetTop() != 1 {
			L.Error(errTable(L, "ERR wrong number of arguments"), 0)
		}
		var s string
		switch x := L.Get(1).(type) {
		case lua.LString:
			s = string(x)
		case lua.LNumber:
			s = formatNumber(float64(x))
		}
		L.Push(lua.LString(sha1hex(s)))
		return 1
	})
	fn("log", func(L *lua.LState) int {
		if L.GetTop() < 2 {
			L.Error(errTable(L, "ERR redis.log() requires two arguments or more."), 0)
		}
		level, ok := luaToNumber(L.Get(1))
		if !ok {
			L.Error(errTable(L, "ERR First argument must be a number (log level)."), 0)
		}
		if l := cInt(level); l < 0 || l > 3 {
			L.Error(errTable(L, "ERR Invalid debug level."), 0)
		}
		return 0
	})
	fn("setresp", func(L *lua.LState) int {
		if L.GetTop() != 1 {
			L.Error(errTable(L, "ERR redis.setresp() requires one argument."), 0)
		}
		n, _ := luaToNumber(L.Get(1))
		proto := cInt(n)
		if proto != 2 && proto != 3 {
			L.Error(errTable(L, "ERR RESP version must be 2 or 3."), 0)
		}
		if r := v.run; r != nil {
			r.resp3 = proto == 3
		}
		return 0
	})
	fn("set_repl", func(L *lua.LState) int {
		if L.GetTop() != 1 {
			// Redis's words, though it wants one.
			L.Error(errTable(L, "ERR redis.set_repl() requires two arguments."), 0)
		}
		n, _ := luaToNumber(L.Get(1))
		if flags := cInt(n); flags&^3 != 0 {
			L.Error(errTable(L, "ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE."), 0)
		}
		return 0
	})
	fn("acl_check_cmd", func(L *lua.LState) int {
		argv, msg := callArgs(L)
		if msg != "" {
			L.Error(errTable(L, msg), 0)
		}
		if r := v.run; r != nil {
			if lk, ok := r.caller.(CommandLookup); ok && !lk.LookupCommand(argv) {
				L.Error(errTable(L, "ERR Invalid command passed to redis.acl_check_cmd()"), 0)
			}
		}
		// The playground's one user is Redis's default user, who may
		// run every command.
		L.Push(lua.LTrue)
		return 1
	})
	fn("replicate_commands", func(L *lua.LState) int { L.Push(lua.LTrue); return 1 })
	fn("breakpoint", func(L *lua.LState) int { L.Push(lua.LFalse); return 1 })
	fn("debug", func(L *lua.LState) int { return 0 })
	for name, n := range map[string]int{
		"LOG_DEBUG": 0, "LOG_VERBOSE": 1, "LOG_NOTICE": 2, "LOG_WARNING": 3,
		"REPL_NONE": 0, "REPL_AOF": 1, "REPL_SLAVE": 2, "REPL_REPLICA": 2, "REPL_ALL": 3,
		"REDIS_VERSION_NUM": redisVersionNum,
	} {
		t.RawSetString(name, lua.LNumber(n))
	}
	t.RawSetString("REDIS_VERSION", lua.LString(redisVersion))
	return t
}

// call is redis.call (raise) and redis.pcall: it runs a command through the
// run's Caller. An error reply is raised as an error table by redis.call and
// returned as one by redis.pcall.
func (v *vm) call(L *lua.LState, raise bool) int {
	fail := func(msg string) int {
		t := errTable(L, msg)
		if raise {
			L.Error(t, 0)
		}
		L.Push(t)
		return 1
	}
	argv, msg := callArgs(L)
	if msg != "" {
		return fail(msg)
	}
	r := v.run
	if r == nil {
		return fail("ERR redis.call used outside a script")
	}
	r.watchdog.work += callWork
	var reply resp.Value
	if c3, ok := r.caller.(RESP3Caller); ok && r.resp3 {
		reply = c3.CallRESP3(argv, r.readOnly)
	} else {
		reply = r.caller.Call(argv, r.readOnly)
	}
	if reply.IsError() {
		return fail(reply.Str)
	}
	// A reply becomes Lua strings and tables: as many bytes as a string
	// built by the libraries, and some for each element.
	v.build(L, len(reply.Str)+64*len(reply.Elems))
	L.Push(toLua(L, reply, r.resp3))
	return 1
}

// callArgs reads the arguments of redis.call, redis.pcall and
// redis.acl_check_cmd as Redis does: strings, and numbers written with
// %.17g. msg is Redis's error for anything else, or for no argument.
func callArgs(L *lua.LState) (argv []string, msg string) {
	n := L.GetTop()
	if n == 0 {
		return nil, "ERR Please specify at least one argument for this redis lib call"
	}
	argv = make([]string, n)
	for i := range argv {
		switch x := L.Get(i + 1).(type) {
		case lua.LString:
			argv[i] = string(x)
		case lua.LNumber:
			argv[i] = formatArg(float64(x))
		default:
			return nil, "ERR Lua redis lib command arguments must be strings or integers"
		}
	}
	return argv, ""
}

// luaToNumber is lua_tonumber: a number, or a string that reads as one;
// anything else is 0 and not ok.
func luaToNumber(x lua.LValue) (float64, bool) {
	switch x := x.(type) {
	case lua.LNumber:
		return float64(x), true
	case lua.LString:
		if f, err := parseLuaNumber(string(x)); err == nil {
			return f, true
		}
	}
	return 0, false
}

func errTable(L *lua.LState, msg string) *lua.LTable {
	t := L.CreateTable(0, 1)
	t.RawSetString("err", lua.LString(msg))
	return t
}

// errorReplyText is what redis.error_reply makes of its argument in Redis
// 7.0: a leading "-" is dropped, the first word is the error code if there
// is more than one word, and "ERR" is the code otherwise.
func errorReplyText(s string) string {
	s = strings.TrimPrefix(s, "-")
	code, msg := "ERR", s
	if i := strings.IndexByte(s, ' '); i >= 0 {
		code, msg = s[:i], s[i+1:]
	}
	return code + " " + strings.Trim(msg, "\r\n")
}

func sha1hex(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}
