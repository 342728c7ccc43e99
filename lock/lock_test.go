package lock

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

const ttl = 10 * time.Second

func TestAcquire(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.start(t)
		ctx := context.Background()
		l, err := New(s.client, Options{}).Acquire(ctx, "job", ttl)
		if err != nil {
			t.Fatalf("Acquire(%q) error: %v", "job", err)
		}
		if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(l.Token()) {
			t.Errorf("Token() = %q; want 32 hex digits", l.Token())
		}
		if got := get(t, s.client, "job"); got != l.Token() {
			t.Errorf("GET job = %q; want the token %q", got, l.Token())
		}
		if d := pttl(t, s.client, "job"); d <= 0 || d > ttl {
			t.Errorf("PTTL job = %v; want in (0, %v]", d, ttl)
		}
		if l.Fence() != 1 || l.Key() != "job" || l.TTL() != ttl {
			t.Errorf("Fence(), Key(), TTL() = %d, %q, %v; want 1, %q, %v", l.Fence(), l.Key(), l.TTL(), "job", ttl)
		}

		_, err = New(s.client, Options{}).Acquire(ctx, "job", ttl)
		if !errors.Is(err, ErrNotAcquired) {
			t.Errorf("second Acquire(%q) error = %v; want ErrNotAcquired", "job", err)
		}
	})
}

func TestFenceGrowsWithEveryGrant(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.start(t)
		ctx := context.Background()
		set(t, s.client, "job:fence", "32", 0)
		lk := New(s.client, Options{})
		var fences []int64
		for range 3 {
			l, err := lk.Acquire(ctx, "job", ttl)
			if err != nil {
				t.Fatalf("Acquire: %v", err)
			}
			fences = append(fences, l.Fence())
			// A failed attempt must not use up a fencing token.
			if _, err := lk.Acquire(ctx, "job", ttl); !errors.Is(err, ErrNotAcquired) {
				t.Fatalf("Acquire while held: %v; want ErrNotAcquired", err)
			}
			if err := l.Release(ctx); err != nil {
				t.Fatalf("Release: %v", err)
			}
		}
		if want := []int64{33, 34, 35}; !slices.Equal(fences, want) {
			t.Errorf("fences = %v; want %v", fences, want)
		}
	})
}

func TestRelease(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.start(t)
		ctx := context.Background()
		l, err := New(s.client, Options{}).Acquire(ctx, "job", ttl)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatalf("Release() = %v; want nil", err)
		}
		if got := get(t, s.client, "job"); got != "" {
			t.Errorf("GET job after Release = %q; want no key", got)
		}
		if err := l.Release(ctx); !errors.Is(err, ErrNotHeld) {
			t.Errorf("second Release() = %v; want ErrNotHeld", err)
		}
	})
}

// A holder whose lock expired and went to someone else must not delete the
// new holder's key: that is the point of the compare-and-delete script.
func TestReleaseAfterExpiryKeepsOtherHolder(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.start(t)
		ctx := context.Background()
		lk := New(s.client, Options{})
		first, err := lk.Acquire(ctx, "job", ttl)
		if err != nil {
			t.Fatal(err)
		}
		s.expire(t, "job")
		second, err := lk.Acquire(ctx, "job", ttl)
		if err != nil {
			t.Fatalf("Acquire after expiry: %v", err)
		}
		if err := first.Release(ctx); !errors.Is(err, ErrNotHeld) {
			t.Errorf("stale Release() = %v; want ErrNotHeld", err)
		}
		if got := get(t, s.client, "job"); got != second.Token() {
			t.Errorf("GET job = %q; want the second holder's token %q", got, second.Token())
		}
		if second.Fence() <= first.Fence() {
			t.Errorf("fences %d then %d; want growing", first.Fence(), second.Fence())
		}
	})
}

