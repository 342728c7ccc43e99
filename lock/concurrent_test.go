package lock

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// acquirer is a Locker or a Redlock.
type acquirer interface {
	Acquire(ctx context.Context, key string, ttl time.Duration) (*Lock, error)
}

// hammer runs workers goroutines that each take the lock rounds times and
// checks that no two of them ever hold it at once. No holder pauses for
// anything like the TTL, so mutual exclusion must hold.
func hammer(t *testing.T, workers, rounds int, newAcquirer func() acquirer) {
	t.Helper()
	var holders, maxHolders, grants atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		a := newAcquirer()
		wg.Go(func() {
			ctx := context.Background()
			for range rounds {
				l, err := a.Acquire(ctx, "counter", 30*time.Second)
				if err != nil {
					errs <- err
					return
				}
				n := holders.Add(1)
				for {
					m := maxHolders.Load()
					if n <= m || maxHolders.CompareAndSwap(m, n) {
						break
					}
				}
				grants.Add(1)
				runtime.Gosched() // let the others try while we hold it
				holders.Add(-1)
				if err := l.Release(ctx); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("worker: %v", err)
	}
	if m := maxHolders.Load(); m != 1 {
		t.Errorf("at most %d holders at once; want 1", m)
	}
	if g, want := grants.Load(), int64(workers*rounds); g != want {
		t.Errorf("%d grants; want %d", g, want)
	}
}

func TestConcurrentHolders(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.start(t)
		hammer(t, 20, 10, func() acquirer {
			return New(s.client, Options{Retries: 100000, RetryDelay: time.Millisecond})
		})
	})
}

func TestConcurrentHoldersRedlock(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		_, nodes := startN(t, b, 5)
		hammer(t, 10, 5, func() acquirer {
			return NewRedlock(nodes, Options{Retries: 100000, RetryDelay: 2 * time.Millisecond, NodeTimeout: 5 * time.Second})
		})
	})
}
