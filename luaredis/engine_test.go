package luaredis

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/testenv"
	"github.com/locklab/locklab/resp"
)

// mapCaller is a tiny Redis for scripts: GET, SET, DEL and INCR on a map,
// PING, and Redis's script error for anything else.
type mapCaller struct {
	data  map[string]string
	calls [][]string
}

func newMapCaller() *mapCaller { return &mapCaller{data: map[string]string{}} }

func (c *mapCaller) Call(argv []string, readOnly bool) resp.Value {
	c.calls = append(c.calls, argv)
	switch strings.ToUpper(argv[0]) {
	case "GET":
		if v, ok := c.data[argv[1]]; ok {
			return resp.Str(v)
		}
		return resp.Null()
	case "SET":
		if readOnly {
			return resp.Err("ERR Write commands are not allowed from read-only scripts.")
		}
		c.data[argv[1]] = argv[2]
		return resp.OK()
	case "DEL":
		_, ok := c.data[argv[1]]
		delete(c.data, argv[1])
		return resp.Int(boolInt(ok))
	case "INCR":
		return resp.Err("WRONGTYPE Operation against a key holding the wrong kind of value")
	case "PING":
		return resp.StatusValue("PONG")
	case "LIST":
		return resp.Arr(resp.Str("a"), resp.Null(), resp.Int(3), resp.Arr())
	}
	return resp.Err("ERR Unknown Redis command called from script")
}

// eval runs src with EVAL and the given numkeys and arguments.
func eval(t *testing.T, e *Engine, c Caller, src string, args ...string) resp.Value {
	t.Helper()
	if len(args) == 0 {
		args = []string{"0"}
	}
	return e.Do(context.Background(), c, append([]string{"EVAL", src}, args...))
}

