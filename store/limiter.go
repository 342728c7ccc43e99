package store

import (
	"context"
	"fmt"
	"time"

	"github.com/go-redis/redis_rate/v10"

	"github.com/locklab/locklab/limit"
)

// Store is a limit.Maker: with Redis its limiters and meters are shared
// by every replica (GCRA in Redis, via redis_rate); with the file store
// they are limit.Memory, in this process.
var _ limit.Maker = (*Store)(nil)

// Limiter returns a rate limiter of perSecond events per key with bursts
// of burst.
func (s *Store) Limiter(perSecond, burst int) limit.Limiter {
	if r, ok := s.b.(*redisBackend); ok {
		return &redisLimiter{r.rate(perSecond, time.Second, burst, "rate:")}
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
		return &redisMeter{r.rate(n, per, burst, "meter:")}
	}
	return limit.Memory{}.MeterPer(n, per, burst)
}

// The limiters' breaker: a short timeout, as a limiter must never be what
// makes a request slow, and a pause after a failure so that no request
// waits on a Redis that is down.
const (
	limiterTimeout = 200 * time.Millisecond
	limiterBackoff = 2 * time.Second
)

// rateKeys is one GCRA limit on Redis, its keys under prefix.
type rateKeys struct {
	l       *redis_rate.Limiter
	limit   redis_rate.Limit
	prefix  string
	breaker *limit.Breaker
}

func (r *redisBackend) rate(n int, per time.Duration, burst int, prefix string) rateKeys {
	return rateKeys{
		l:       redis_rate.NewLimiter(r.rdb),
		limit:   redis_rate.Limit{Rate: n, Burst: burst, Period: per},
		prefix:  r.prefix + prefix,
		breaker: &limit.Breaker{Timeout: limiterTimeout, Backoff: limiterBackoff},
	}
}

// do runs one call to Redis through the breaker. Its errors are only
// logged (the limits fail open or closed on any error), so they keep the
// cause (limit.ErrOpen, the caller's cancellation) for the log to tell.
func (k rateKeys) do(ctx context.Context, call func(context.Context) error) error {
	if err := k.breaker.Do(ctx, call); err != nil {
		return fmt.Errorf("store: rate limit: %w: %w", ErrUnavailable, err)
	}
	return nil
}

// redisLimiter is a limit.Limiter on Redis.
type redisLimiter struct{ k rateKeys }

func (r *redisLimiter) Allow(ctx context.Context, key string) (bool, error) {
	var ok bool
	err := r.k.do(ctx, func(ctx context.Context) error {
		res, err := r.k.l.Allow(ctx, r.k.prefix+key, r.k.limit)
		if err == nil {
			ok = res.Allowed > 0
		}
		return err
	})
	return ok, err
}

// redisMeter is a limit.Meter on Redis.
type redisMeter struct{ k rateKeys }

func (m *redisMeter) Available(ctx context.Context, key string) (int, error) {
	var n int
	err := m.k.do(ctx, func(ctx context.Context) error {
		// A cost of 0 reads the bucket without changing it.
		res, err := m.k.l.AllowN(ctx, m.k.prefix+key, m.k.limit, 0)
		if err == nil {
			n = res.Remaining
		}
		return err
	})
	return n, err
}

func (m *redisMeter) Take(ctx context.Context, key string, n int) error {
	if n <= 0 {
		return nil
	}
	return m.k.do(ctx, func(ctx context.Context) error {
		_, err := m.k.l.AllowAtMost(ctx, m.k.prefix+key, m.k.limit, n)
		return err
	})
}
