package lock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// redlockOpts gives the nodes a per-node timeout generous enough for a
// loaded test machine running with -race.
func redlockOpts(clock Clock) Options {
	return Options{Clock: clock, NodeTimeout: time.Second}
}

func TestRedlockAcquire(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		_, nodes := startN(t, b, 5)
		clock := newFakeClock()
		start := clock.Now()
		rl := NewRedlock(nodes, redlockOpts(clock))
		if rl.Quorum() != 3 {
			t.Errorf("Quorum() = %d; want 3", rl.Quorum())
		}
		l, err := rl.Acquire(context.Background(), "job", ttl)
		if err != nil {
			t.Fatalf("Acquire: %v", err)
		}
		for i, n := range nodes {
			if got := get(t, n, "job"); got != l.Token() {
				t.Errorf("node %d: GET job = %q; want the token %q", i, got, l.Token())
			}
		}
		drift := ttl/100 + 2*time.Millisecond
		if got, want := l.Until(), start.Add(ttl-drift); !got.Equal(want) {
			t.Errorf("Until() = %v; want %v", got, want)
		}
		if l.Fence() != 0 {
			t.Errorf("Fence() = %d; want 0 (Redlock has no fencing token)", l.Fence())
		}
	})
}

// A majority is enough; a minority is not, and what was taken is given back.
func TestRedlockMajority(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		for _, tt := range []struct {
			name  string
			taken int // nodes on which another client holds the key
			want  error
		}{
			{name: "all free", taken: 0},
			{name: "two taken", taken: 2},
			{name: "three taken", taken: 3, want: ErrNotAcquired},
			{name: "all taken", taken: 5, want: ErrNotAcquired},
		} {
			t.Run(tt.name, func(t *testing.T) {
				_, nodes := startN(t, b, 5)
				for _, n := range nodes[:tt.taken] {
					set(t, n, "job", "someone-else", ttl)
				}
				l, err := NewRedlock(nodes, redlockOpts(nil)).Acquire(context.Background(), "job", ttl)
				if !errors.Is(err, tt.want) {
					t.Fatalf("Acquire with %d of 5 taken: error %v; want %v", tt.taken, err, tt.want)
				}
				for i, n := range nodes {
					want := ""
					switch {
					case i < tt.taken:
						want = "someone-else"
					case l != nil:
						want = l.Token()
					}
					if got := get(t, n, "job"); got != want {
						t.Errorf("node %d: GET job = %q; want %q", i, got, want)
					}
				}
			})
		}
	})
}

func TestRedlockUnreachableNodes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		for _, tt := range []struct {
			name          string
			live, dead    int
			silent        int
			wantAcquired  bool
			wantReleaseOK bool
		}{
			{name: "two dead", live: 3, dead: 2, wantAcquired: true},
			{name: "three dead", live: 2, dead: 3},
			{name: "one silent", live: 4, silent: 1, wantAcquired: true},
		} {
			t.Run(tt.name, func(t *testing.T) {
				_, nodes := startN(t, b, tt.live)
				for range tt.dead {
					nodes = append(nodes, newClient(t, deadAddr(t)))
				}
				for range tt.silent {
					nodes = append(nodes, newClient(t, silentAddr(t)))
				}
				opts := Options{NodeTimeout: 200 * time.Millisecond}
				l, err := NewRedlock(nodes, opts).Acquire(context.Background(), "job", ttl)
				if got := err == nil; got != tt.wantAcquired {
					t.Fatalf("Acquire with %d live of %d: error %v; want acquired %v", tt.live, len(nodes), err, tt.wantAcquired)
				}
				if err != nil && !errors.Is(err, ErrNotAcquired) {
					t.Errorf("Acquire error %v; want ErrNotAcquired", err)
				}
				for i, n := range nodes[:tt.live] {
					want := ""
					if l != nil {
						want = l.Token()
					}
					if got := get(t, n, "job"); got != want {
						t.Errorf("node %d: GET job = %q; want %q", i, got, want)
					}
				}
			})
		}
	})
}

