package store

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"golang.org/x/time/rate"
)

// Limiter lets at most a set number of events per second through for each
// key (a learner, an address), with short bursts.
type Limiter interface {
	Allow(ctx context.Context, key string) (bool, error)
}

// Limiter returns a rate limiter of perSecond events per key with bursts
// of burst. With Redis it is shared by every replica (GCRA in Redis, via
// redis_rate); with the file store it lives in this process.
func (s *Store) Limiter(perSecond, burst int) Limiter {
	if r, ok := s.b.(*redisBackend); ok {
		return &redisLimiter{l: redis_rate.NewLimiter(r.rdb), limit: redis_rate.Limit{Rate: perSecond, Burst: burst, Period: time.Second}, prefix: r.prefix + "rate:"}
	}
	return NewMemoryLimiter(perSecond, burst)
}

type redisLimiter struct {
	l      *redis_rate.Limiter
	limit  redis_rate.Limit
	prefix string

	mu        sync.Mutex
	downUntil time.Time // after a failure, do not wait on Redis again for a while
}

// limiterTimeout is short: a limiter must never be what makes a request slow.
const (
	limiterTimeout = 200 * time.Millisecond
	limiterBackoff = 2 * time.Second
)

func (r *redisLimiter) Allow(ctx context.Context, key string) (bool, error) {
	var ok bool
	err := r.do(ctx, func(ctx context.Context) error {
		res, err := r.l.Allow(ctx, r.prefix+key, r.limit)
		if err == nil {
			ok = res.Allowed > 0
		}
		return err
	})
	return ok, err
}

// do runs one call to Redis with a short timeout; after a failure, calls
// fail at once for a while instead of waiting on Redis again.
func (r *redisLimiter) do(ctx context.Context, call func(context.Context) error) error {
	r.mu.Lock()
	down := time.Now().Before(r.downUntil)
	r.mu.Unlock()
	if down {
		return fmt.Errorf("store: rate limit: %w: recently unreachable", ErrUnavailable)
	}
	ctx, cancel := context.WithTimeout(ctx, limiterTimeout)
	defer cancel()
	if err := call(ctx); err != nil {
		r.mu.Lock()
		r.downUntil = time.Now().Add(limiterBackoff)
		r.mu.Unlock()
		return fmt.Errorf("store: rate limit: %w", unavailable(err))
	}
	return nil
}

// buckets keeps a token bucket per key and forgets keys idle for a few
// minutes, so it stays small however many keys pass through. Its caller
// holds mu.
type buckets struct {
	mu     sync.Mutex
	perSec rate.Limit
	burst  int
	byKey  map[string]*bucket
	calls  int
}

type bucket struct {
	l    *rate.Limiter
	seen time.Time
}

const idleBucket = 5 * time.Minute

func newBuckets(perSecond, burst int) buckets {
	return buckets{perSec: rate.Limit(perSecond), burst: burst, byKey: map[string]*bucket{}}
}

// get returns key's bucket, made on first use.
func (bs *buckets) get(key string, now time.Time) *rate.Limiter {
	if bs.calls++; bs.calls%1024 == 0 {
		for k, b := range bs.byKey {
			if now.Sub(b.seen) > idleBucket {
				delete(bs.byKey, k)
			}
		}
	}
	b, ok := bs.byKey[key]
	if !ok {
		b = &bucket{l: rate.NewLimiter(bs.perSec, bs.burst)}
		bs.byKey[key] = b
	}
	b.seen = now
	return b.l
}

// memoryLimiter is a Limiter kept in this process.
type memoryLimiter struct{ bs buckets }

// NewMemoryLimiter returns a Limiter kept in this process.
func NewMemoryLimiter(perSecond, burst int) Limiter {
	return &memoryLimiter{bs: newBuckets(perSecond, burst)}
}

func (m *memoryLimiter) Allow(_ context.Context, key string) (bool, error) {
	now := time.Now()
	m.bs.mu.Lock()
	defer m.bs.mu.Unlock()
	return m.bs.get(key, now).AllowN(now, 1), nil
}