func TestEvalReplies(t *testing.T) {
	release := "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end"
	for _, tt := range []struct {
		name string
		src  string
		args []string
		want resp.Value
	}{
		{"release with the right token", release, []string{"1", "lock", "tok"}, resp.Int(1)},
		{"release with a wrong token", release, []string{"1", "lock", "other"}, resp.Int(0)},
		{"string", "return 'hi'", nil, resp.Str("hi")},
		{"number truncated", "return 3.99", nil, resp.Int(3)},
		{"negative number truncated", "return -3.99", nil, resp.Int(-3)},
		{"huge number", "return 1e20", nil, resp.Int(-9223372036854775808)},
		{"NaN", "return 0/0", nil, resp.Int(-9223372036854775808)},
		{"true", "return true", nil, resp.Int(1)},
		{"false", "return false", nil, resp.Null()},
		{"nil", "return nil", nil, resp.Null()},
		{"function", "return print", nil, resp.Err("ERR user_script:1: Script attempted to access nonexistent global variable 'print' script: 5edd98b5ac4d3f5e1c9a53bd9e0a3d1b9a5b3bd1, on @user_script:1.")},
		{"array up to the first nil", "return {1, 'two', nil, 4}", nil, resp.Arr(resp.Int(1), resp.Str("two"))},
		{"nested", "return {1, {2, false}, {}}", nil, resp.Arr(resp.Int(1), resp.Arr(resp.Int(2), resp.Null()), resp.Arr())},
		{"error table", "return {err='bad thing'}", nil, resp.Err("bad thing")},
		{"status table", "return {ok='FINE'}", nil, resp.StatusValue("FINE")},
		{"err must be a string", "return {err=1}", nil, resp.Arr()},
		{"error_reply adds ERR", "return redis.error_reply('x')", nil, resp.Err("ERR x")},
		{"error_reply keeps a code", "return redis.error_reply('MY bad')", nil, resp.Err("MY bad")},
		{"error_reply drops a dash", "return redis.error_reply('-OOPS no')", nil, resp.Err("OOPS no")},
		{"error_reply without argument", "return redis.error_reply()", nil, resp.Err("ERR wrong number or type of arguments")},
		{"status_reply", "return redis.status_reply('FINE')", nil, resp.StatusValue("FINE")},
		{"sha1hex", "return redis.sha1hex('')", nil, resp.Str("da39a3ee5e6b4b0d3255bfef95601890afd80709")},
		{"sha1hex of a number", "return redis.sha1hex(12)", nil, resp.Str("7b52009b64fd0a2a49e6d8a939753077792b0554")},
		{"status from call", "return redis.call('PING')", nil, resp.StatusValue("PONG")},
		{"status as table", "return redis.call('PING').ok", nil, resp.Str("PONG")},
		{"nil from call is false", "return type(redis.call('GET', 'nokey'))", nil, resp.Str("boolean")},
		{"array from call", "return redis.call('LIST')", nil, resp.Arr(resp.Str("a"), resp.Null(), resp.Int(3), resp.Arr())},
		{"pcall returns the error table", "return redis.pcall('INCR', 'k')", nil, resp.Err("WRONGTYPE Operation against a key holding the wrong kind of value")},
		{"pcall error field", "return redis.pcall('INCR', 'k').err", nil, resp.Str("WRONGTYPE Operation against a key holding the wrong kind of value")},
		{"Lua pcall hands back err", "return {pcall(redis.call, 'nosuch')}", nil, resp.Arr(resp.Null(), resp.Str("ERR Unknown Redis command called from script"))},
		{"Lua pcall of error table", "local ok, e = pcall(error, {err='boo'}) return e", nil, resp.Str("boo")},
		{"KEYS and ARGV", "return {KEYS[1], KEYS[2], ARGV[1], #ARGV}", []string{"2", "k1", "k2", "a1", "a2"}, resp.Arr(resp.Str("k1"), resp.Str("k2"), resp.Str("a1"), resp.Int(2))},
		{"numbers to call as %.17g", "redis.call('SET', 'f', 0.1) return redis.call('GET', 'f')", nil, resp.Str("0.10000000000000001")},
		{"tostring as %.14g", "return tostring(1/3) .. ' ' .. 1e15 .. ' ' .. 100", nil, resp.Str("0.33333333333333 1e+15 100")},
		{"unpack", "return {unpack({1, 2, 3})}", nil, resp.Arr(resp.Int(1), resp.Int(2), resp.Int(3))},
		{"loadstring", "return loadstring('return 1 + 1')()", nil, resp.Int(2)},
		{"version", "return redis.REDIS_VERSION", nil, resp.Str("7.0.15")},
		{"self-containing table", "local t = {} t[1] = t return #tostring(t) > 0", nil, resp.Int(1)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := NewEngine(Options{})
			c := newMapCaller()
			c.data["lock"] = "tok"
			c.data["f"] = ""
			got := eval(t, e, c, tt.src, tt.args...)
			if tt.name == "function" {
				// print is removed, so this is an error; check the shape only.
				if !strings.Contains(got.Str, "nonexistent global variable 'print'") {
					t.Errorf("EVAL %q = %v; want the nonexistent global error", tt.src, got)
				}
				return
			}
			if got.String() != tt.want.String() || got.Kind != tt.want.Kind {
				t.Errorf("EVAL %q = %v; want %v", tt.src, got, tt.want)
			}
		})
	}
}

