package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/limit"
)

// maxSandboxCopy bounds one copy of a sandbox. The playground bounds its
// copies by its own limits, well below this; it is a last guard for Redis.
const maxSandboxCopy = 16 << 20

// sandboxBreaker is how SandboxCopies stops calling a Redis that is
// down: every playground command checks for a copy, and none should wait
// on a Redis that does not answer. Its pause is short, as the playground
// refuses lines meanwhile and a failover is over in seconds; a probe then
// finds whether Redis answers again. Its timeout is the store's call
// timeout.
var sandboxBreaker = limit.BreakerSettings{Failures: breakerFailures, Backoff: breakerBackoff}

// SandboxCopies keeps a copy of each learner's playground sandbox in
// Redis, so that every replica of the server can restore it: the sandbox
// follows the learner when a load balancer sends them to another replica.
// A copy is opaque bytes with a version, a random string that changes
// with every Save, which saves only over the version the caller last
// saw; it expires when the learner has been away for the ttl
// the caller gives. It has the methods of playground.SandboxCopies and is
// safe for concurrent use.
type SandboxCopies struct {
	rdb    redis.UniversalClient
	prefix string
	// write runs a saving script as the store's other writes are run:
	// acknowledged by a replica where there is failover (durable.go).
	write func(ctx context.Context, script *redis.Script, keys []string, args ...any) *redis.Cmd

	breaker *limit.Breaker
}

// SandboxCopies returns the store of sandbox copies and true when the
// store is Redis. The file store serves a single server, which has
// nothing to share.
func (s *Store) SandboxCopies() (*SandboxCopies, bool) {
	r, ok := s.b.(*redisBackend)
	if !ok {
		return nil, false
	}
	settings := sandboxBreaker
	settings.Timeout = r.opTimeout
	return &SandboxCopies{rdb: r.rdb, prefix: r.prefix + "sandbox:", write: r.write, breaker: limit.NewBreaker(settings)}, true
}

// Fields of the hash that holds a learner's copy.
const (
	copyVersion = "v"
	copyData    = "data"
)

// Version returns the version of the learner's copy, "" if there is none,
// and keeps the copy for ttl more, in one round trip.
func (c *SandboxCopies) Version(ctx context.Context, learner string, ttl time.Duration) (string, error) {
	var ver string
	err := c.do(ctx, "version", learner, func(ctx context.Context) error {
		var cmd *redis.StringCmd
		_, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			cmd = p.HGet(ctx, c.prefix+learner, copyVersion)
			p.PExpire(ctx, c.prefix+learner, ttl)
			return nil
		})
		if errors.Is(err, redis.Nil) {
			return nil
		}
		ver = cmd.Val()
		return err
	})
	return ver, err
}

// Load returns the learner's copy and its version; "" if there is none.
func (c *SandboxCopies) Load(ctx context.Context, learner string) (string, []byte, error) {
	var vals []any
	err := c.do(ctx, "load", learner, func(ctx context.Context) error {
		var err error
		vals, err = c.rdb.HMGet(ctx, c.prefix+learner, copyVersion, copyData).Result()
		return err
	})
	if err != nil {
		return "", nil, err
	}
	ver, _ := vals[0].(string)
	data, _ := vals[1].(string)
	if ver == "" {
		return "", nil, nil
	}
	return ver, []byte(data), nil
}

// loadIfNot returns {version} of a learner's copy (KEYS[1]) when it is
// ARGV[1], {version, data} when it is another, {} when there is none,
// and keeps the copy for ARGV[2] ms more.
var loadIfNot = redis.NewScript(`
local v = redis.call('HGET', KEYS[1], 'v')
if not v then return {} end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
if v == ARGV[1] then return {v} end
return {v, redis.call('HGET', KEYS[1], 'data') or ''}
`)

// LoadNewer returns the version of the learner's copy ("" if there is
// none) and, when it is not have, the copy too, in one round trip; it
// keeps the copy for ttl more.
func (c *SandboxCopies) LoadNewer(ctx context.Context, learner, have string, ttl time.Duration) (string, []byte, error) {
	var vals []any
	err := c.do(ctx, "load", learner, func(ctx context.Context) error {
		var err error
		vals, err = loadIfNot.Run(ctx, c.rdb, []string{c.prefix + learner}, have, ttl.Milliseconds()).Slice()
		return err
	})
	if err != nil || len(vals) == 0 {
		return "", nil, err
	}
	ver, _ := vals[0].(string)
	if len(vals) < 2 || ver == "" {
		return ver, nil, nil
	}
	data, _ := vals[1].(string)
	return ver, []byte(data), nil
}

// saveIfAt replaces a learner's copy (KEYS[1]) with a new version
// (ARGV[2]) and data (ARGV[3]) kept for ARGV[4] ms, only if its version is
// still ARGV[1] ("" for no copy). It returns the new version, or false
// when another replica saved since.
var saveIfAt = redis.NewScript(`
local cur = redis.call('HGET', KEYS[1], 'v') or ''
if cur ~= ARGV[1] then return false end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'data', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return ARGV[2]
`)

// Save replaces the learner's copy with data, kept for ttl, and returns
// its new version, if the copy's version is still base ("": none); else
// it saves nothing and returns saved false. The check and the write are
// one script, so two replicas saving on the same copy cannot both win.
func (c *SandboxCopies) Save(ctx context.Context, learner, base string, data []byte, ttl time.Duration) (string, bool, error) {
	if len(data) > maxSandboxCopy {
		return "", false, fmt.Errorf("store: save sandbox copy: %d bytes, more than %d", len(data), maxSandboxCopy)
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	ver := hex.EncodeToString(b)
	saved := false
	err := c.do(ctx, "save", learner, func(ctx context.Context) error {
		err := c.write(ctx, saveIfAt, []string{c.prefix + learner}, base, ver, data, ttl.Milliseconds()).Err()
		if errors.Is(err, redis.Nil) {
			return nil
		}
		saved = err == nil
		return err
	})
	if err != nil || !saved {
		return "", false, err
	}
	return ver, true, nil
}

// do checks the learner id and runs one call to Redis through the
// breaker, so that after a failure the next moments' calls fail at once.
func (c *SandboxCopies) do(ctx context.Context, op, learner string, call func(context.Context) error) error {
	if err := checkLearner(learner); err != nil {
		return fmt.Errorf("store: %s sandbox copy: %w", op, err)
	}
	if err := c.breaker.Do(ctx, call); err != nil {
		return fmt.Errorf("store: %s sandbox copy: %w", op, unavailable(err))
	}
	return nil
}
