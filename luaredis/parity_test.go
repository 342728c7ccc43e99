package luaredis

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/locklab/locklab/internal/redistest"
)

// parityCase is one command line run on a real redis-server and on an
// engine whose redis.call goes to that server: setup first, on a flushed
// server, then argv (EVAL, EVALSHA, EVAL_RO, SCRIPT LOAD ...).
type parityCase struct {
	name  string
	setup [][]string
	argv  []string
}

// evalCase is EVAL src with no keys and args as ARGV.
func evalCase(name, src string, args ...string) parityCase {
	return parityCase{name: name, argv: append([]string{"EVAL", src, "0"}, args...)}
}

// runParity runs each case against a fresh redis-server and one engine, in
// order (math.random's generator runs on in both from case to case), and
// fails for every reply that differs from the server's, byte for byte as
// a RESP2 client reads it.
func runParity(t *testing.T, cases []parityCase) {
	t.Helper()
	addr := redistest.Start(t)
	client := dialRedis(t, addr)
	caller := newRedisCaller(t, addr)
	e := NewEngine(Options{})
	for _, tc := range cases {
		client.do("FLUSHALL")
		for _, s := range tc.setup {
			client.do(s...)
		}
		want := client.do(tc.argv...)
		client.do("FLUSHALL")
		for _, s := range tc.setup {
			client.do(s...)
		}
		got := e.Do(context.Background(), caller, tc.argv)
		if g, w := string(got.AppendRESP(nil)), string(want.AppendRESP(nil)); g != w {
			t.Errorf("%s: %q = %q; want %q", tc.name, tc.argv, g, w)
		}
	}
}

// TestParityRedis7Scripting checks against a real Redis 7.0 the behaviour
// of scripts that Redis 7 changed or that Lua 5.1 gives and gopher-lua
// does not: the version number, numeric strings as numbers, math.random,
// key order, shebang flags, RESP3 and the redis table's checks.
func TestParityRedis7Scripting(t *testing.T) {
	cases := []parityCase{
		evalCase("version num", "return redis.REDIS_VERSION_NUM"),
		evalCase("version", "return redis.REDIS_VERSION"),
		evalCase("version as hex", "return string.format('%08x', redis.REDIS_VERSION_NUM)"),
	}
	cases = append(cases, numericCases()...)
	cases = append(cases, randomCases()...)
	cases = append(cases, orderCases()...)
	cases = append(cases, shebangCases()...)
	cases = append(cases, resp3Cases()...)
	cases = append(cases, redisLibCases()...)
	if len(cases) < 80 {
		t.Fatalf("%d cases; want 80 or more", len(cases))
	}
	runParity(t, cases)
}

func numericCases() []parityCase {
	var cs []parityCase
	for _, src := range []string{
		"return string.sub('hello', '2', ' 3 ')",
		"return string.sub('hello', ARGV[1])",
		"return string.sub('hello', 'x')",
		"return string.sub('hello', '2', 'y')",
		"return string.sub('hello', {})",
		"return string.sub('hello')",
		"return string.sub('hello', 2.9)",
		"return string.rep('ab', '0x3')",
		"return string.rep('ab', ' 2 ')",
		"return string.rep('ab', 'two')",
		"return string.char('72', '105')",
		"return string.char('72', 'i')",
		"return string.byte('abc', '2')",
		"return {string.byte('abc', '1', '3')}",
		"return string.find('hello', 'l', '4')",
		"return select('2', 'a', 'b')",
		"return select('#', 'a', 'b')",
		"return select('#x', 'a', 'b')",
		"return select('-1', 'a', 'b')",
		"return select('z', 'a')",
		"return select(0, 'a')",
		"return table.concat({1, 2, 3}, 5, '2', '3')",
		"return table.concat({'a', 'b', 'c'}, '-', '1', '2')",
		"return table.concat({'a', 'b'}, ',', 'x')",
		"return string.format('%d', '5')",
		"return string.format('%d', ' 0x10 ')",
		"return string.format('%5.1f', '2.25')",
		"return string.format('%d', 'x')",
		"return math.floor('3.7')",
		"return math.ceil(ARGV[1])",
		"return math.max('3', 9, '12')",
		"return math.min('3', 9)",
		"return math.max()",
		"return math.abs('-4')",
		"return math.floor('1e2')",
		"return math.floor('')",
		"return math.pow('2', '10')",
		"return math.fmod('7', '3')",
		"return {unpack({1, 2, 3}, '2', '3')}",
		"return {unpack({1, 2, 3}, 'a')}",
		"local t = {1, 2} table.insert(t, '1', 0) return t",
		"local t = {1, 2, 3} table.remove(t, '1') return t",
		"error('boom', '0')",
		"return tostring(math.sqrt('16'))",
		"return string.rep()",
		"return string.rep({}, 'x')",
		"return string.sub()",
		"return string.sub(nil, 1)",
		"return string.sub('abc', 'x')",
		"return string.find()",
		"return string.find('a')",
		"return string.gsub('a')",
		"return string.byte()",
		"return string.byte({}, 'x')",
		"return table.concat()",
		"return table.concat({}, {})",
		"return table.remove()",
		"return table.insert()",
	} {
		cs = append(cs, evalCase("numbers: "+src, src, "2"))
	}
	return cs
}

