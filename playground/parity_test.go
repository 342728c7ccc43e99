package playground

import (
	"context"
	"strings"
	"testing"
)

// lessonRelease is the lesson's release script, typed as the lesson shows it.
const lessonRelease = `EVAL "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end" 1 lock:invoice:7 3f9a1c`

// parityCase is one line typed by a client. differs, when set, says why the
// playground deliberately prints something else than redis-cli; such a line
// still runs on both, the playground must print exactly own, and redis-cli
// something else (else the note is out of date).
type parityCase struct {
	client  Client
	line    string
	differs string
	own     string
}

// parityCases run in order, on one real server and one sandbox. Every
// output is deterministic: no TIME, no random members, no PTTL, hashes and
// sets built in the order both servers print them.
func parityCases() []parityCase {
	a := func(line string) parityCase { return parityCase{client: ClientA, line: line} }
	b := func(line string) parityCase { return parityCase{client: ClientB, line: line} }
	diff := func(line, why, own string) parityCase {
		return parityCase{client: ClientA, line: line, differs: why, own: own}
	}
	return []parityCase{
		// The lesson: take the lock, fail to take it again, release it only
		// with the right token.
		a("SET lock:invoice:7 3f9a1c NX PX 30000"),
		b("SET lock:invoice:7 9b2e77 NX PX 30000"),
		b("GET lock:invoice:7"),
		b(strings.Replace(lessonRelease, "1 lock:invoice:7 3f9a1c", "1 lock:invoice:7 9b2e77", 1)),
		a(lessonRelease),
		a(lessonRelease),
		a("GET lock:invoice:7"),

		// Reply types and redis-cli's quoting.
		a("PING"),
		a(`PING "hello world"`),
		a(`ECHO "a\x00b\xff\n\r\t\a\b\"\\"`),
		a(`ECHO 'it\'s'`),
		a(`SET k "caf\xc3\xa9"`),
		a("GET k"),
		a("GET nokey"),
		a("INCR counter"),
		a("INCRBY counter 41"),
		a("DECR counter"),
		a("INCRBYFLOAT f 1.5"),
		a("SET counter x"),
		a("INCR counter"),
		a("RPUSH list a b c d e f g h i j k"),
		a("LRANGE list 0 -1"),
		a("LRANGE list 0 2"),
		a("LRANGE nolist 0 -1"),
		a("HSET h f1 v1 f2 v2"),
		a("HGET h f1"),
		a("HGETALL h"),
		a("HMGET h f1 nofield f2"),
		a("SADD s 1 2 3"),
		a("SMEMBERS s"),
		a("SISMEMBER s 2"),
		a("ZADD z 1 a 2.5 b 10 c"),
		a("ZRANGE z 0 -1 WITHSCORES"),
		a("ZSCORE z b"),
		a("ZRANK z c"),
		a("TYPE h"),
		a("TYPE z"),
		a("TYPE nokey"),
		a("EXISTS k nokey h"),
		a("DEL k"),
		a("DEL k"),
		a("MSET a 1 b 2"),
		a("MGET a b c"),
		a("KEYS a"),
		a("KEYS lock*"),
		a("DBSIZE"),

		// TTLs, without depending on how much time passes.
		a("SET t v EX 100"),
		a("TTL t"),
		a("PERSIST t"),
		a("TTL t"),
		a("TTL nokey"),
		a("PEXPIREAT t 4102444800000"),
		a("PEXPIRETIME t"),
		a("EXPIRETIME t"),
		a("SET t v EX 0"),

		// Errors and what redis-cli makes of the line itself.
		a(`foo bar "baz qux"`),
		a("SET x"),
		a("GET a b"),
		a("LPUSH a x"),
		a(`SET "unbalanced`),
		a(`SET "a"b c`),
		a(`SET 'single' "double"`),
		a(""),
		a("   "),
		a("3 INCR n"),

		// Transactions, and WATCH per client.
		a("MULTI"),
		a("SET m 1"),
		a("INCR m"),
		a("EXEC"),
		a("MULTI"),
		a("SET m"),
		a("EXEC"),
		a("MULTI"),
		a("INCR m"),
		a("LPUSH m x"),
		a(`EVAL "return redis.call('GET', KEYS[1])" 1 m`),
		a("EXEC"),
		a("EXEC"),
		a("DISCARD"),
		a("MULTI"),
		a("MULTI"),
		a("WATCH m"),
		a("DISCARD"),
		a("WATCH m"),
		b("SET m 5"),
		a("MULTI"),
		a("INCR m"),
		a("EXEC"),
		b("WATCH m"),
		b("MULTI"),
		b("INCR m"),
		b("EXEC"),

		// Scripts: conversions both ways and Redis 7's error texts.
		a(`EVAL "return x" 0`),
		a(`EVAL "x = 5" 0`),
		a(`EVAL "error('boom')" 0`),
		a(`EVAL "error({err='MY boom'})" 0`),
		a(`EVAL "error()" 0`),
		a(`EVAL "return redis.call('nosuch')" 0`),
		a(`EVAL "return redis.pcall('nosuch')" 0`),
		a(`EVAL "return redis.call('GET')" 0`),
		a(`EVAL "return redis.call('BLPOP', 'l', 0)" 0`),
		a(`EVAL "return redis.call('INCR', 'list')" 0`),
		a(`EVAL "return redis.pcall('INCR', 'list')" 0`),
		a(`EVAL "return {pcall(redis.call, 'nosuch')}" 0`),
		a(`EVAL "return {1, 2, {3, 'x', {err='bad'}}, nil, 5}" 0`),
		a(`EVAL "return 3.99" 0`),
		a(`EVAL "return -3.99" 0`),
		a(`EVAL "return {true, false}" 0`),
		a(`EVAL "return redis.status_reply('FINE')" 0`),
		a(`EVAL "return redis.error_reply('MY bad')" 0`),
		a(`EVAL "return redis.error_reply('x')" 0`),
		a(`EVAL "return redis.call('PING')" 0`),
		a(`EVAL "return redis.call('HGETALL', 'h')" 0`),
		a(`EVAL "return type(redis.call('GET', 'nokey'))" 0`),
		a(`EVAL "return redis.sha1hex('')" 0`),
		a(`EVAL "return KEYS[1] .. ARGV[1] .. #ARGV" 1 k v w`),
		a(`EVAL "return tostring(1/3) .. ' ' .. 1e15" 0`),
		a(`EVAL "redis.call('SET', 'f2', 0.1) return redis.call('GET', 'f2')" 0`),
		a(`EVAL "rawset(_G, 'y', 1)" 0`),
		a(`EVAL "return 1" x`),
		a(`EVAL "return 1" -1`),
		a(`EVAL "return 1" 2 a`),
		a(`EVAL_RO "return redis.call('SET', 'a', '1')" 0`),
		a(`EVAL_RO "return redis.call('GET', 'a')" 0`),
		a(`SCRIPT LOAD "return 'loaded'"`),
		a("EVALSHA b534286061d4b9e4026607613b95c06c06015ae8 0"),
		a("EVALSHA B534286061D4B9E4026607613B95C06C06015AE8 0"),
		a("SCRIPT EXISTS b534286061d4b9e4026607613b95c06c06015ae8 ffffffffffffffffffffffffffffffffffffffff"),
		a("SCRIPT FLUSH"),
		a("EVALSHA b534286061d4b9e4026607613b95c06c06015ae8 0"),
		a("EVALSHA nope 0"),
		a("SCRIPT FOO"),
		a("SCRIPT LOAD"),
		a("SCRIPT KILL"),
		diff(`EVAL "return 1 +" 0`, "gopher-lua's parser words syntax errors differently from Lua 5.1 after the position",
			"(error) ERR Error compiling script (new function): user_script:1: syntax error near '<eof>'"),
		diff(`EVAL "local t = nil; return t.x" 0`, "gopher-lua words runtime errors differently from Lua 5.1",
			"(error) ERR user_script:1: attempt to index a non-table object(nil) with key 'x' script: e62b17c4a64e9b74a6f9be57909ea9e2d0e66784, on @user_script:1."),
		diff("OBJECT ENCODING list", "the sandbox does not keep Redis's internal encodings",
			"(error) ERR the playground does not support OBJECT ENCODING: a sandbox does not keep Redis's internal encodings and counters"),
		a("OBJECT IDLETIME nokey"),

		// More of the commands a learner reaches for.
		a(`ECHO ""`),
		a("SET g old"),
		a("SET g new GET"),
		a("SET g newer XX"),
		a("SET nog v XX"),
		a("GETDEL g"),
		a("GETEX g"),
		a("SET e v"),
		a("EXPIRE e 100 XX"),
		a("EXPIRE e 100 NX"),
		a("EXPIRE e 200 GT"),
		a("TTL e"),
		a("PEXPIRE e abc"),
		a("HINCRBY h f3 5"),
		a("HDEL h f1 nofield"),
		a("HLEN h"),
		a("LPOP list 2"),
		a("RPOP list"),
		a("LLEN list"),
		a("LINDEX list 0"),
		a("SREM s 1 9"),
		a("ZINCRBY z 2 a"),
		a("ZREVRANGE z 0 -1"),
		a("ZRANGEBYSCORE z -inf +inf WITHSCORES LIMIT 0 2"),
		a("ZREM z c"),
		a("ZCARD z"),
		a("RENAME e e2"),
		a("RENAME nokey x"),
		a("COPY e2 e3"),
		a("EXISTS e e2 e3"),
		a("APPEND ap hello"),
		a("APPEND ap _world"),
		a("STRLEN ap"),
		a("GETRANGE ap 0 4"),
		a("SETRANGE ap 0 J"),
		a("GET ap"),
		a("MSETNX a 9 zz 9"),
		a(`EVAL "return {1, 2, 3, 4, 5, 6, 7, 8, 9, {1, {2, 3}}}" 0`),
		a(`EVAL "return {}" 0`),
		a(`EVAL "return redis.call('LRANGE', 'nolist', 0, -1)" 0`),
		a(`EVAL "local ok, e = pcall(error, {err='boo'}) return e" 0`),
		a(`EVAL "return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', 30000)" 1 lock:x tok`),
		a(`EVAL "return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', 30000)" 1 lock:x tok`),
		a("FLUSHALL"),
		a("DBSIZE"),
	}
}