func TestEvalErrors(t *testing.T) {
	for _, tt := range []struct {
		name, src, want string
	}{
		{"nonexistent global", "return x", "ERR user_script:1: Script attempted to access nonexistent global variable 'x' script: %s, on @user_script:1."},
		{"global assignment", "x = 5", "ERR user_script:1: Attempt to modify a readonly table script: %s, on @user_script:1."},
		{"library change", "string.rep = nil", "ERR user_script:1: Attempt to modify a readonly table script: %s, on @user_script:1."},
		{"rawset on _G", "rawset(_G, 'y', 1)", "ERR Attempt to modify a readonly table script: %s, on @user_script:1."},
		{"setmetatable on _G", "setmetatable(_G, nil)", "ERR Attempt to modify a readonly table script: %s, on @user_script:1."},
		{"string metatable", "getmetatable('').__index = nil", "ERR user_script:1: Attempt to modify a readonly table script: %s, on @user_script:1."},
		{"error string", "\n\nerror('boom')", "ERR user_script:3: boom script: %s, on @user_script:3."},
		{"error number", "error(123)", "ERR user_script:1: 123 script: %s, on @user_script:1."},
		{"error nil", "error()", "ERR nil script: %s, on @user_script:1."},
		{"error table", "local function f()\n error({err='MY boom'})\nend\nf()", "MY boom script: %s, on @user_script:2."},
		{"error table number", "error({err=5})", "5 script: %s, on @user_script:1."},
		{"redis.call error", "\nreturn redis.call('nosuch')", "ERR Unknown Redis command called from script script: %s, on @user_script:2."},
		{"redis.call WRONGTYPE", "return redis.call('INCR', 'k')", "WRONGTYPE Operation against a key holding the wrong kind of value script: %s, on @user_script:1."},
		{"redis.call without arguments", "return redis.call()", "ERR Please specify at least one argument for this redis lib call script: %s, on @user_script:1."},
		{"redis.call with a table", "return redis.call('SET', 'a', {})", "ERR Lua redis lib command arguments must be strings or integers script: %s, on @user_script:1."},
		{"sha1hex arity", "return redis.sha1hex()", "ERR wrong number of arguments script: %s, on @user_script:1."},
		{"unpack too many", "return unpack({}, 1, 1e6)", "ERR user_script:1: too many results to unpack script: %s, on @user_script:1."},
		{"concatenate nil", "return nil .. 'x'", "ERR user_script:1: attempt to concatenate a nil value script: %s, on @user_script:1."},
		{"compile error", "return 1 +", "ERR Error compiling script (new function): user_script:1: unexpected symbol near '<eof>'"},
		{"compile error line", "local a = 1\nlocal = 2", "ERR Error compiling script (new function): user_script:2: '<name>' expected near '='"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := NewEngine(Options{})
			got := eval(t, e, newMapCaller(), tt.src)
			want := tt.want
			if strings.Contains(want, "%s") {
				want = strings.Replace(want, "%s", sha1hex(tt.src), 1)
			}
			if got.Kind != resp.Error || got.Str != want {
				t.Errorf("EVAL %q = %v; want -%s", tt.src, got, want)
			}
		})
	}
}

// TestSandboxedGlobals checks that scripts see Redis 7's library and
// nothing that reaches files, modules, the process or the collector.
func TestSandboxedGlobals(t *testing.T) {
	e := NewEngine(Options{})
	for _, name := range []string{"os", "io", "debug", "require", "package", "module", "dofile", "loadfile", "print", "getfenv", "setfenv", "newproxy", "_GOPHER_LUA_VERSION", "coroutine", "channel"} {
		got := eval(t, e, newMapCaller(), "return "+name)
		if !strings.Contains(got.Str, "nonexistent global variable '"+name+"'") {
			t.Errorf("EVAL \"return %s\" = %v; want the nonexistent global error", name, got)
		}
	}
	for _, src := range []string{
		"return string.dump(function() end) == '\\27LuaQ\\0\\1\\4\\8\\4\\8\\0'",
		"return loadstring(string.dump(function() return 1 end)) == nil",
		"return collectgarbage('collect') == 0",
		"return type(math.floor) == 'function' and type(table.insert) == 'function' and type(string.format) == 'function'",
		"return ('x'):rep(3) == 'xxx'",
		"local f = loadstring('y = 1') local ok = pcall(f) return not ok",
		"return _G.redis ~= nil and _VERSION == 'Lua 5.1'",
	} {
		if got := eval(t, e, newMapCaller(), src); got.Kind != resp.Integer || got.Int != 1 {
			t.Errorf("EVAL %q = %v; want 1", src, got)
		}
	}
}

