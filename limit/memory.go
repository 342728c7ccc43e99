package limit

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Memory makes limiters and meters kept in this process: token buckets
// per key, forgotten when idle, so they stay small however many keys pass
// through. They serve one server; several replicas share the store's.
type Memory struct {
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// NewMemoryLimiter returns a Limiter kept in this process.
func NewMemoryLimiter(perSecond, burst int) Limiter { return Memory{}.Limiter(perSecond, burst) }

// NewMemoryMeter returns a Meter kept in this process.
func NewMemoryMeter(perSecond, burst int) Meter { return Memory{}.Meter(perSecond, burst) }

// NewMemoryMeterPer returns a Meter kept in this process refilled n units
// every per.
func NewMemoryMeterPer(n int, per time.Duration, burst int) Meter {
	return Memory{}.MeterPer(n, per, burst)
}

// Limiter returns a Limiter of perSecond events a second per key with
// bursts of burst.
func (m Memory) Limiter(perSecond, burst int) Limiter {
	return &memoryLimiter{bs: m.buckets(rate.Limit(perSecond), burst)}
}

// Meter returns a Meter of perSecond units a second per key, up to burst.
func (m Memory) Meter(perSecond, burst int) Meter {
	return &memoryMeter{bs: m.buckets(rate.Limit(perSecond), burst)}
}

// MeterPer returns a Meter of n units every per, per key, up to burst.
func (m Memory) MeterPer(n int, per time.Duration, burst int) Meter {
	return &memoryMeter{bs: m.buckets(rate.Limit(float64(n)/per.Seconds()), burst)}
}

func (m Memory) buckets(perSec rate.Limit, burst int) *buckets {
	now := m.Now
	if now == nil {
		now = time.Now
	}
	return &buckets{now: now, perSec: perSec, burst: burst, byKey: map[string]*bucket{}}
}

// buckets keeps a token bucket per key and forgets keys idle for a few
// minutes once their bucket is full again: a bucket refilled over hours
// or a day (MeterPer) is kept until then, as forgetting it would hand the
// key a full one early.
type buckets struct {
	now    func() time.Time
	perSec rate.Limit
	burst  int

	mu    sync.Mutex
	byKey map[string]*bucket
	calls int
}

type bucket struct {
	l    *rate.Limiter
	seen time.Time
}

// idleBucket is how long a key's bucket is kept unused; a key seen again
// after that starts with a full bucket.
const idleBucket = 5 * time.Minute

// sweepEvery is how many calls pass between sweeps of idle buckets.
const sweepEvery = 1024

// get returns key's bucket, made on first use. Its caller holds mu.
func (bs *buckets) get(key string, now time.Time) *rate.Limiter {
	if bs.calls++; bs.calls%sweepEvery == 0 {
		for k, b := range bs.byKey {
			if now.Sub(b.seen) > idleBucket && b.l.TokensAt(now) >= float64(bs.burst) {
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
type memoryLimiter struct{ bs *buckets }

func (m *memoryLimiter) Allow(_ context.Context, key string) (bool, error) {
	now := m.bs.now()
	m.bs.mu.Lock()
	defer m.bs.mu.Unlock()
	return m.bs.get(key, now).AllowN(now, 1), nil
}

// memoryMeter is a Meter kept in this process.
type memoryMeter struct{ bs *buckets }

func (m *memoryMeter) Available(_ context.Context, key string) (int, error) {
	now := m.bs.now()
	m.bs.mu.Lock()
	defer m.bs.mu.Unlock()
	return int(math.Floor(m.bs.get(key, now).TokensAt(now))), nil
}

func (m *memoryMeter) Take(_ context.Context, key string, n int) error {
	if n <= 0 {
		return nil
	}
	now := m.bs.now()
	m.bs.mu.Lock()
	defer m.bs.mu.Unlock()
	l := m.bs.get(key, now)
	if have := int(math.Floor(l.TokensAt(now))); n > have {
		n = have
	}
	if n > 0 && !l.AllowN(now, n) {
		return fmt.Errorf("limit: meter: could not take %d units", n)
	}
	return nil
}
