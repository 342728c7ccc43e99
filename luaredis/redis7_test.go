package luaredis

import (
	"testing"

	"github.com/locklab/locklab/resp"
)

// TestRedis7Scripting pins, without a redis-server, replies that
// TestParityRedis7Scripting took from Redis 7.0.15, in order on one
// engine: math.random's sequence runs on from one script to the next.
func TestRedis7Scripting(t *testing.T) {
	e := NewEngine(Options{})
	c := newMapCaller()
	for _, tt := range []struct {
		src  string
		want resp.Value
	}{
		{"return redis.REDIS_VERSION_NUM", resp.Int(0x0007000f)},
		{"return tostring(math.random())", resp.Str("0.39646477363839")},
		{"return tostring(math.random())", resp.Str("0.84048536971234")},
		{"math.randomseed(42) return {math.random(100), math.random(100)}", resp.Arr(resp.Int(75), resp.Int(35))},
		{"return math.random(0)", resp.Err("ERR user_script:1: bad argument #1 to 'random' (interval is empty) script: 008bcb60f86ee36d26c67b641b46674578d9cba0, on @user_script:1.")},
		{"return string.sub('hello', '2', ' 3 ')", resp.Str("el")},
		{"return string.rep('ab', '0x3')", resp.Str("ababab")},
		{"return string.sub('hello', 'x')", resp.Err("ERR user_script:1: bad argument #2 to 'sub' (number expected, got string) script: 1f25c90b8f48add9e6e09ee9aaef34be32c58e6c, on @user_script:1.")},
		{"return table.concat({1,2,3}, 5, '2', '3')", resp.Str("253")},
		{"#!lua flags=bogus\nreturn 1", resp.Err("ERR Unexpected flag in script shebang: bogus")},
		{"#!python\nreturn 1", resp.Err("ERR Unexpected engine in script shebang: #!python")},
		{"#!lua", resp.Err("ERR Invalid script shebang")},
		{"#!lua flags=no-writes\nreturn redis.call('SET','k','v')", resp.Err("ERR Write commands are not allowed from read-only scripts. script: fa195771282f0e64e1a92805df8bd1020db98e3f, on @user_script:2.")},
		{"#!lua\nreturn x(", resp.Err("ERR Error compiling script (new function): user_script:2: unexpected symbol near '<eof>'")},
		{"redis.setresp(3) return type(redis.call('GET', 'nokey'))", resp.Str("nil")},
		{"redis.setresp(3) return false", resp.Int(0)},
		{"return {double=3.14}", resp.Str("3.1400000000000001")},
		{"redis.set_repl(-1)", resp.Err("ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE. script: 8a9e597f1ef1c509256967b086e698ce1cb669aa, on @user_script:1.")},
		{"redis.log(99, 'hi') return 1", resp.Err("ERR Invalid debug level. script: 9c45d6eeaa746bdf8269ec5b694ca04966ffec9f, on @user_script:1.")},
		{"return redis.acl_check_cmd('GET', 'x')", resp.Int(1)},
	} {
		if got := eval(t, e, c, tt.src); got.String() != tt.want.String() {
			t.Errorf("EVAL %q = %v; want %v", tt.src, got, tt.want)
		}
	}
}

// TestKeyOrderStable checks that cjson.encode, cmsgpack.pack and a
// {map=...} reply give the same order every time, as C Lua's does: Go's
// map order changes from one range to the next.
func TestKeyOrderStable(t *testing.T) {
	e := NewEngine(Options{})
	for _, src := range []string{
		"return cjson.encode({owner = 'a', token = 'b', expires = 1, fence = 2, host = 'h', pid = 3})",
		"local t = {} for i = 1, 30 do t['k' .. i] = i end return cmsgpack.pack(t)",
		"local t = {} for i = 1, 30 do t['k' .. i] = i end return {map = t}",
	} {
		first := eval(t, e, newMapCaller(), src)
		for range 20 {
			if got := eval(t, e, newMapCaller(), src); got.String() != first.String() {
				t.Fatalf("EVAL %q = %v, then %v; want the same each time", src, first, got)
			}
		}
	}
	// Redis's order for these keys, set one by one.
	src := "local t = {} t.owner = 0 t.token = 1 t.expires = 2 t.fence = 3 t.host = 4 return cjson.encode(t)"
	want := resp.Str(`{"expires":2,"token":1,"owner":0,"host":4,"fence":3}`)
	if got := eval(t, e, newMapCaller(), src); got.String() != want.String() {
		t.Errorf("EVAL %q = %v; want %v", src, got, want)
	}
}
