package store

import (
	"context"
	"fmt"
	"time"

	"github.com/locklab/locklab/limit"
)

// Store is a limit.Maker and a limit.Asker: with Redis its limiters and
// meters are shared by every replica (GCRA in Redis, gcra.go), and a
// request's limits are asked in one round trip; with the file store they
// are limit.Memory, in this process.
var (
	_ limit.Maker = (*Store)(nil)
	_ limit.Asker = (*Store)(nil)
)

// Limiter returns a rate limiter of perSecond events per key with bursts
// of burst.
func (s *Store) Limiter(perSecond, burst int) limit.Limiter {
	if r, ok := s.b.(*redisBackend); ok {
		return &redisLimiter{r: r, b: newBucket(perSecond, time.Second, burst, "l:")}
	}
	return limit.Memory{}.Limiter(perSecond, burst)
}

// Meter returns a meter of perSecond units a second per key with bursts
// of burst.
func (s *Store) Meter(perSecond, burst int) limit.Meter {
	return s.MeterPer(perSecond, time.Second, burst)
}

// MeterPer is Meter with the refill given per period instead of per
// second: n units every per, for things counted per minute or hour
// (failed sign-ins).
func (s *Store) MeterPer(n int, per time.Duration, burst int) limit.Meter {
	if r, ok := s.b.(*redisBackend); ok {
		return &redisMeter{r: r, b: newBucket(n, per, burst, "m:")}
	}
	return limit.Memory{}.MeterPer(n, per, burst)
}

// Ask answers a batch of the store's limiters and meters: on Redis in one
// script, counting nothing unless every one allows. On a Redis Cluster,
// whose keys live on different nodes, with limiters it did not make, or
// with the file store, it asks them one at a time (limit.AskEach).
func (s *Store) Ask(ctx context.Context, asks []limit.Ask) (limit.Answer, error) {
	r, ok := s.b.(*redisBackend)
	if !ok || r.cluster && len(asks) > 1 {
		return limit.AskEach(ctx, asks)
	}
	q := make([]bucketAsk, len(asks))
	for i, a := range asks {
		switch l := a.Limiter; {
		case l != nil:
			rl, ok := l.(*redisLimiter)
			if !ok || rl.r != r {
				return limit.AskEach(ctx, asks)
			}
			q[i] = bucketAsk{b: rl.b, key: a.Key, need: 1, take: 1}
		case a.Meter != nil:
			rm, ok := a.Meter.(*redisMeter)
			if !ok || rm.r != r {
				return limit.AskEach(ctx, asks)
			}
			q[i] = bucketAsk{b: rm.b, key: a.Key, need: a.Need, take: a.Take}
		default:
			return limit.AskEach(ctx, asks)
		}
	}
	refused, have, err := r.askBuckets(ctx, q)
	if err != nil || refused < 0 {
		return limit.Answer{Refused: -1}, err
	}
	return limit.Answer{Refused: refused, Have: have[refused]}, nil
}

// limiterBreaker has a short timeout, as a limiter must never be what
// makes a request slow, and pauses after a run of failures so that no
// request waits on a Redis that is down.
var limiterBreaker = limit.BreakerSettings{Timeout: 200 * time.Millisecond, Failures: breakerFailures, Backoff: breakerBackoff}

// askBuckets runs the batch through the limiters' breaker. Its errors are
// only logged (the limits fail open or closed on any error), so they keep
// the cause (limit.ErrOpen, the caller's cancellation) for the log to
// tell.
func (r *redisBackend) askBuckets(ctx context.Context, q []bucketAsk) (refused int, have []int, err error) {
	err = r.limitBreaker.Do(ctx, func(ctx context.Context) error {
		refused, have, err = r.gcra(ctx, q)
		return err
	})
	if err != nil {
		return -1, nil, fmt.Errorf("store: rate limit: %w: %w", ErrUnavailable, err)
	}
	return refused, have, nil
}

// redisLimiter is a limit.Limiter on Redis.
type redisLimiter struct {
	r *redisBackend
	b bucket
}

func (l *redisLimiter) Allow(ctx context.Context, key string) (bool, error) {
	refused, _, err := l.r.askBuckets(ctx, []bucketAsk{{b: l.b, key: key, need: 1, take: 1}})
	return err == nil && refused < 0, err
}

// redisMeter is a limit.Meter on Redis.
type redisMeter struct {
	r *redisBackend
	b bucket
}

func (m *redisMeter) Available(ctx context.Context, key string) (int, error) {
	_, have, err := m.r.askBuckets(ctx, []bucketAsk{{b: m.b, key: key}})
	if err != nil {
		return 0, err
	}
	return have[0], nil
}

func (m *redisMeter) Take(ctx context.Context, key string, n int) error {
	if n <= 0 {
		return nil
	}
	_, _, err := m.r.askBuckets(ctx, []bucketAsk{{b: m.b, key: key, take: n}})
	return err
}