func randomCases() []parityCase {
	var cs []parityCase
	for _, src := range []string{
		"return tostring(math.random())",
		"return tostring(math.random())",
		"return {math.random(100), math.random(5, 10)}",
		"math.randomseed(42) return {math.random(100), math.random(100)}",
		"return tostring(math.random())",
		"math.randomseed('7') return {math.random(1, 6), math.random(1, 6), math.random(1, 6)}",
		"math.randomseed(-5) return tostring(math.random())",
		"math.randomseed(2^40) return math.random(1000)",
		"math.randomseed(0) return {math.random(-3, 3), math.random(10)}",
		"return math.random(0)",
		"return math.random(5, 1)",
		"return math.random(1, 2, 3)",
		"return math.random('x')",
		"return math.random('10')",
		"return math.random(3, 3)",
		"return math.randomseed()",
		"return math.randomseed('abc')",
		"return math.random(-2147483647, 2147483647)",
	} {
		cs = append(cs, evalCase("random: "+src, src))
	}
	return cs
}

func orderCases() []parityCase {
	var cs []parityCase
	keys := []string{"owner", "token", "expires", "fence", "host", "pid", "ttl", "state", "holder", "id"}
	for n := 1; n <= len(keys); n++ {
		var assign, fields []string
		for i, k := range keys[:n] {
			assign = append(assign, fmt.Sprintf("t.%s = %d", k, i))
			fields = append(fields, fmt.Sprintf("%s = %d", k, i))
		}
		body := strings.Join(assign, " ")
		cs = append(cs,
			evalCase(fmt.Sprintf("order: cjson of %d keys set one by one", n), "local t = {} "+body+" return cjson.encode(t)"),
			evalCase(fmt.Sprintf("order: cmsgpack of %d keys set one by one", n), "local t = {} "+body+" return cmsgpack.pack(t)"),
		)
		// A constructor sizes its table at once: where keys collide,
		// C Lua may place them otherwise than in a table that grew
		// (see lua51Order). These keys collide from 9 on.
		if n <= 8 {
			cs = append(cs, evalCase(fmt.Sprintf("order: constructor of %d keys, encoded and decoded", n), "local t = cjson.decode(cjson.encode({"+strings.Join(fields, ", ")+"})) return cjson.encode(t)"))
		}
	}
	for _, src := range []string{
		"return cjson.encode({owner = ARGV[1], token = 'abc', expires = 30000})",
		"return cjson.encode({a = 1, b = 2, c = 3})",
		"local t = {} t[1] = 'x' t[3] = 'y' t.name = 'z' return cjson.encode(t)",
		"return cjson.encode({10, 20, x = 1, y = 2})",
		"local t = {} t[1.5] = 'a' t[2.5] = 'b' t[-1] = 'c' return cjson.encode(t)",
		"local t = {} t[true] = 1 t.x = 2 return cmsgpack.pack(t)",
		"local t = {} t[100] = 1 t[200] = 2 t.k = 3 return cjson.encode(t)",
		"local t = {} for i = 1, 20 do t['k' .. i] = i end return cjson.encode(t)",
		"local t = {} for i = 1, 40 do t[string.rep('x', i)] = i end return cjson.encode(t)",
		"local t = {} for i = 1, 5 do t['k' .. i] = i end t.k3 = nil return cjson.encode(t)",
		"return cjson.encode({nested = {b = 1, a = 2}, list = {1, 2}})",
		"return cmsgpack.pack({x = 1, y = 'two', z = {3}})",
		"return cjson.encode(cjson.decode('{\"z\":1,\"y\":2,\"x\":3,\"w\":4}'))",
	} {
		cs = append(cs, evalCase("order: "+src, src, "me"))
	}
	return cs
}

