package limit

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// ErrOpen is the error of a call a Breaker did not make, because the
// backend failed moments ago.
var ErrOpen = errors.New("failed moments ago; not called again yet")

// Breaker guards calls to a backend that every request may need (a Redis
// behind the shared limiters, the sandbox copies): each call is bounded
// by a timeout, and once Failures calls in a row have failed, calls fail
// at once with ErrOpen instead of each waiting on a backend that is down.
// After Backoff one call is let through as a probe: if it works, calls
// go through again; if not, the breaker stays open for another Backoff.
//
// One failure is not enough to open it, nor many at one moment. A
// process that was paused (by a busy machine, or a debugger) finds its
// calls that were in flight past their deadline all at once when it runs
// again, though the backend is well; and under a burst a single slow
// call says little. So a failure counts towards the run only if its call
// began after the last failure counted: calls that fail together count
// once. A run of failures, each of a call made after the one before had
// failed, with no success between them, does say the backend is down.
// Calls that were in flight when the breaker opened or closed count
// neither way: they tell of the backend as it was.
//
// A call that fails because its caller gave up (the caller's context was
// cancelled or passed its deadline) says nothing about the backend, so it
// counts neither way either: a client that goes away must not turn off a
// limit for everyone else.
//
// Every Redis call of a request passes through a breaker, so it takes no
// lock: under overload a mutex there queues hundreds of requests, each
// waiting for the one before it to be scheduled. A Breaker is safe for
// concurrent use.
type Breaker struct {
	timeout  time.Duration
	failures int32
	backoff  time.Duration
	epoch    time.Time // openUntil counts from it, on the monotonic clock

	// gen changes whenever the breaker opens or closes.
	gen atomic.Uint64
	// run is the count of failures in a row while closed.
	run atomic.Int32
	// lastFail is when the last failure that counted was seen, as
	// time since epoch.
	lastFail atomic.Int64
	// openUntil is when the next probe may go, as time since epoch; 0
	// while closed.
	openUntil atomic.Int64
	// probing is set while a probe runs.
	probing atomic.Bool
}

// BreakerSettings configure a Breaker.
type BreakerSettings struct {
	// Timeout bounds each call; zero is no bound beyond the caller's.
	Timeout time.Duration
	// Failures is how many calls in a row must fail to open the breaker;
	// zero or less is one.
	Failures int
	// Backoff is how long calls fail at once before a probe is let
	// through.
	Backoff time.Duration
}

// NewBreaker returns a closed Breaker.
func NewBreaker(s BreakerSettings) *Breaker {
	return &Breaker{timeout: s.Timeout, failures: int32(max(s.Failures, 1)), backoff: s.Backoff, epoch: time.Now()}
}

// Do runs call, with a context bounded by the breaker's timeout, unless
// the breaker is open. It returns call's error, or one wrapping ErrOpen.
func (b *Breaker) Do(ctx context.Context, call func(context.Context) error) error {
	gen := b.gen.Load()
	if until := b.openUntil.Load(); until != 0 {
		if b.now() < until || !b.probing.CompareAndSwap(false, true) {
			return fmt.Errorf("limit: breaker: %w", ErrOpen)
		}
		defer b.probing.Store(false)
		err := b.call(ctx, call)
		switch {
		case err != nil && ctx.Err() != nil:
			// The caller left: the next call probes.
		case err != nil:
			b.openUntil.Store(b.now() + int64(b.backoff))
		default:
			b.run.Store(0)
			b.openUntil.Store(0)
			b.gen.Add(1)
		}
		return err
	}
	start := b.now()
	err := b.call(ctx, call)
	switch {
	case err != nil && ctx.Err() != nil || b.gen.Load() != gen:
		// The caller left, or the breaker changed meanwhile.
	case err != nil:
		// Made before the last failure counted, or failing as another
		// counts: the same moment.
		last, now := b.lastFail.Load(), b.now()
		if start < last || !b.lastFail.CompareAndSwap(last, now) {
			break
		}
		if b.run.Add(1) >= b.failures && b.openUntil.CompareAndSwap(0, now+int64(b.backoff)) {
			b.gen.Add(1)
		}
	case b.run.Load() != 0:
		b.run.Store(0)
	}
	return err
}

// call runs call with the breaker's timeout.
func (b *Breaker) call(ctx context.Context, call func(context.Context) error) error {
	if b.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, b.timeout)
		defer cancel()
	}
	return call(ctx)
}

// now is the time since the breaker was made; never 0, which openUntil
// keeps for closed.
func (b *Breaker) now() int64 { return int64(time.Since(b.epoch)) + 1 }
