package store

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/locklab/locklab/internal/fakeclock"
)

// observed records what a RedisObserver is told.
type observed struct {
	mu     sync.Mutex
	ops    []string
	failed map[string]int
	took   []time.Duration
}

func (o *observed) observe(op string, took time.Duration, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ops = append(o.ops, op)
	o.took = append(o.took, took)
	if err != nil {
		o.failed[op]++
	}
}

// TestObserveRedis: every round trip of the Redis store reaches the
// observer, timed by the store's clock; a learner nobody saved (no key)
// is no failure, a Redis that is gone is.
func TestObserveRedis(t *testing.T) {
	m := miniredis.RunT(t)
	o := &observed{failed: map[string]int{}}
	clock := fakeclock.New(time.Time{})
	clock.SetStep(time.Millisecond)
	st, err := OpenRedis("redis://"+m.Addr(), ObserveRedis(o.observe), Clock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()
	learner := "AAAAAAAAAAAAAAAAAAAAAA"
	if _, err := st.Progress(ctx, learner); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Secret(ctx, []byte("fresh")); err != nil {
		t.Fatal(err)
	}
	o.mu.Lock()
	ops, failed, took := append([]string{}, o.ops...), len(o.failed), append([]time.Duration{}, o.took...)
	o.mu.Unlock()
	// Progress is a pipeline; Secret a SET NX and a GET. The commands
	// that set up a connection are not the store's.
	if want := []string{"pipeline", "set", "get"}; !equal(ops, want) || failed != 0 {
		t.Fatalf("observed %q with %d failures; want %q and none", ops, failed, want)
	}
	for i, d := range took {
		if d != time.Millisecond {
			t.Errorf("round trip %d took %v by the store's clock; want 1ms (one step)", i, d)
		}
	}
	m.Close()
	if _, err := st.Progress(ctx, learner); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Progress with Redis gone = %v; want ErrUnavailable", err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.failed["pipeline"] != 1 {
		t.Errorf("failures with Redis gone: %v; want one pipeline", o.failed)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