// An attempt that took too long leaves no validity: the lock is not held
// even though every node said yes.
func TestRedlockValidity(t *testing.T) {
	drift := ttl/100 + 2*time.Millisecond
	forEachBackend(t, func(t *testing.T, b backend) {
		for _, tt := range []struct {
			elapsed time.Duration
			want    error
		}{
			{elapsed: 0},
			{elapsed: ttl - drift - time.Millisecond},
			{elapsed: ttl - drift, want: ErrNotAcquired},
			{elapsed: 2 * ttl, want: ErrNotAcquired},
		} {
			t.Run(tt.elapsed.String(), func(t *testing.T) {
				_, nodes := startN(t, b, 3)
				clock := newFakeClock()
				start := clock.Now()
				clock.SetStep(tt.elapsed)
				l, err := NewRedlock(nodes, redlockOpts(clock)).Acquire(context.Background(), "job", ttl)
				if !errors.Is(err, tt.want) {
					t.Fatalf("Acquire taking %v: error %v; want %v", tt.elapsed, err, tt.want)
				}
				if l != nil {
					if got, want := l.Until(), start.Add(ttl-drift); !got.Equal(want) {
						t.Errorf("Until() = %v; want %v", got, want)
					}
					return
				}
				for i, n := range nodes {
					if got := get(t, n, "job"); got != "" {
						t.Errorf("node %d: GET job = %q; want released", i, got)
					}
				}
			})
		}
	})
}

func TestRedlockReleaseAndExtend(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		servers, nodes := startN(t, b, 5)
		ctx := context.Background()
		rl := NewRedlock(nodes, redlockOpts(nil))
		l, err := rl.Acquire(ctx, "job", ttl)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Extend(ctx, 3*ttl); err != nil {
			t.Fatalf("Extend: %v", err)
		}
		for i, n := range nodes {
			if d := pttl(t, n, "job"); d <= ttl {
				t.Errorf("node %d: PTTL after Extend(%v) = %v; want more than %v", i, 3*ttl, d, ttl)
			}
		}
		if err := l.Release(ctx); err != nil {
			t.Fatalf("Release: %v", err)
		}
		for i, n := range nodes {
			if got := get(t, n, "job"); got != "" {
				t.Errorf("node %d: GET job after Release = %q; want no key", i, got)
			}
		}
		if err := l.Release(ctx); !errors.Is(err, ErrNotHeld) {
			t.Errorf("second Release() = %v; want ErrNotHeld", err)
		}

		// Lost on three nodes: extending must fail, on two it is still held.
		l, err = rl.Acquire(ctx, "job", ttl)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range servers[:2] {
			s.expire(t, "job")
		}
		if err := l.Extend(ctx, ttl); err != nil {
			t.Errorf("Extend with 3 of 5 = %v; want nil", err)
		}
		servers[2].expire(t, "job")
		if err := l.Extend(ctx, ttl); !errors.Is(err, ErrNotHeld) {
			t.Errorf("Extend with 2 of 5 = %v; want ErrNotHeld", err)
		}
	})
}

func TestRedlockRetries(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		servers, nodes := startN(t, b, 5)
		for _, n := range nodes[:3] {
			set(t, n, "job", "someone-else", ttl)
		}
		clock := newFakeClock()
		clock.OnSleep(func(n int) error {
			if n == 1 {
				for _, s := range servers[:3] {
					s.expire(t, "job")
				}
			}
			return nil
		})
		opts := redlockOpts(clock)
		opts.Retries = 3
		if _, err := NewRedlock(nodes, opts).Acquire(context.Background(), "job", ttl); err != nil {
			t.Fatalf("Acquire with retries: %v", err)
		}
		if n := len(clock.Sleeps()); n != 1 {
			t.Errorf("waited %d times; want 1", n)
		}
	})
}

func TestRedlockNoNodes(t *testing.T) {
	_, err := NewRedlock([]redis.Scripter{}, Options{}).Acquire(context.Background(), "job", ttl)
	if err == nil {
		t.Errorf("Acquire with no nodes = nil; want an error")
	}
}
