package limit

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestBreaker checks when a failed call opens the breaker: a backend's
// failure does, the caller's own cancellation or deadline does not.
func TestBreaker(t *testing.T) {
	for _, tt := range []struct {
		name string
		// ctx is the caller's context; call is the failed call.
		ctx      func() context.Context
		call     func(context.Context) error
		wantOpen bool
	}{
		{
			name:     "the backend fails",
			ctx:      context.Background,
			call:     func(context.Context) error { return errDown },
			wantOpen: true,
		},
		{
			name: "the call runs into the breaker's timeout",
			ctx:  context.Background,
			call: func(ctx context.Context) error {
				<-ctx.Done() // the breaker's Timeout ends it
				return ctx.Err()
			},
			wantOpen: true,
		},
		{
			name: "the caller cancels",
			ctx: func() context.Context {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx
			},
			call:     func(ctx context.Context) error { return ctx.Err() },
			wantOpen: false,
		},
		{
			name: "the caller's deadline passes",
			ctx: func() context.Context {
				ctx, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
				t.Cleanup(cancel)
				return ctx
			},
			call:     func(ctx context.Context) error { return ctx.Err() },
			wantOpen: false,
		},
		{
			name: "the caller goes away while the backend fails",
			ctx: func() context.Context {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx
			},
			call:     func(context.Context) error { return errDown },
			wantOpen: false,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			b := &Breaker{Timeout: time.Millisecond, Backoff: 2 * time.Second, Now: clk.Now}
			if err := b.Do(tt.ctx(), tt.call); err == nil {
				t.Fatal("Do returned nil; want the call's error")
			}
			called := false
			err := b.Do(context.Background(), func(context.Context) error { called = true; return nil })
			if open := errors.Is(err, ErrOpen); open != tt.wantOpen || called == open {
				t.Errorf("next Do = %v, called %v; want open %v", err, called, tt.wantOpen)
			}
		})
	}
}

// TestBreakerBackoff checks that an open breaker fails at once until its
// Backoff has passed, then calls again, and that a success keeps it
// closed.
func TestBreakerBackoff(t *testing.T) {
	ctx := context.Background()
	clk := newFakeClock()
	b := &Breaker{Backoff: 2 * time.Second, Now: clk.Now}
	calls := 0
	fail := func(context.Context) error { calls++; return errDown }
	ok := func(context.Context) error { calls++; return nil }
	for _, tt := range []struct {
		name    string
		advance time.Duration
		call    func(context.Context) error
		want    error
		calls   int
	}{
		{"first call fails", 0, fail, errDown, 1},
		{"at once after", 0, ok, ErrOpen, 1},
		{"just before the backoff ends", 2*time.Second - 1, ok, ErrOpen, 1},
		{"when the backoff ends", 1, ok, nil, 2},
		{"after a success", 0, ok, nil, 3},
	} {
		clk.Advance(tt.advance)
		err := b.Do(ctx, tt.call)
		if !errors.Is(err, tt.want) || (tt.want == nil && err != nil) || calls != tt.calls {
			t.Errorf("%s: Do = %v after %d calls; want %v after %d", tt.name, err, calls, tt.want, tt.calls)
		}
	}
}

// TestBreakerTimeout checks that each call gets a context bounded by
// Timeout, and the zero Breaker none.
func TestBreakerTimeout(t *testing.T) {
	for _, tt := range []struct {
		timeout      time.Duration
		wantDeadline bool
	}{{0, false}, {200 * time.Millisecond, true}} {
		b := &Breaker{Timeout: tt.timeout}
		var left time.Duration
		var has bool
		b.Do(context.Background(), func(ctx context.Context) error {
			var d time.Time
			d, has = ctx.Deadline()
			left = time.Until(d)
			return nil
		})
		if has != tt.wantDeadline || (has && (left <= 0 || left > tt.timeout)) {
			t.Errorf("Timeout %v: call's deadline %v (set %v); want set %v, within the timeout", tt.timeout, left, has, tt.wantDeadline)
		}
	}
}