func shebangCases() []parityCase {
	write := "#!lua flags=no-writes\nreturn redis.call('SET', 'k', 'v')"
	cases := []parityCase{
		evalCase("shebang: no-writes", "#!lua flags=no-writes\nreturn 1"),
		evalCase("shebang: lua alone", "#!lua\nreturn 1"),
		evalCase("shebang: without newline", "#!lua"),
		evalCase("shebang: no newline after flags", "#!lua flags=no-writes return 1"),
		evalCase("shebang: two flags", "#!lua flags=no-writes,allow-oom\nreturn 2"),
		evalCase("shebang: every flag", "#!lua flags=no-writes,allow-stale,no-cluster,allow-cross-slot-keys,allow-oom\nreturn 3"),
		evalCase("shebang: unknown flag", "#!lua flags=bogus\nreturn 1"),
		evalCase("shebang: unknown flag after a known one", "#!lua flags=no-writes,bogus,x\nreturn 1"),
		evalCase("shebang: empty flag", "#!lua flags=no-writes,,allow-oom\nreturn 1"),
		evalCase("shebang: no flags", "#!lua flags=\nreturn 1"),
		evalCase("shebang: quoted flags", "#!lua flags=\"no-writes\"\nreturn 1"),
		evalCase("shebang: unclosed quote", "#!lua \"flags=no-writes\nreturn 1"),
		evalCase("shebang: other engine", "#!python\nreturn 1"),
		evalCase("shebang: no engine", "#!\nreturn 1"),
		evalCase("shebang: engine in capitals", "#!LUA\nreturn 1"),
		evalCase("shebang: unknown option", "#!lua name=foo\nreturn 1"),
		evalCase("shebang: write under no-writes", write),
		evalCase("shebang: write under no-writes, line 3", "#!lua flags=no-writes\n\nredis.call('SET', 'k', 'v')"),
		evalCase("shebang: pcall write under no-writes", "#!lua flags=no-writes\nreturn redis.pcall('SET', 'k', 'v')"),
		evalCase("shebang: read under no-writes", "#!lua flags=no-writes\nreturn redis.call('GET', 'k')"),
		evalCase("shebang: write without no-writes", "#!lua\nreturn redis.call('SET', 'k', 'v')"),
		evalCase("shebang: syntax error keeps its line", "#!lua\nreturn x("),
		evalCase("shebang: runtime error keeps its line", "#!lua flags=no-writes\nlocal x = 1\nx = x + nil"),
		evalCase("shebang: error() keeps its line", "#!lua\nerror('boom')"),
		{name: "shebang: EVAL_RO of a writing script", argv: []string{"EVAL_RO", "#!lua\nreturn 1", "0"}},
		{name: "shebang: EVAL_RO of a no-writes script", argv: []string{"EVAL_RO", "#!lua flags=no-writes\nreturn 1", "0"}},
		{name: "shebang: EVAL_RO without shebang", argv: []string{"EVAL_RO", "return redis.call('SET', 'k', 'v')", "0"}},
		{name: "shebang: SCRIPT LOAD of an unknown flag", argv: []string{"SCRIPT", "LOAD", "#!lua flags=bogus\nreturn 1"}},
		{name: "shebang: SCRIPT LOAD", argv: []string{"SCRIPT", "LOAD", write}},
		{name: "shebang: EVALSHA keeps no-writes", argv: []string{"EVALSHA", sha1hex(write), "0"}},
	}
	return cases
}