func TestEvalReadOnly(t *testing.T) {
	e := NewEngine(Options{})
	c := newMapCaller()
	got := e.Do(context.Background(), c, []string{"EVAL_RO", "return redis.call('SET', 'a', '1')", "0"})
	want := "ERR Write commands are not allowed from read-only scripts. script: " + sha1hex("return redis.call('SET', 'a', '1')") + ", on @user_script:1."
	if got.Str != want {
		t.Errorf("EVAL_RO = %v; want -%s", got, want)
	}
}

func TestScriptCommands(t *testing.T) {
	e := NewEngine(Options{MaxScripts: 2})
	c := newMapCaller()
	do := func(argv ...string) resp.Value { return e.Do(context.Background(), c, argv) }
	for _, tt := range []struct {
		argv []string
		want string
	}{
		{[]string{"SCRIPT", "LOAD", "return 'one'"}, `"` + sha1hex("return 'one'") + `"`},
		{[]string{"EVALSHA", sha1hex("return 'one'"), "0"}, `"one"`},
		{[]string{"EVALSHA", strings.ToUpper(sha1hex("return 'one'")), "0"}, `"one"`},
		{[]string{"SCRIPT", "EXISTS", sha1hex("return 'one'"), "nope"}, "[:1 :0]"},
		{[]string{"EVAL", "return 'two'", "0"}, `"two"`},
		{[]string{"EVAL", "return 'three'", "0"}, `"three"`},
		// The cache holds two scripts, so 'one' was forgotten.
		{[]string{"EVALSHA", sha1hex("return 'one'"), "0"}, "-NOSCRIPT No matching script. Please use EVAL."},
		{[]string{"EVALSHA", sha1hex("return 'three'"), "0"}, `"three"`},
		{[]string{"SCRIPT", "FLUSH", "nope"}, "-ERR SCRIPT FLUSH only support SYNC|ASYNC option"},
		{[]string{"SCRIPT", "FLUSH", "ASYNC"}, "+OK"},
		{[]string{"EVALSHA", sha1hex("return 'three'"), "0"}, "-NOSCRIPT No matching script. Please use EVAL."},
		{[]string{"SCRIPT", "KILL"}, "-NOTBUSY No scripts in execution right now."},
		{[]string{"SCRIPT", "LOAD", "return +"}, "-ERR Error compiling script (new function): user_script:1: unexpected symbol near '+'"},
		{[]string{"EVAL", "return 1", "x"}, "-ERR value is not an integer or out of range"},
		{[]string{"EVAL", "return 1", "01"}, "-ERR value is not an integer or out of range"},
		{[]string{"EVAL", "return 1", "-1"}, "-ERR Number of keys can't be negative"},
		{[]string{"EVAL", "return 1", "2", "a"}, "-ERR Number of keys can't be greater than number of args"},
	} {
		if got := do(tt.argv...); got.String() != tt.want {
			t.Errorf("%q = %v; want %s", tt.argv, got, tt.want)
		}
	}
}

func TestReleaseKeepsScripts(t *testing.T) {
	e := NewEngine(Options{})
	c := newMapCaller()
	sha, err := e.Load("return ARGV[1]")
	if err != nil {
		t.Fatal(err)
	}
	e.Release()
	if got := e.Do(context.Background(), c, []string{"EVALSHA", sha, "0", "back"}); got.String() != `"back"` {
		t.Errorf("EVALSHA after Release = %v; want \"back\"", got)
	}
	if got := e.Scripts(); len(got) != 1 || got[0] != "return ARGV[1]" {
		t.Errorf("Scripts() = %q; want the loaded script", got)
	}
}

