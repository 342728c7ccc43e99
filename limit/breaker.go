package limit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrOpen is the error of a call a Breaker did not make, because the
// backend failed moments ago.
var ErrOpen = errors.New("failed moments ago; not called again yet")

// Breaker guards calls to a backend that every request may need (a Redis
// behind the shared limiters, the sandbox copies): each call is bounded
// by Timeout, and after one fails, calls fail at once with ErrOpen for
// Backoff instead of each waiting on a backend that is down.
//
// A call that fails because its caller gave up (the caller's context was
// cancelled or passed its deadline) says nothing about the backend, so it
// does not open the breaker: a client that goes away must not turn off a
// limit for everyone else. The zero Breaker makes every call, unbounded,
// and never opens. A Breaker is safe for concurrent use.
type Breaker struct {
	// Timeout bounds each call; zero is no bound beyond the caller's.
	Timeout time.Duration
	// Backoff is how long calls fail at once after one failed.
	Backoff time.Duration
	// Now is the clock; nil is time.Now.
	Now func() time.Time

	mu        sync.Mutex
	openUntil time.Time
}

// Do runs call, with a context bounded by Timeout, unless the breaker is
// open. It returns call's error, or one wrapping ErrOpen.
func (b *Breaker) Do(ctx context.Context, call func(context.Context) error) error {
	if b.open() {
		return fmt.Errorf("limit: breaker: %w", ErrOpen)
	}
	callCtx := ctx
	if b.Timeout > 0 {
		var cancel context.CancelFunc
		callCtx, cancel = context.WithTimeout(ctx, b.Timeout)
		defer cancel()
	}
	err := call(callCtx)
	if err != nil && ctx.Err() == nil {
		b.trip()
	}
	return err
}

func (b *Breaker) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

func (b *Breaker) open() bool {
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	return now.Before(b.openUntil)
}

func (b *Breaker) trip() {
	until := b.now().Add(b.Backoff)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.openUntil = until
}
