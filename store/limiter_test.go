package store

import (
	"context"
	"testing"

	"github.com/locklab/locklab/internal/redistest"
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
