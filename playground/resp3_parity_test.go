package playground

import "testing"

// TestParityRESP3Calls compares what scripts see of redis.call's replies
// after redis.setresp(3), as Redis 7.0 converts RESP3 into Lua: maps,
// sets, scores as doubles, pairs of member and score, nulls as nil; and
// redis.acl_check_cmd, which looks commands up as Redis does; and the
// metatables of Redis's read-only tables.
func TestParityRESP3Calls(t *testing.T) {
	var cases []parityCase
	for _, line := range []string{
		`FLUSHALL`,
		`HSET hash field value f2 v2`,
		`SADD myset a b`,
		`ZADD z 1.5 a 2 b 3.25 c`,
		`EVAL "redis.setresp(3); local r = redis.call('hgetall', KEYS[1]); return {type(r), type(r['map']), r['map']['field'], r['map']['f2']}" 1 hash`,
		`EVAL "redis.setresp(3); local r = redis.call('zscore', KEYS[1], 'a'); return {type(r), tostring(r['double'])}" 1 z`,
		`EVAL "redis.setresp(3); local r = redis.call('smembers', KEYS[1]); return {type(r['set']), tostring(r['set']['a']), tostring(r['set']['c'])}" 1 myset`,
		`EVAL "redis.setresp(3); local r = redis.call('zrange', KEYS[1], 0, -1, 'WITHSCORES'); return {#r, r[1][1], tostring(r[1][2]['double']), r[3][1], tostring(r[3][2]['double'])}" 1 z`,
		`EVAL "redis.setresp(3); local r = redis.call('zrange', KEYS[1], 0, -1); return r" 1 z`,
		`EVAL "redis.setresp(3); local r = redis.call('zmscore', KEYS[1], 'a', 'nope', 'c'); return {tostring(r[1]['double']), type(r[2]), tostring(r[3]['double'])}" 1 z`,
		`EVAL "redis.setresp(3); local r = redis.call('zincrby', KEYS[1], 1, 'a'); return tostring(r['double'])" 1 z`,
		`EVAL "redis.setresp(3); local r = redis.call('zadd', KEYS[1], 'INCR', 1, 'a'); return tostring(r['double'])" 1 z`,
		`EVAL "redis.setresp(3); local r = redis.call('zadd', KEYS[1], 5, 'q'); return r" 1 z`,
		`EVAL "redis.setresp(3); local r = redis.call('zrevrange', KEYS[1], 0, 0, 'withscores'); return {type(r[1]), r[1][1], tostring(r[1][2]['double'])}" 1 z`,
		`EVAL "redis.setresp(3); local r = redis.call('zrangebyscore', KEYS[1], '-inf', '+inf', 'WITHSCORES'); return #r" 1 z`,
		`EVAL "redis.setresp(3); local r = redis.call('zunion', 1, KEYS[1], 'WITHSCORES'); return {#r, type(r[1])}" 1 z`,
		`EVAL "redis.setresp(3); local r = redis.call('sunion', KEYS[1], 'other'); return type(r['set'])" 1 myset`,
		`EVAL "redis.setresp(3); local r = redis.call('hgetall', 'nohash'); return {type(r), type(r['map'])}" 0`,
		`EVAL "redis.setresp(3); return redis.call('get', 'nosuchkey') == nil" 0`,
		`EVAL "redis.setresp(3); local r = redis.call('zscore', KEYS[1], 'nope'); return type(r)" 1 z`,
		`EVAL "redis.setresp(3); local r = redis.call('hget', KEYS[1], 'field'); return r" 1 hash`,
		`EVAL "redis.setresp(3); local r = redis.call('lrange', 'nolist', 0, -1); return type(r)" 0`,
		`EVAL "redis.setresp(3); local r = redis.call('sismember', KEYS[1], 'a'); return type(r)" 1 myset`,
		`EVAL "redis.setresp(3); local r = redis.call('incrbyfloat', 'fl', '1.5'); return type(r)" 0`,
		`EVAL "redis.setresp(3); local r = redis.call('zpopmin', KEYS[1]); return {#r, type(r[1]), type(r[2])}" 1 z`,
		`EVAL "redis.setresp(3); local r = redis.call('zpopmin', KEYS[1], 2); return {#r, type(r[1]), type(r[2])}" 1 z`,
		`EVAL "redis.setresp(3); local r = redis.call('zrandmember', KEYS[1], 1, 'WITHSCORES'); return {#r, type(r[1])}" 1 z`,
		// redis.acl_check_cmd knows Redis's command table, subcommands too.
		`EVAL "return redis.acl_check_cmd('set', 'xx', 1)" 1 xx`,
		`EVAL "return redis.acl_check_cmd('invalid-cmd', 'arg')" 0`,
		`EVAL "return redis.acl_check_cmd('CONFIG', 'GET', 'x')" 0`,
		`EVAL "return redis.acl_check_cmd('config', 'nosuch')" 0`,
		`EVAL "return redis.acl_check_cmd('client')" 0`,
		`EVAL "return redis.acl_check_cmd('get', 'a', 'b', 'c')" 0`,
		`EVAL "return redis.acl_check_cmd('subscribe', 'ch')" 0`,
		`EVAL "return redis.pcall('acl_check_cmd')" 0`,
		// Read-only tables: _G's metatable is there to see, not to change;
		// the libraries have none.
		`EVAL "return type(getmetatable(_G))" 0`,
		`EVAL "return type(getmetatable(_G).__index)" 0`,
		`EVAL "local g = getmetatable(_G)\ng.__index = {}" 0`,
		`EVAL "getmetatable(_G).__index = nil" 0`,
		`EVAL "return type(getmetatable(redis))" 0`,
		`EVAL "return type(getmetatable(string))" 0`,
		`EVAL "return type(getmetatable(''))" 0`,
		`EVAL "return type(getmetatable(cjson))" 0`,
		`EVAL "return type(getmetatable(math))" 0`,
		`EVAL "return type(getmetatable(getmetatable(_G)))" 0`,
		`EVAL "return getmetatable(_G).__metatable" 0`,
		`EVAL "return getmetatable(_G).nosuch" 0`,
		`EVAL "return setmetatable(getmetatable(_G), {})" 0`,
		`EVAL "return getmetatable(_G).__index(_G, 'x')" 0`,
	} {
		cases = append(cases, parityCase{client: ClientA, line: line})
	}
	runParityCases(t, cases)
}
