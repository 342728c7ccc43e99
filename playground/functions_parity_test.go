package playground

import (
	"fmt"
	"testing"
)

// TestParityFunctions compares with redis-cli + Redis 7.0.15 the Redis 7
// functions: FUNCTION LOAD and its errors, redis.register_function in
// both forms, flags, FCALL and FCALL_RO, FUNCTION LIST, DELETE, FLUSH,
// STATS, KILL and HELP. Redis lists libraries, and a library's
// functions, in its hash tables' order, which changes with every server
// start, so each FUNCTION LIST here shows one library of one function,
// or one whose functions cannot come out in two orders.
func TestParityFunctions(t *testing.T) {
	a := func(line string) parityCase { return parityCase{client: ClientA, line: line} }
	b := func(line string) parityCase { return parityCase{client: ClientB, line: line} }
	diff := func(line, why, own string) parityCase {
		return parityCase{client: ClientA, line: line, differs: why, own: own}
	}
	// load types FUNCTION LOAD of library lib with body after its
	// shebang line.
	load := func(lib, body string) parityCase {
		return a(fmt.Sprintf(`FUNCTION LOAD "#!lua name=%s\n%s"`, lib, body))
	}
	const upvalues = "the playground makes a library's functions afresh for every call, so their upvalues start again each time; Redis keeps them until the library is loaded again"
	const dump = "its payload is Redis's compressed RDB encoding, which the playground does not write or read; FUNCTION LIST WITHCODE shows each library's code, to load again with FUNCTION LOAD"
	cases := []parityCase{
		// The lock's release as a function, called by both clients.
		load("lock", `redis.register_function('release', function(keys, args) if redis.call('GET', keys[1]) == args[1] then return redis.call('DEL', keys[1]) end return 0 end)`),
		a("SET lock:1 tok-a NX PX 30000"),
		b("FCALL release 1 lock:1 tok-b"),
		a("FCALL release 1 lock:1 tok-a"),
		a("FCALL RELEASE 1 lock:1 tok-a"),
		a("GET lock:1"),
		b("FUNCTION LIST"),
		a("FUNCTION LIST WITHCODE"),

		// KEYS and ARGV are the function's two arguments, not globals.
		load("mylib", `redis.register_function('f', function(keys, args) return {keys, args} end)`),
		a("FCALL f 2 a b c d"),
		a("FCALL F 0"),
		a("FCALL f 0 x"),
		a("FCALL f 3 a b c"),
		load("r1", `redis.register_function('kk', function(keys, args) return KEYS end)`),
		a("FCALL kk 0"),
		load("l5", `redis.register_function('a5', function(k, a) return #k + #a end)`),
		a("FCALL a5 2 x y z"),

		// numkeys and the name.
		a("FCALL f"),
		a("FCALL"),
		a("FCALL_RO"),
		a("FCALL f x"),
		a("FCALL f 2 a"),
		a("FCALL f -1"),
		a("FCALL f 01 a"),
		a("FCALL f 1.5 a"),
		a("FCALL nosuch x"),
		a("FCALL nosuch 0"),
		a("FCALL_RO nosuch 0"),

		// The shebang line.
		a(`FUNCTION LOAD "#!lua name=mylib\nredis.register_function('f2', function(keys, args) return 1 end)"`),
		a(`FUNCTION LOAD "redis.register_function('f', function(keys, args) return 1 end)"`),
		a(`FUNCTION LOAD "#!lua name=x"`),
		a(`FUNCTION LOAD "#!lua"`),
		a(`FUNCTION LOAD "#!lua\n"`),
		a(`FUNCTION LOAD "#!foo name=x\n"`),
		a(`FUNCTION LOAD "#!LUA name=x\nredis.register_function('g', function() return 1 end)"`),
		a(`FUNCTION LOAD "#!lua NAME=y\nredis.register_function('g2', function() return 1 end)"`),
		a(`FUNCTION LOAD "#!lua name=x name=y\n"`),
		a(`FUNCTION LOAD "#!lua name=x foo=bar\n"`),
		a(`FUNCTION LOAD "#!lua name=bad-name\n"`),
		a(`FUNCTION LOAD "#!lua name=\n"`),
		a(`FUNCTION LOAD "#!lua name=l16 \nredis.register_function('c5', function() return 1 end)"`),
		a(`FUNCTION LOAD "#!lua  name=l17\t\nredis.register_function('c6', function() return 1 end)"`),
		a(`FUNCTION LOAD "#!lua \"name=l18\"\nredis.register_function('c7', function() return 1 end)"`),
		a(`FUNCTION LOAD "#!lua name=l19\r\nredis.register_function('c8', function() return 1 end)"`),
		a(`FUNCTION LOAD "#! name=l20\nredis.register_function('c9', function() return 1 end)"`),
		a(`FUNCTION LOAD "#!lua name=\"x\nredis.register_function('c9', function() return 1 end)"`),
		a(`FUNCTION LOAD "#!lua name=l21 flags=no-writes\nredis.register_function('c9', function() return 1 end)"`),
		a(`FUNCTION LOAD "#!foo name=bad-x\n"`),
		a(`FUNCTION LOAD "#!foo name=mylib\n"`),

		// What the top level may do: register functions, and little else.
		load("z", ``),
		load("z", `local x = 1`),
		load("z", `return 5`),
		load("z", `redis.register_function('f', function() return 1 end)`),
		load("z", `redis.register_function('bad-name', function() return 1 end)`),
		load("z", `redis.register_function('h', function() return 1 end)\nredis.register_function('h', function() return 1 end)`),
		load("z", `redis.call('set','x','y')`),
		load("z", `return string.len('x')`),
		load("z", `error('boom')`),
		load("z", `local x = +`),
		load("z", `x = 1`),
		load("z", `redis.setresp(3)`),
		load("z", `redis.log(redis.LOG_WARNING)`),
		load("z", `redis.log(99, 'x')`),
		load("z", `for _, n in ipairs({'a'}) do end`),
		load("z", `redis.register_function()`),
		load("z", `redis.register_function(1)`),
		load("z", `redis.register_function({})`),
		load("z", `redis.register_function({function_name='k'})`),
		load("z", `redis.register_function({callback=function() end})`),
		load("z", `redis.register_function({function_name='k', callback=function() end, flags={'bogus'}})`),
		load("z", `redis.register_function({function_name='k', callback=function() end, flags='no-writes'})`),
		load("z", `redis.register_function({function_name='k', callback=function() end, foo=1})`),
		load("z", `redis.register_function({function_name='k', callback=1})`),
		load("z", `redis.register_function({function_name={}, callback=function() end})`),
		load("z", `redis.register_function({function_name='k', callback=function() end, description={}})`),
		load("z", `redis.register_function({[1]='k'})`),
		load("z", `redis.register_function({[true]='k'})`),
		load("z", `redis.register_function({function_name='k', callback=function() end, [{}]=1})`),
		load("z", `redis.register_function(1, 2)`),
		load("z", `redis.register_function({}, function() end)`),
		load("z", `redis.register_function('a', function() end, 3)`),
		load("z", `redis.register_function(1.5, function() return 1 end)`),
		load("z", `redis.register_function('', function() return 1 end)`),
		load("z", `redis.register_function('a b', function() return 1 end)`),
		load("z", `redis.register_function{function_name='fl2', callback=function() return 1 end, flags={1}}`),
		load("z", `redis.register_function{function_name='fl3', callback=function() return 1 end, flags={{}}}`),
		load("z", `redis.register_function{[1]='x', function_name='fl6', callback=function() return 1 end}`),
		load("z", `redis.register_function('zzz', function() return 1 end)\nredis.register_function('g', function() return 1 end)`),
		load("z", `local r = redis\nredis.register_function('zz', function() return 1 end)\nr.register_function('f', function() return 1 end)`),
		load("z", `redis.register_function{function_name='k', callback=function() return 1 end, description=1}`),
		a("FUNCTION LIST LIBRARYNAME z"),
		load("d6", `redis.register_function(12, function() return 12 end)`),
		a("FCALL 12 0"),
		load("v", `local v = redis.REDIS_VERSION\nredis.log(redis.LOG_NOTICE, 'loading')\nredis.register_function('ver', function() return {v, redis.REDIS_VERSION_NUM} end)`),
		a("FCALL ver 0"),

		// Flags, and the named form's description.
		load("d8", `redis.register_function{function_name='fl', callback=function() return 1 end, flags={'NO-WRITES', 'allow-oom', 'allow-stale', 'no-cluster', 'allow-cross-slot-keys'}}`),
		a("FUNCTION LIST LIBRARYNAME d8"),
		load("d11", `redis.register_function{function_name='fl4', callback=function() return 1 end, flags={}}`),
		a("FUNCTION LIST LIBRARYNAME d11"),
		load("d12", `redis.register_function{FUNCTION_NAME='fl5', CallBack=function() return 1 end, Description='five'}`),
		a("FUNCTION LIST LIBRARYNAME d12"),
		load("l27", `redis.register_function{function_name='k27', callback=function() return 1 end, flags={'no-writes', 'no-writes'}}`),
		a("FUNCTION LIST LIBRARYNAME l27"),
		load("l28", `redis.register_function{function_name='k28', callback=function() return 1 end, description=''}`),
		a("FUNCTION LIST LIBRARYNAME l28"),

		// FCALL_RO and no-writes.
		load("w", `redis.register_function{function_name='ro', callback=function(keys, args) return redis.call('get', keys[1]) end, flags={'no-writes'}, description='reads'}`),
		a("SET x 1"),
		a("FCALL_RO ro 1 x"),
		a("FCALL ro 1 x"),
		a("FCALL_RO f 0"),
		a("FUNCTION LIST WITHCODE LIBRARYNAME w"),
		load("r10", `redis.register_function{function_name='w1', callback=function(keys, args)\n  return redis.call('set', keys[1], 'v')\nend, flags={'no-writes'}}`),
		a("FCALL w1 1 q"),
		a("FCALL_RO w1 1 q"),
		a("EXISTS q"),
		load("l29", `redis.register_function{function_name='k29', callback=function(k, a) return redis.call('set', 'a', 'b') end, flags={'allow-oom'}}`),
		a("FCALL k29 0"),
		a("FCALL_RO k29 0"),
		a("FCALL_RO K29 0"),
		load("l30", `redis.register_function{function_name='k30', callback=function(k, a) return redis.pcall('set', 'a', 'b') end, flags={'no-writes'}}`),
		a("FCALL k30 0"),

		// Errors raised by functions, and what they return.
		load("r2", `local r = redis\nredis.register_function('rr', function(keys, args) return r.register_function('x', function() end) end)`),
		a("FCALL rr 0"),
		load("r3", `redis.register_function('rf', function(keys, args) return redis.register_function('x', function() end) end)`),
		diff("FCALL rf 0", "gopher-lua does not tell which field was nil, nor that it was nil; Lua 5.1 names it (field 'register_function' (a nil value))",
			"(error) ERR user_function:2: attempt to call a non-function object script: rf, on @user_function:2."),
		load("r4", `redis.register_function('nx', function(keys, args) return redis.nosuch end)`),
		a("FCALL nx 0"),
		load("r5", `local r = redis\nredis.register_function('rc', function(keys, args) return r.call('ping') end)`),
		a("FCALL rc 0"),
		load("r7", `redis.register_function('incr', function(keys, args)\n  return redis.call('incr', keys[1])\nend)`),
		a("SET s x"),
		a("FCALL incr 1 s"),
		a("FCALL incr 1 s2"),
		load("r8", `redis.register_function('e2', function(keys, args)\n  error('boom')\nend)`),
		a("FCALL e2 0"),
		load("r9", `redis.register_function('e3', function(keys, args)\n  return redis.error_reply('MY custom')\nend)\nredis.register_function('e4', function(keys, args)\n  return redis.pcall('incr', 's')\nend)`),
		a("FCALL e3 0"),
		a("FCALL e4 0"),
		load("l6", `redis.register_function('a6', function(k, a) x = 1 end)`),
		a("FCALL a6 0"),
		load("l11", `redis.register_function('c1', function() return _G end)`),
		a("FCALL c1 0"),
		load("l13", `redis.register_function('c2', function() return end)`),
		a("FCALL c2 0"),
		load("l15", `redis.register_function('c4', function(keys, args) return {1, 'two', {3}, false, true, 3.7, redis.status_reply('FINE')} end)`),
		a("FCALL c4 0"),
		load("l22", `redis.register_function('c10', function() return redis.call('FCALL', 'c2', 0) end)`),
		a("FCALL c10 0"),
		load("l23", `redis.register_function('c11', function() return redis.call('FUNCTION', 'LIST') end)`),
		a("FCALL c11 0"),
		load("l24", `local function helper(s) return string.upper(s) end\nredis.register_function('up', function(keys, args) return helper(args[1]) end)`),
		a("FCALL up 0 shout"),
		load("l25", `redis.register_function('js', function(keys, args) return cjson.encode({n = tonumber(args[1])}) end)`),
		a("FCALL js 0 42"),

		// redis.setresp inside a function.
		load("r11", `redis.register_function('p3', function(keys, args)\n  redis.setresp(3)\n  return redis.call('hgetall', keys[1])\nend)`),
		a("HSET hh a 1"),
		a("FCALL p3 1 hh"),
		load("r12", `redis.register_function('p4', function(keys, args)\n  redis.setresp(3)\n  return redis.call('get', 'nokey') == nil\nend)`),
		a("FCALL p4 0"),

		// Upvalues live on in Redis, not in the playground.
		load("l4", `local n = 0\nredis.register_function('cnt', function() n = n + 1 return n end)`),
		a("FCALL cnt 0"),
		diff("FCALL cnt 0", upvalues, "(integer) 1"),

		// Functions outlive FLUSHALL, and scripts FUNCTION FLUSH.
		a("SCRIPT LOAD \"return 'cached'\""),
		a("FLUSHALL"),
		a("FCALL ver 0"),
		a("DBSIZE"),

		// REPLACE, and name collisions with other libraries.
		a(`FUNCTION LOAD`),
		a(`FUNCTION LOAD REPLACE`),
		a(`FUNCTION LOAD FOO "#!lua name=q\n"`),
		a(`FUNCTION LOAD REPLACE REPLACE "#!lua name=r1\nredis.register_function('kk2', function() return 2 end)"`),
		a("FCALL kk 0"),
		a("FCALL kk2 0"),
		a(`FUNCTION LOAD REPLACE "#!lua name=r1\nredis.register_function('ver', function() return 2 end)"`),
		a("FCALL kk2 0"),
		a(`FUNCTION LOAD replace "#!lua name=r1\nerror()"`),
		a("FCALL kk2 0"),
		a(`FUNCTION LOAD REPLACE "#!lua name=r1\nredis.register_function('kk2', function() return 'two' end)"`),
		a("FCALL kk2 0"),
		a(`FUNCTION LOAD REPLACE "#!lua name=brandnew\nredis.register_function('bn', function() return 'new' end)"`),
		a("FCALL bn 0"),
		a("FUNCTION LIST LIBRARYNAME r1 WITHCODE"),

		// Not from scripts; queued in transactions.
		a(`EVAL "return redis.call('FCALL', 'ver', 0)" 0`),
		a(`EVAL "return redis.call('FUNCTION', 'LIST')" 0`),
		a(`EVAL "return redis.pcall('FCALL_RO', 'ro', 0)" 0`),
		a("MULTI"),
		a("FCALL ver 0"),
		a("FUNCTION DELETE v"),
		a("FCALL ver 0"),
		a("EXEC"),
		a("MULTI"),
		a("FCALL ver"),
		a("EXEC"),

		// DELETE, LIST's options, STATS, KILL, HELP, FLUSH.
		a("FUNCTION DELETE nosuch"),
		a("FUNCTION DELETE R1"),
		a("FUNCTION DELETE r1"),
		a("FUNCTION DELETE r1"),
		a("FCALL kk2 0"),
		a("FUNCTION DELETE"),
		a("FUNCTION DELETE a b"),
		a("FUNCTION"),
		a("FUNCTION FOO"),
		a("FUNCTION STATS x"),
		a("FUNCTION KILL x"),
		a("FUNCTION KILL"),
		a("function kill"),
		a("FUNCTION LIST LIBRARYNAME"),
		a("FUNCTION LIST foo"),
		a("FUNCTION LIST WITHCODE WITHCODE"),
		a("FUNCTION LIST LIBRARYNAME r* LIBRARYNAME x"),
		a("FUNCTION LIST libraryname nomatch"),
		a("FUNCTION LIST LIBRARYNAME L2[^0-35-9]"),
		a("FUNCTION LIST LIBRARYNAME l2\\4"),
		a("FUNCTION LIST LIBRARYNAME [m]YLIB"),
		a("FUNCTION LIST LIBRARYNAME *ock"),
		a("FUNCTION LIST LIBRARYNAME d1[!1]"),
		a("FUNCTION LIST LIBRARYNAME d1[^1]"),
		a("FUNCTION HELP"),
		a("FUNCTION HELP x"),
		diff("FUNCTION DUMP", dump, "(error) ERR the playground does not support FUNCTION DUMP: "+dump),
		a("FUNCTION DUMP x"),
		a("FUNCTION RESTORE"),
		diff("FUNCTION RESTORE x", dump, "(error) ERR the playground does not support FUNCTION RESTORE: "+dump),
		a("FUNCTION FLUSH foo"),
		a("FUNCTION FLUSH a b"),
		a("FUNCTION FLUSH ASYNC"),
		a("FUNCTION STATS"),
		a("FUNCTION LIST"),
		a("FCALL release 1 lock:1 tok-a"),
		a("SCRIPT EXISTS 7c9ee7a8c5b8a1c9c1d0b0e6fdbc2b5f4a3f0c8a"),
		a(`EVALSHA 0f7c5a4bd5d1f7e2bb2aeb9a6a1d6fa93d02cc7b 0`),
		load("one", `redis.register_function('o', function() return 1 end)`),
		load("two", `redis.register_function('t', function() return 2 end)`),
		a("FUNCTION STATS"),
		a("FUNCTION FLUSH sync"),
		a("FUNCTION FLUSH"),
		a("FUNCTION STATS"),
	}
	if len(cases) < 100 {
		t.Fatalf("only %d function parity cases; want at least 100", len(cases))
	}
	runParityCases(t, cases)
}