// TestParityWithRedisCLI types the same lines into redis-cli --no-raw
// against a real redis-server and into a sandbox, and compares what they
// print.
func TestParityWithRedisCLI(t *testing.T) {
	addr := startRedis(t)
	clis := map[Client]*redisCLI{ClientA: startCLI(t, addr), ClientB: startCLI(t, addr)}
	s, err := NewSandbox(SandboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cases := parityCases()
	if len(cases) < 60 {
		t.Fatalf("only %d parity cases; want at least 60", len(cases))
	}
	for i, c := range cases {
		want := clis[c.client].exec(c.line)
		res, _ := s.Exec(context.Background(), c.client, c.line)
		got := res.Output
		switch {
		case c.differs != "" && got != c.own:
			t.Errorf("#%d %s> %s\n got %q\nwant %q (differs from redis-cli on purpose: %s)", i, c.client, c.line, got, c.own, c.differs)
		case c.differs != "" && got == want:
			t.Errorf("#%d %s> %s = %q, as redis-cli prints it; drop the note that it differs (%s)", i, c.client, c.line, got, c.differs)
		case c.differs != "":
			t.Logf("#%d %s> %s\n  redis-cli:  %q\n  playground: %q\n  (differs on purpose: %s)", i, c.client, c.line, want, got, c.differs)
		case got != want:
			t.Errorf("#%d %s> %s\n got %q\nwant %q", i, c.client, c.line, got, want)
		}
	}
}
