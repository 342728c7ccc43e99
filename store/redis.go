package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// opTimeout bounds every Redis call, so an unreachable Redis turns into
// ErrUnavailable well within a second instead of a hanging request.
const opTimeout = 700 * time.Millisecond

// redisBackend keeps each learner's flags in one hash. Replicas sharing
// the Redis share the progress. Every read or write of a learner renews
// the hash's expiry, so Redis itself drops learners not seen for ttl.
type redisBackend struct {
	rdb    *redis.Client
	prefix string
	ttl    time.Duration
}

// OpenRedis connects to the Redis at url (redis://[user:pass@]host:port/db).
// It does not fail when Redis is down: each call reports ErrUnavailable
// until Redis is back, with no restart needed.
func OpenRedis(url string, opts ...Option) (*Store, error) {
	o := newOptions(opts)
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("store: REDIS_URL: %w", err)
	}
	opt.DialTimeout = 300 * time.Millisecond
	opt.ReadTimeout = time.Second
	opt.WriteTimeout = time.Second
	opt.PoolTimeout = 300 * time.Millisecond
	// No retries: many calls are scripts that count (answers, commands,
	// limits), and one retried after a read timeout, though Redis had run
	// it, would count twice. A failed call reports ErrUnavailable instead.
	opt.MaxRetries = -1
	// A Redis that refuses connections should fail a call in milliseconds,
	// not after go-redis's default five dial attempts.
	opt.DialerRetries = 2
	opt.DialerRetryTimeout = 50 * time.Millisecond
	rdb := redis.NewClient(opt)
	if o.observeRedis != nil {
		rdb.AddHook(observeHook{observe: o.observeRedis, now: o.now})
	}
	return &Store{b: &redisBackend{rdb: rdb, prefix: "locklab:", ttl: o.progressTTL}, name: "redis " + opt.Addr}, nil
}

func (r *redisBackend) key(learner string) string { return r.prefix + "learner:" + learner }

func unavailable(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %v", ErrUnavailable, err)
}

func (r *redisBackend) add(ctx context.Context, learner string, flags ...string) error {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	args := make([]any, 0, 2*len(flags))
	for _, f := range flags {
		args = append(args, f, 1)
	}
	_, err := r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, r.key(learner), args...)
		p.Expire(ctx, r.key(learner), r.ttl)
		return nil
	})
	return unavailable(err)
}

func (r *redisBackend) list(ctx context.Context, learner string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
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
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
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
