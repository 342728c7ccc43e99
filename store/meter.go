package store

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"golang.org/x/time/rate"
)

// Meter measures something that is only known afterwards, such as how long
// a script ran, in units per key: each key has up to burst units, refilled
// at perSecond a second. Callers look before (Available) and take what was
// used after (Take).
type Meter interface {
	// Available returns the units key has now.
	Available(ctx context.Context, key string) (int, error)
	// Take takes n units from key, or all it has if that is fewer.
	Take(ctx context.Context, key string, n int) error
}

// Meter returns a Meter of perSecond units a second per key with bursts of
// burst. With Redis it is shared by every replica (GCRA in Redis, via
// redis_rate); with the file store it lives in this process.
func (s *Store) Meter(perSecond, burst int) Meter {
	if r, ok := s.b.(*redisBackend); ok {
		return &redisMeter{redisLimiter{l: redis_rate.NewLimiter(r.rdb), limit: redis_rate.Limit{Rate: perSecond, Burst: burst, Period: time.Second}, prefix: r.prefix + "meter:"}}
	}
	return NewMemoryMeter(perSecond, burst)
}

type redisMeter struct{ r redisLimiter }

func (m *redisMeter) Available(ctx context.Context, key string) (int, error) {
	var n int
	err := m.r.do(ctx, func(ctx context.Context) error {
		// A cost of 0 reads the bucket without changing it.
		res, err := m.r.l.AllowN(ctx, m.r.prefix+key, m.r.limit, 0)
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
	return m.r.do(ctx, func(ctx context.Context) error {
		_, err := m.r.l.AllowAtMost(ctx, m.r.prefix+key, m.r.limit, n)
		return err
	})
}

// MeterPer is Meter with the refill given per period instead of per
// second: n units every per, for things counted per minute or hour (failed
// sign-ins). With Redis it is shared by every replica.
func (s *Store) MeterPer(n int, per time.Duration, burst int) Meter {
	if r, ok := s.b.(*redisBackend); ok {
		return &redisMeter{redisLimiter{l: redis_rate.NewLimiter(r.rdb), limit: redis_rate.Limit{Rate: n, Burst: burst, Period: per}, prefix: r.prefix + "meter:"}}
	}
	return NewMemoryMeterPer(n, per, burst)
}

// NewMemoryMeterPer returns a MeterPer kept in this process.
func NewMemoryMeterPer(n int, per time.Duration, burst int) Meter {
	m := &memoryMeter{bs: newBuckets(0, burst)}
	m.bs.perSec = rate.Limit(float64(n) / per.Seconds())
	return m
}

// memoryMeter is a Meter kept in this process.
type memoryMeter struct{ bs buckets }

// NewMemoryMeter returns a Meter kept in this process.
func NewMemoryMeter(perSecond, burst int) Meter {
	return &memoryMeter{bs: newBuckets(perSecond, burst)}
}

func (m *memoryMeter) Available(_ context.Context, key string) (int, error) {
	now := time.Now()
	m.bs.mu.Lock()
	defer m.bs.mu.Unlock()
	return int(math.Floor(m.bs.get(key, now).TokensAt(now))), nil
}

func (m *memoryMeter) Take(_ context.Context, key string, n int) error {
	if n <= 0 {
		return nil
	}
	now := time.Now()
	m.bs.mu.Lock()
	defer m.bs.mu.Unlock()
	l := m.bs.get(key, now)
	if have := int(math.Floor(l.TokensAt(now))); n > have {
		n = have
	}
	if n > 0 && !l.AllowN(now, n) {
		return fmt.Errorf("store: meter: could not take %d units", n)
	}
	return nil
}