func TestExtend(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.start(t)
		ctx := context.Background()
		clock := newFakeClock()
		lk := New(s.client, Options{Clock: clock})
		l, err := lk.Acquire(ctx, "job", ttl)
		if err != nil {
			t.Fatal(err)
		}
		start := clock.Now()
		if err := l.Extend(ctx, 3*ttl); err != nil {
			t.Fatalf("Extend(%v) = %v; want nil", 3*ttl, err)
		}
		if d := pttl(t, s.client, "job"); d <= ttl {
			t.Errorf("PTTL after Extend(%v) = %v; want more than %v", 3*ttl, d, ttl)
		}
		if got, want := l.Until(), start.Add(3*ttl); !got.Equal(want) {
			t.Errorf("Until() = %v; want %v", got, want)
		}
		if l.TTL() != 3*ttl {
			t.Errorf("TTL() = %v; want %v", l.TTL(), 3*ttl)
		}

		s.expire(t, "job")
		if err := l.Extend(ctx, ttl); !errors.Is(err, ErrNotHeld) {
			t.Errorf("Extend after expiry = %v; want ErrNotHeld", err)
		}
		other, err := lk.Acquire(ctx, "job", ttl)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Extend(ctx, 3*ttl); !errors.Is(err, ErrNotHeld) {
			t.Errorf("Extend of a lock now held by another = %v; want ErrNotHeld", err)
		}
		if d := pttl(t, s.client, "job"); d > ttl {
			t.Errorf("PTTL of the other holder's key = %v; want at most %v", d, ttl)
		}
		if got := get(t, s.client, "job"); got != other.Token() {
			t.Errorf("GET job = %q; want %q", got, other.Token())
		}
	})
}

func TestAcquireRetriesUntilFree(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.start(t)
		ctx := context.Background()
		if _, err := New(s.client, Options{}).Acquire(ctx, "job", ttl); err != nil {
			t.Fatal(err)
		}
		clock := newFakeClock()
		clock.OnSleep(func(n int) error {
			if n == 2 {
				s.expire(t, "job") // the holder's TTL runs out during the second wait
			}
			return nil
		})
		const delay = 40 * time.Millisecond
		l, err := New(s.client, Options{Retries: 5, RetryDelay: delay, Clock: clock}).Acquire(ctx, "job", ttl)
		if err != nil {
			t.Fatalf("Acquire with retries: %v", err)
		}
		sleeps := clock.Sleeps()
		if len(sleeps) != 2 {
			t.Errorf("waited %d times (%v); want 2", len(sleeps), sleeps)
		}
		for _, d := range sleeps {
			if d < delay/2 || d >= 3*delay/2 {
				t.Errorf("retry delay %v; want in [%v, %v)", d, delay/2, 3*delay/2)
			}
		}
		if l.Fence() != 2 {
			t.Errorf("Fence() = %d; want 2", l.Fence())
		}
	})
}

func TestAcquireGivesUp(t *testing.T) {
	m := miniredis.RunT(t)
	c := newClient(t, m.Addr())
	ctx := context.Background()
	if _, err := New(c, Options{}).Acquire(ctx, "job", ttl); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name    string
		retries int
		onSleep func(int) error
		want    error
	}{
		{name: "retries used up", retries: 3, want: ErrNotAcquired},
		{name: "context canceled", retries: 3, onSleep: func(int) error { return context.Canceled }, want: context.Canceled},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clock := newFakeClock()
			clock.OnSleep(tt.onSleep)
			_, err := New(c, Options{Retries: tt.retries, Clock: clock}).Acquire(ctx, "job", ttl)
			if !errors.Is(err, tt.want) {
				t.Errorf("Acquire() error = %v; want %v", err, tt.want)
			}
		})
	}
}

// Jitter is what spreads out clients that collided: the delays it returns
// are used as they are.
func TestRetryDelayUsesJitter(t *testing.T) {
	for _, tt := range []struct {
		base, jitter, want time.Duration
	}{
		{base: 100 * time.Millisecond, jitter: 0, want: 50 * time.Millisecond},
		{base: 100 * time.Millisecond, jitter: 99 * time.Millisecond, want: 149 * time.Millisecond},
		{base: 0, jitter: 7 * time.Millisecond, want: DefaultRetryDelay/2 + 7*time.Millisecond},
	} {
		var asked time.Duration
		o := Options{RetryDelay: tt.base, Jitter: func(n time.Duration) time.Duration { asked = n; return tt.jitter }}.withDefaults()
		if got := o.retryDelay(); got != tt.want {
			t.Errorf("retryDelay(base %v, jitter %v) = %v; want %v", tt.base, tt.jitter, got, tt.want)
		}
		if asked != o.RetryDelay {
			t.Errorf("Jitter asked for [0, %v); want [0, %v)", asked, o.RetryDelay)
		}
	}
}

