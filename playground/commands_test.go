package playground

import (
	"context"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// TestCommandTableMatchesRedis checks the generated command table against
// the COMMAND reply of a real redis-server: arity, the flags the
// playground acts on and key positions.
func TestCommandTableMatchesRedis(t *testing.T) {
	addr := startRedis(t)
	rdb := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
	defer rdb.Close()
	reply, err := rdb.Do(context.Background(), "COMMAND").Slice()
	if err != nil {
		t.Fatal(err)
	}
	flagBits := map[string]cmdFlags{"write": flagWrite, "readonly": flagReadOnly, "noscript": flagNoScript,
		"blocking": flagBlocking, "pubsub": flagPubSub, "movablekeys": flagMovableKeys}
	for _, c := range reply {
		info := c.([]any)
		name := strings.ToUpper(info[0].(string))
		var flags cmdFlags
		for _, f := range info[2].([]any) {
			flags |= flagBits[f.(string)]
		}
		want := command{strings.ToLower(name), int(info[1].(int64)), flags, int(info[3].(int64)), int(info[4].(int64)), int(info[5].(int64))}
		got, ok := lookupCommand(name)
		if !ok {
			t.Errorf("lookupCommand(%q) not found; Redis has it", name)
			continue
		}
		if got != want {
			t.Errorf("lookupCommand(%q) = %+v; want %+v", name, got, want)
		}
	}
}

// TestAllowedCommandsExistInMiniredis makes sure every command the
// playground lets through is one miniredis implements (or the scripting
// engine handles), and that Redis knows it.
func TestAllowedCommandsExistInMiniredis(t *testing.T) {
	m := miniredis.NewMiniRedis()
	c, err := m.Dial()
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	defer m.Close()
	for _, name := range strings.Fields(allowedForTest) {
		if !allowed(name) {
			t.Errorf("allowed(%q) = false; want true", name)
		}
		if _, ok := lookupCommand(name); !ok {
			t.Errorf("lookupCommand(%q) not found", name)
		}
		if !m.Server().IsRegisteredCommand(name) {
			t.Errorf("miniredis does not implement %s", name)
		}
	}
}

// allowedForTest lists the allowed commands once more, so that a command
// added to allowed without a thought fails TestAllowedCommandsExistInMiniredis
// only if miniredis lacks it.
const allowedForTest = `APPEND DECR DECRBY GET GETDEL GETEX GETRANGE GETSET INCR INCRBY INCRBYFLOAT MGET MSET
MSETNX PSETEX SET SETEX SETNX SETRANGE STRLEN GETBIT SETBIT BITCOUNT BITPOS DEL UNLINK EXISTS
EXPIRE EXPIREAT EXPIRETIME PEXPIRE PEXPIREAT PEXPIRETIME PERSIST TTL PTTL TYPE KEYS SCAN RENAME
RENAMENX RANDOMKEY TOUCH COPY OBJECT HDEL HEXISTS HGET HGETALL HINCRBY HINCRBYFLOAT HKEYS HLEN
HMGET HMSET HRANDFIELD HSCAN HSET HSETNX HSTRLEN HVALS LINDEX LINSERT LLEN LMOVE LMPOP LPOP LPOS
LPUSH LPUSHX LRANGE LREM LSET LTRIM RPOP RPOPLPUSH RPUSH RPUSHX SADD SCARD SDIFF SDIFFSTORE SINTER
SINTERCARD SINTERSTORE SISMEMBER SMEMBERS SMISMEMBER SMOVE SPOP SRANDMEMBER SREM SSCAN SUNION
SUNIONSTORE ZADD ZCARD ZCOUNT ZINCRBY ZINTER ZINTERSTORE ZLEXCOUNT ZMPOP ZMSCORE ZPOPMAX ZPOPMIN
ZRANDMEMBER ZRANGE ZRANGEBYLEX ZRANGEBYSCORE ZRANK ZREM ZREMRANGEBYLEX ZREMRANGEBYRANK
ZREMRANGEBYSCORE ZREVRANGE ZREVRANGEBYLEX ZREVRANGEBYSCORE ZREVRANK ZSCAN ZSCORE ZUNION
ZUNIONSTORE EVAL EVALSHA EVAL_RO EVALSHA_RO SCRIPT MULTI EXEC DISCARD WATCH UNWATCH PING ECHO
TIME DBSIZE FLUSHDB FLUSHALL`
