package store

import (
	"context"
	"errors"
	"testing"

	"github.com/alicebob/miniredis/v2"

	"github.com/locklab/locklab/internal/redistest"
	"github.com/locklab/locklab/limit"
)

// TestLimiterShared checks that a Redis limiter is shared by two Store
// instances (two replicas), and that keys are limited separately.
func TestLimiterShared(t *testing.T) {
	ctx := context.Background()
	a, b := twoReplicas(t)
	la, lb := a.Limiter(5, 10), b.Limiter(5, 10)
	allowed := 0
	for i := range 40 {
		l := la
		if i%2 == 1 {
			l = lb
		}
		ok, err := l.Allow(ctx, "learner:x")
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			allowed++
		}
	}
	// A burst of 10, plus at most a few refilled during the loop.
	if allowed < 10 || allowed > 13 {
		t.Errorf("two replicas let %d of 40 through; want about the burst of 10", allowed)
	}
	if ok, _ := la.Allow(ctx, "learner:y"); !ok {
		t.Error("another key was limited too")
	}
}

// twoReplicas opens two Stores on one real redis-server, as two replicas
// would.
func twoReplicas(t *testing.T) (*Store, *Store) {
	t.Helper()
	addr := "redis://" + redistest.Start(t)
	var st [2]*Store
	for i := range st {
		s, err := OpenRedis(addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		st[i] = s
	}
	return st[0], st[1]
}

// TestLimiterCallerCancelled checks that a request that went away does
// not turn the shared limits off for everyone: the next call, from a live
// request, still asks Redis. A Redis that is down does open the breaker.
func TestLimiterCallerCancelled(t *testing.T) {
	m := miniredis.RunT(t)
	s, err := OpenRedis("redis://" + m.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	l, meter := s.Limiter(5, 10), s.Meter(1, 10)
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Allow(gone, "k"); err == nil {
		t.Fatal("Allow on a cancelled context = nil error; want the cancellation")
	}
	if _, err := meter.Available(gone, "k"); err == nil {
		t.Fatal("Available on a cancelled context = nil error; want the cancellation")
	}
	if ok, err := l.Allow(context.Background(), "k"); err != nil || !ok {
		t.Errorf("Allow after a caller gave up = %v, %v; want true, nil", ok, err)
	}
	if n, err := meter.Available(context.Background(), "k"); err != nil || n != 10 {
		t.Errorf("Available after a caller gave up = %d, %v; want 10, nil", n, err)
	}
	m.Close()
	for i := range breakerFailures {
		_, err := l.Allow(context.Background(), "k")
		if !errors.Is(err, ErrUnavailable) || errors.Is(err, limit.ErrOpen) {
			t.Fatalf("Allow %d with Redis down = %v; want ErrUnavailable from Redis", i+1, err)
		}
	}
	if _, err := l.Allow(context.Background(), "k"); !errors.Is(err, limit.ErrOpen) {
		t.Errorf("Allow right after %d failures = %v; want the breaker open", breakerFailures, err)
	}
}
