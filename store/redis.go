package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/limit"
)

// defaultOpTimeout bounds every Redis call, its reads and writes
// included (limits), so an unreachable or hung Redis turns into
// ErrUnavailable within a second instead of a hanging request.
const defaultOpTimeout = 700 * time.Millisecond

// The breakers in front of Redis (the limiters', the sandbox copies')
// open after breakerFailures calls in a row have failed, and then let a
// probe through every breakerBackoff. A run, not one failure: a replica
// paused for a moment finds all its calls in flight past their deadline
// at once, and a Redis that answers them again must not be cut off for
// it. Three in a row with no success between them is a Redis down.
const (
	breakerFailures = 3
	breakerBackoff  = 500 * time.Millisecond
)

// redisBackend keeps each learner's flags in one hash. Replicas sharing
// the Redis share the progress. Every read or write of a learner renews
// the hash's expiry, so Redis itself drops learners not seen for ttl.
type redisBackend struct {
	rdb    redis.UniversalClient
	prefix string
	ttl    time.Duration
	// replicas is whether saves wait for a replica now (durable.go).
	replicas replicaGate
	warn     func(error)
	now      func() time.Time
	// learners batches the reads of learners' workshop views.
	learners learnerReads
	// versions shares the reads of workshops' versions.
	versions workshopVersions
	// cluster is whether keys may live on different nodes, so that a
	// batch of limits cannot run as one script.
	cluster bool
	// limitBreaker guards the limiters' calls (limiter.go).
	limitBreaker *limit.Breaker
	// opTimeout bounds each of its calls: defaultOpTimeout, or longer in
	// tests whose writes wait longer for a replica.
	opTimeout time.Duration
}

// OpenRedis connects to the Redis at url: one node
// (redis://[user:pass@]host:port/db), a Sentinel group or a cluster (see
// RedisMode).
// It does not fail when Redis is down: each call reports ErrUnavailable
// until Redis is back, with no restart needed.
func OpenRedis(url string, opts ...Option) (*Store, error) {
	o := newOptions(opts)
	c, err := newRedisClient(url, o.redisMode, o.callTimeout)
	if err != nil {
		return nil, err
	}
	if o.observeRedis != nil {
		c.AddHook(observeHook{observe: o.observeRedis, now: o.now})
	}
	b := &redisBackend{rdb: c.UniversalClient, prefix: "locklab:", ttl: o.progressTTL, warn: o.warn, now: o.now, opTimeout: cmp.Or(o.callTimeout, defaultOpTimeout)}
	b.learners.timeout, b.versions.timeout = b.opTimeout, b.opTimeout
	b.replicas.failover = c.mode != ModeSingle
	b.cluster = c.mode == ModeCluster
	b.limitBreaker = limit.NewBreaker(limiterBreaker)
	return &Store{b: b, name: c.name}, nil
}

func (r *redisBackend) key(learner string) string { return r.prefix + "learner:" + learner }

func unavailable(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %v", ErrUnavailable, err)
}

func (r *redisBackend) add(ctx context.Context, learner string, flags ...string) error {
	ctx, cancel := context.WithTimeout(ctx, r.opTimeout)
	defer cancel()
	args := make([]any, 0, 1+2*len(flags))
	args = append(args, r.ttl.Milliseconds())
	for _, f := range flags {
		args = append(args, f, 1)
	}
	return unavailable(r.write(ctx, addFlagsScript, []string{r.key(learner)}, args...).Err())
}

// addFlagsScript sets a learner's flags and renews their expiry, at once.
// KEYS = the learner's hash; ARGV = ttl ms, then flag, 1, flag, 1...
var addFlagsScript = redis.NewScript(`
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1`)

func (r *redisBackend) list(ctx context.Context, learner string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, r.opTimeout)
	defer cancel()
	// EXPIRE on a learner who has no hash creates nothing: a visitor who
	// only reads costs no key.
	var keys *redis.StringSliceCmd
	_, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		keys = p.HKeys(ctx, r.key(learner))
		p.Expire(ctx, r.key(learner), r.ttl)
		return nil
	})
	if err != nil {
		return nil, unavailable(err)
	}
	return keys.Val(), nil
}

func (r *redisBackend) secret(ctx context.Context, fresh []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, r.opTimeout)
	defer cancel()
	key := r.prefix + "secret"
	if err := r.rdb.SetNX(ctx, key, fresh, 0).Err(); err != nil {
		return nil, unavailable(err)
	}
	v, err := r.rdb.Get(ctx, key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("%w: secret vanished", ErrUnavailable)
	}
	return v, unavailable(err)
}

func (r *redisBackend) close() error { return r.rdb.Close() }
