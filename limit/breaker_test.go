package limit

import (
	"context"
	"errors"
	"sync"
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
			b := NewBreaker(BreakerSettings{Timeout: time.Millisecond, Backoff: time.Minute})
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

// TestBreakerRun checks that only a run of failures opens a breaker:
// a success between failures starts the count again, and a caller's own
// cancellation neither counts nor breaks the run.
func TestBreakerRun(t *testing.T) {
	ctx := context.Background()
	gone, cancel := context.WithCancel(ctx)
	cancel()
	b := NewBreaker(BreakerSettings{Failures: 3, Backoff: time.Minute})
	calls := 0
	fail := func(context.Context) error { calls++; return errDown }
	ok := func(context.Context) error { calls++; return nil }
	for i, tt := range []struct {
		ctx   context.Context
		call  func(context.Context) error
		want  error
		calls int
	}{
		{ctx, fail, errDown, 1},
		{ctx, fail, errDown, 2},
		{ctx, ok, nil, 3}, // the run ends
		{ctx, fail, errDown, 4},
		{ctx, fail, errDown, 5},
		{gone, fail, errDown, 6}, // counts neither way
		{ctx, fail, errDown, 7},  // the third in a row opens it
		{ctx, ok, ErrOpen, 7},
	} {
		err := b.Do(tt.ctx, tt.call)
		if !errors.Is(err, tt.want) || (tt.want == nil && err != nil) || calls != tt.calls {
			t.Errorf("call %d: Do = %v after %d calls; want %v after %d", i+1, err, calls, tt.want, tt.calls)
		}
	}
}

// TestBreakerProbe checks that an open breaker lets one call through
// after its Backoff, fails the others at once while that probe runs, and
// closes when the probe works or stays open when it fails.
func TestBreakerProbe(t *testing.T) {
	ctx := context.Background()
	const backoff = 200 * time.Millisecond
	b := NewBreaker(BreakerSettings{Backoff: backoff})
	calls := 0
	fail := func(context.Context) error { calls++; return errDown }
	ok := func(context.Context) error { calls++; return nil }
	if err := b.Do(ctx, fail); !errors.Is(err, errDown) {
		t.Fatalf("first Do = %v; want the call's error", err)
	}
	if err := b.Do(ctx, ok); !errors.Is(err, ErrOpen) || calls != 1 {
		t.Fatalf("Do at once after a failure = %v after %d calls; want ErrOpen after 1", err, calls)
	}

	// The probe fails: the breaker opens again for another Backoff.
	time.Sleep(2 * backoff)
	if err := b.Do(ctx, fail); !errors.Is(err, errDown) || calls != 2 {
		t.Fatalf("probe = %v after %d calls; want the call's error after 2", err, calls)
	}
	if err := b.Do(ctx, ok); !errors.Is(err, ErrOpen) || calls != 2 {
		t.Fatalf("Do after a failed probe = %v after %d calls; want ErrOpen after 2", err, calls)
	}

	// The next probe works; while it runs, other calls fail at once.
	time.Sleep(2 * backoff)
	running, finish := make(chan struct{}), make(chan struct{})
	probed := make(chan error)
	go func() {
		probed <- b.Do(ctx, func(context.Context) error { close(running); <-finish; return nil })
	}()
	<-running
	if err := b.Do(ctx, ok); !errors.Is(err, ErrOpen) || calls != 2 {
		t.Errorf("Do during the probe = %v after %d calls; want ErrOpen after 2", err, calls)
	}
	close(finish)
	if err := <-probed; err != nil {
		t.Fatalf("probe = %v; want nil", err)
	}
	for i := range 3 {
		if err := b.Do(ctx, ok); err != nil || calls != 3+i {
			t.Errorf("Do after a good probe = %v after %d calls; want nil after %d", err, calls, 3+i)
		}
	}
}

// TestBreakerTimeout checks that each call gets a context bounded by
// Timeout, and none when Timeout is zero.
func TestBreakerTimeout(t *testing.T) {
	for _, tt := range []struct {
		timeout      time.Duration
		wantDeadline bool
	}{{0, false}, {200 * time.Millisecond, true}} {
		b := NewBreaker(BreakerSettings{Timeout: tt.timeout, Backoff: time.Minute})
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

// TestBreakerInFlight checks that a call in flight while the breaker
// opened and closed again counts neither way when it ends: a replica's
// calls that were waiting when Redis failed must not open the breaker
// again once a probe has found Redis back.
func TestBreakerInFlight(t *testing.T) {
	ctx := context.Background()
	const backoff = 50 * time.Millisecond
	b := NewBreaker(BreakerSettings{Failures: 2, Backoff: backoff})
	fail := func(context.Context) error { return errDown }
	ok := func(context.Context) error { return nil }
	started, finish := make(chan struct{}), make(chan struct{})
	late := make(chan error)
	go func() {
		late <- b.Do(ctx, func(context.Context) error { close(started); <-finish; return errDown })
	}()
	<-started
	b.Do(ctx, fail)
	b.Do(ctx, fail)
	if err := b.Do(ctx, ok); !errors.Is(err, ErrOpen) {
		t.Fatalf("Do after 2 failures = %v; want ErrOpen", err)
	}
	time.Sleep(2 * backoff)
	if err := b.Do(ctx, ok); err != nil {
		t.Fatalf("probe = %v; want nil", err)
	}
	close(finish)
	if err := <-late; !errors.Is(err, errDown) {
		t.Fatalf("the late call = %v; want its own error", err)
	}
	b.Do(ctx, fail) // one failure: with the late call counted, two in a row
	if err := b.Do(ctx, ok); err != nil {
		t.Errorf("Do after the late call and one failure = %v; want nil, the breaker closed", err)
	}
}

// TestBreakerFailuresTogether checks that calls failing together (made
// before any of them had failed, as the calls in flight when a paused
// process runs again) count as one failure, and that a call made after
// them counts as the next.
func TestBreakerFailuresTogether(t *testing.T) {
	ctx := context.Background()
	b := NewBreaker(BreakerSettings{Failures: 2, Backoff: time.Minute})
	const together = 8
	var wg sync.WaitGroup
	var inFlight sync.WaitGroup
	inFlight.Add(together)
	fail := make(chan struct{})
	for range together {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.Do(ctx, func(context.Context) error { inFlight.Done(); <-fail; return errDown })
		}()
	}
	inFlight.Wait() // every call has begun
	close(fail)
	wg.Wait()
	ok := func(context.Context) error { return nil }
	if err := b.Do(ctx, func(context.Context) error { return errDown }); !errors.Is(err, errDown) {
		t.Fatalf("Do after %d failures together = %v; want the call made, as they count once", together, err)
	}
	if err := b.Do(ctx, ok); !errors.Is(err, ErrOpen) {
		t.Errorf("Do after the failures together and one more = %v; want ErrOpen, two in a row", err)
	}
}