func resp3Cases() []parityCase {
	setup := [][]string{{"HSET", "h", "a", "1", "b", "2"}, {"SADD", "s", "x", "y"}, {"ZADD", "z", "1.5", "m"}, {"SET", "str", "v"}}
	var cs []parityCase
	for _, src := range []string{
		"redis.setresp(3) return redis.call('HGETALL', 'h')",
		"redis.setresp(3) local r = redis.call('HGETALL', 'h') return {type(r.map), r.map.a, r.map.b}",
		"redis.setresp(3) local r = redis.call('SMEMBERS', 's') return {type(r.set), tostring(r.set.x), tostring(r.set.y)}",
		"redis.setresp(3) return redis.call('SMEMBERS', 's')",
		"redis.setresp(3) local r = redis.call('ZSCORE', 'z', 'm') return {type(r), tostring(r.double)}",
		"redis.setresp(3) return redis.call('ZSCORE', 'z', 'm')",
		"redis.setresp(3) local r = redis.call('ZRANGE', 'z', 0, -1, 'WITHSCORES') return {type(r[1]), r[1][1], tostring(r[1][2].double)}",
		"redis.setresp(3) return type(redis.call('GET', 'nokey'))",
		"redis.setresp(3) return redis.call('GET', 'nokey')",
		"redis.setresp(3) return redis.call('GET', 'str')",
		"redis.setresp(3) return redis.call('EXISTS', 'h')",
		"redis.setresp(3) return redis.call('PING')",
		"redis.setresp(3) return redis.call('HGETALL', 'nokey')",
		"redis.setresp(3) redis.setresp(2) return type(redis.call('GET', 'nokey'))",
		"return type(redis.call('GET', 'nokey'))",
		"redis.setresp(3) return true",
		"redis.setresp(3) return false",
		"redis.setresp(3) return nil",
		"redis.setresp(3) return {true, false, 1}",
		"return {double = 3.14}",
		"return {double = '3.14'}",
		"return {double = 1/0}",
		"return {double = -1/0}",
		"return {double = 10}",
		"return {map = {a = 1}}",
		"return {map = {a = 1, b = {2, 3}, c = 'x'}}",
		"return {map = {}}",
		"return {set = {x = true}}",
		"return {set = {x = true, y = true, z = true}}",
		"return {big_number = '123456789012345678901234567890'}",
		"return {verbatim_string = {format = 'txt', string = 'hello'}}",
		"return {verbatim_string = {format = 'txt'}}",
		"return {err = 'x', double = 1}",
		"return {ok = 'FINE', map = {a = 1}}",
		"redis.setresp(4)",
		"redis.setresp()",
		"redis.setresp(3, 4)",
		"redis.setresp(3.5) return type(redis.call('GET', 'nokey'))",
		"redis.setresp('3') return type(redis.call('GET', 'nokey'))",
		"redis.setresp('x')",
	} {
		cs = append(cs, parityCase{name: "resp3: " + src, setup: setup, argv: []string{"EVAL", src, "0"}})
	}
	return cs
}

func redisLibCases() []parityCase {
	var cs []parityCase
	for _, src := range []string{
		"redis.log(redis.LOG_WARNING, 'hi') return 1",
		"redis.log(99, 'hi') return 1",
		"redis.log(-1, 'hi')",
		"redis.log('x', 'hi')",
		"redis.log(1)",
		"redis.log()",
		"redis.log('1', 'hi') return 2",
		"redis.log(1, {}) return 3",
		"redis.log(1.5, 'x') return 5",
		"redis.log(4, 'x')",
		"redis.set_repl(redis.REPL_ALL) return 1",
		"redis.set_repl()",
		"redis.set_repl(1, 2)",
		"redis.set_repl(99)",
		"redis.set_repl(-1)",
		"redis.set_repl(4)",
		"return redis.set_repl('x')",
		"redis.set_repl('1') return 1",
		"return redis.acl_check_cmd('GET', 'x')",
		"return redis.acl_check_cmd('nosuch')",
		"return redis.acl_check_cmd()",
		"return redis.acl_check_cmd('config', 'get')",
		"return redis.acl_check_cmd('config', 'nosuch')",
		"return redis.acl_check_cmd('config')",
		"return redis.acl_check_cmd('set', 'a', 'b', 'c', 'd')",
		"return redis.acl_check_cmd({})",
		"return redis.acl_check_cmd(1)",
		"return redis.pcall('acl_check_cmd')",
		"return pcall(redis.acl_check_cmd, 'nosuch')",
		"return redis.acl_check_cmd('HELLO')",
		"return redis.replicate_commands()",
	} {
		cs = append(cs, evalCase("redis: "+src, src))
	}
	return cs
}

// TestParityCaller checks the parity tests' Caller against Redis itself:
// the refusals it adds are Redis's.
func TestParityCaller(t *testing.T) {
	runParity(t, []parityCase{
		evalCase("unknown command", "return redis.call('nosuch')"),
		evalCase("wrong arity", "return redis.call('GET')"),
		evalCase("not allowed", "return redis.call('MULTI')"),
		evalCase("pcall of a refusal", "return redis.pcall('GET')"),
		{name: "read-only write", argv: []string{"EVAL_RO", "return redis.call('SET', 'k', 'v')", "0"}},
	})
}
