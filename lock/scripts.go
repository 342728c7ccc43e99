package lock

import "github.com/redis/go-redis/v9"

// The Lua scripts. Each runs atomically on the server, which is what makes
// "check the token, then act" safe: no other command can run in between.
const (
	// acquireSrc sets the lock if it is free and, only then, increments the
	// fencing counter. It returns the new fencing token, or nil if the lock
	// is taken. KEYS: lock key, fencing key. ARGV: token, TTL in ms.
	acquireSrc = `if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
return false`

	// setNXSrc is Redlock's acquire on one node: SET NX PX without a fencing
	// counter. It returns OK if set, nil if taken. KEYS: lock key. ARGV:
	// token, TTL in ms.
	setNXSrc = `return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])`

	// releaseSrc is compare-and-delete. KEYS: lock key. ARGV: token.
	releaseSrc = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`

	// extendSrc is compare-and-pexpire. KEYS: lock key. ARGV: token, TTL in ms.
	extendSrc = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`
)

// scripts holds the compiled scripts; redis.Script caches the SHA and falls
// back from EVALSHA to EVAL when the server does not know it yet.
type scripts struct {
	acquire, setNX, release, extend *redis.Script
}

func newScripts() scripts {
	return scripts{
		acquire: redis.NewScript(acquireSrc),
		setNX:   redis.NewScript(setNXSrc),
		release: redis.NewScript(releaseSrc),
		extend:  redis.NewScript(extendSrc),
	}
}
