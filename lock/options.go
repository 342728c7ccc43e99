package lock

import (
	"crypto/rand"
	"io"
	mrand "math/rand/v2"
	"time"
)

// Default values used for zero fields of Options.
const (
	DefaultRetryDelay  = 100 * time.Millisecond
	DefaultNodeTimeout = 50 * time.Millisecond
)

// Options configures a Locker or a Redlock. The zero value is ready to use:
// one attempt, crypto/rand tokens, the real clock.
type Options struct {
	// Retries is the number of extra attempts after the first one fails
	// because the lock is taken. Zero means try once.
	Retries int
	// RetryDelay is the mean wait between attempts. Each wait is drawn
	// uniformly from [RetryDelay/2, 3*RetryDelay/2), so that competing
	// clients spread out instead of retrying in step. Zero means
	// DefaultRetryDelay.
	RetryDelay time.Duration
	// NodeTimeout bounds each call to one node. A Redlock uses
	// DefaultNodeTimeout when it is zero, so that a dead node costs little of
	// the TTL; a Locker uses only the caller's context when it is zero.
	NodeTimeout time.Duration
	// Clock measures elapsed time and waits between retries. Nil means
	// RealClock.
	Clock Clock
	// Random supplies the 16 bytes of each token. Nil means crypto/rand. A
	// replacement must be safe for concurrent use if the Locker is shared.
	Random io.Reader
	// Jitter returns a random duration in [0, n) for the retry delays. Nil
	// means math/rand/v2.
	Jitter func(n time.Duration) time.Duration
	// FenceKey names the counter that hands out fencing tokens for key. Nil
	// means key + ":fence".
	FenceKey func(key string) string
}

// withDefaults returns o with its zero fields filled in.
func (o Options) withDefaults() Options {
	if o.RetryDelay <= 0 {
		o.RetryDelay = DefaultRetryDelay
	}
	if o.Clock == nil {
		o.Clock = RealClock{}
	}
	if o.Random == nil {
		o.Random = rand.Reader
	}
	if o.Jitter == nil {
		o.Jitter = func(n time.Duration) time.Duration {
			if n <= 0 {
				return 0
			}
			return mrand.N(n)
		}
	}
	if o.FenceKey == nil {
		o.FenceKey = func(key string) string { return key + ":fence" }
	}
	if o.Retries < 0 {
		o.Retries = 0
	}
	return o
}

// retryDelay returns the wait before the next attempt.
func (o Options) retryDelay() time.Duration {
	return o.RetryDelay/2 + o.Jitter(o.RetryDelay)
}