func TestSharedCache(t *testing.T) {
	shared := NewCache(0)
	a, b := NewEngine(Options{Shared: shared}), NewEngine(Options{Shared: shared})
	for _, e := range []*Engine{a, b} {
		if got := eval(t, e, newMapCaller(), "return 7"); got.Int != 7 {
			t.Fatalf("EVAL = %v; want 7", got)
		}
	}
	sha := sha1hex("return 7")
	if a.cache[sha] != b.cache[sha] {
		t.Error("two engines compiled the same script twice; want one shared compilation")
	}
}

// TestScriptLimits runs scripts that would hang or exhaust the process
// without the watchdog and the library caps; each must stop with an error
// quickly.
func TestScriptLimits(t *testing.T) {
	limits := Limits{Timeout: 100 * time.Millisecond, MaxAllocBytes: 32 << 20, MaxStringBytes: 64 << 10}
	for _, tt := range []struct {
		name, src, want string
	}{
		{"endless loop", "while true do end", "ERR the playground stopped the script after 100ms"},
		{"pcall cannot catch the deadline", "while true do pcall(function() while true do end end) end", "ERR the playground stopped the script after 100ms"},
		{"doubling a string", "local s = 'x' while true do s = s .. s end", "string too long"},
		{"string.rep", "return string.rep('x', 1e9)", "resulting string too large"},
		{"string.format width", "return string.format('%999999999d', 1)", "invalid format (width or precision too long)"},
		{"string.format arguments", "local s = string.rep('x', 60000) return string.format('%s%s%s', s, s, s)", "resulting string too large"},
		{"gsub growth", "local s = string.rep('x', 1000) return s:gsub('', s)", "resulting string too large"},
		{"gsub function growth", "local s = string.rep('x', 1000) return s:gsub('x', function() return s end)", "resulting string too large"},
		{"table.concat", "local t = {} local s = string.rep('x', 1000) for i = 1, 100 do t[i] = s end return table.concat(t)", "resulting string too large"},
		{"backtracking pattern", "local s = string.rep('a', 50000) return s:find('.-.-.-b')", "pattern too complex"},
		{"deep recursion", "local function f(n) return 1 + f(n + 1) end return f(1)", "stack overflow"},
		{"self-containing reply", "local t = {} t[1] = t return t", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := NewEngine(Options{Limits: limits})
			start := time.Now()
			got := eval(t, e, newMapCaller(), tt.src)
			if d := time.Since(start); d > testenv.HangGuard {
				t.Errorf("EVAL %q took %v; want it stopped by a limit", tt.src, d)
			}
			if tt.want == "" {
				return
			}
			if got.Kind != resp.Error || !strings.Contains(got.Str, tt.want) {
				t.Errorf("EVAL %q = %v; want an error containing %q", tt.src, got, tt.want)
			}
			// The engine is usable after a stopped script.
			if got := eval(t, e, newMapCaller(), "return 1"); got.Int != 1 {
				t.Errorf("EVAL after %q = %v; want 1", tt.src, got)
			}
		})
	}
}

func TestScriptMemoryBudget(t *testing.T) {
	e := NewEngine(Options{Limits: Limits{Timeout: 20 * time.Second, MaxAllocBytes: 16 << 20}})
	src := "local t = {} local i = 0 while true do i = i + 1 t[i] = {i, i, i} end"
	got := eval(t, e, newMapCaller(), src)
	if want := "ERR the playground stopped the script: it allocated more than 16 MiB"; !strings.HasPrefix(got.Str, want) {
		t.Errorf("EVAL %q = %v; want an error starting %q", src, got, want)
	}
}

func TestScriptCancelledContext(t *testing.T) {
	e := NewEngine(Options{Limits: Limits{Timeout: time.Minute}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got := e.Do(ctx, newMapCaller(), []string{"EVAL", "while true do end", "0"})
	if !strings.Contains(got.Str, "cancelled") {
		t.Errorf("EVAL with a cancelled context = %v; want a cancelled error", got)
	}
}