func TestTokenComesFromRandom(t *testing.T) {
	m := miniredis.RunT(t)
	c := newClient(t, m.Addr())
	src := bytes.NewReader([]byte("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"))
	l, err := New(c, Options{Random: src}).Acquire(context.Background(), "job", ttl)
	if err != nil {
		t.Fatal(err)
	}
	if want := "000102030405060708090a0b0c0d0e0f"; l.Token() != want {
		t.Errorf("Token() = %q; want %q", l.Token(), want)
	}
}

func TestAcquireErrors(t *testing.T) {
	m := miniredis.RunT(t)
	c := newClient(t, m.Addr())
	dead := newClient(t, deadAddr(t))
	for _, tt := range []struct {
		name   string
		client *redis.Client
		opts   Options
		key    string
		ttl    time.Duration
		want   string
	}{
		{name: "empty key", client: c, key: "", ttl: ttl, want: "empty key"},
		{name: "zero ttl", client: c, key: "job", ttl: 0, want: "shorter than 1ms"},
		{name: "sub-millisecond ttl", client: c, key: "job", ttl: 500 * time.Microsecond, want: "shorter than 1ms"},
		{name: "random fails", client: c, opts: Options{Random: iotest.ErrReader(errors.New("no entropy"))}, key: "job", ttl: ttl, want: "no entropy"},
		{name: "server down", client: dead, key: "job", ttl: ttl, want: "connect"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.client, tt.opts).Acquire(context.Background(), tt.key, tt.ttl)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Acquire(%q, %v) error = %v; want one containing %q", tt.key, tt.ttl, err, tt.want)
			}
			if errors.Is(err, ErrNotAcquired) {
				t.Errorf("Acquire(%q, %v) error = %v; want not ErrNotAcquired", tt.key, tt.ttl, err)
			}
		})
	}
}

func TestFenceKeyOption(t *testing.T) {
	m := miniredis.RunT(t)
	c := newClient(t, m.Addr())
	m.Set("fences/job", "41")
	l, err := New(c, Options{FenceKey: func(k string) string { return "fences/" + k }}).Acquire(context.Background(), "job", ttl)
	if err != nil {
		t.Fatal(err)
	}
	if l.Fence() != 42 {
		t.Errorf("Fence() = %d; want 42", l.Fence())
	}
}

func TestUntil(t *testing.T) {
	m := miniredis.RunT(t)
	clock := newFakeClock()
	start := clock.Now()
	l, err := New(newClient(t, m.Addr()), Options{Clock: clock}).Acquire(context.Background(), "job", ttl)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := l.Until(), start.Add(ttl); !got.Equal(want) {
		t.Errorf("Until() = %v; want %v", got, want)
	}
}

// The lock works through any go-redis client that runs scripts: here a Ring
// and a ClusterClient (miniredis answers as a one-node cluster).
func TestOtherClients(t *testing.T) {
	m1, m2 := miniredis.RunT(t), miniredis.RunT(t)
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": m1.Addr(), "b": m2.Addr()}})
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{m1.Addr()}})
	t.Cleanup(func() { _ = ring.Close(); _ = cluster.Close() })
	for _, tt := range []struct {
		name   string
		client redis.Scripter
	}{
		{name: "ring", client: ring},
		{name: "cluster", client: cluster},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			key := "{" + tt.name + "}.job"
			l, err := New(tt.client, Options{}).Acquire(ctx, key, ttl)
			if err != nil {
				t.Fatalf("Acquire(%q): %v", key, err)
			}
			if err := l.Extend(ctx, ttl); err != nil {
				t.Errorf("Extend: %v", err)
			}
			if err := l.Release(ctx); err != nil {
				t.Errorf("Release: %v", err)
			}
		})
	}
}
