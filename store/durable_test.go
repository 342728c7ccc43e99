package store

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/internal/redistest"
)

// openWaiting opens a store on the redis-server at addr that waits for a
// replica on every save, as it does with Sentinel or a cluster, up to
// wait (0: replicaWait), and collects its warnings.
func openWaiting(t *testing.T, addr string, wait time.Duration) (*Store, func() []error) {
	t.Helper()
	var mu sync.Mutex
	var warned []error
	s, err := OpenRedis("redis://"+addr, Warn(func(err error) {
		mu.Lock()
		defer mu.Unlock()
		warned = append(warned, err)
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	s.b.(*redisBackend).replicas.failover = true
	s.b.(*redisBackend).replicas.wait = wait
	return s, func() []error {
		mu.Lock()
		defer mu.Unlock()
		return append([]error(nil), warned...)
	}
}

// A save waits for a replica to have it; with none, it still succeeds,
// warns once and stops waiting, so a lone master costs one slow save a
// minute, not one per save.
func TestSavesWaitForAReplica(t *testing.T) {
	ctx := context.Background()
	t.Run("no replica", func(t *testing.T) {
		s, warned := openWaiting(t, redistest.Start(t), 0)
		start := time.Now()
		if _, err := s.RecordAnswer(ctx, alice, "locks", "q1", true); err != nil {
			t.Fatal(err)
		}
		first := time.Since(start)
		start = time.Now()
		if _, err := s.RecordAnswer(ctx, alice, "locks", "q2", true); err != nil {
			t.Fatal(err)
		}
		second := time.Since(start)
		t.Logf("saves with no replica: the first took %v, the next %v", first, second)
		if first < replicaWait {
			t.Errorf("first save took %v; want it to have waited %v for a replica", first, replicaWait)
		}
		if second >= replicaWait {
			t.Errorf("second save took %v; want no wait while paused", second)
		}
		if w := warned(); len(w) != 1 || !errors.Is(w[0], ErrNotReplicated) {
			t.Errorf("warnings = %v; want one ErrNotReplicated", w)
		}
		if p, err := s.Progress(ctx, alice); err != nil || len(p["locks"].Right) != 2 {
			t.Errorf("progress = %+v, %v; want both answers kept", p, err)
		}
	})
	t.Run("a replica", func(t *testing.T) {
		master, replica := redistest.Start(t), redistest.Start(t)
		follow(t, replica, master)
		// A replica answers in well under a millisecond; a loaded
		// machine may take longer than the 100 ms a save waits.
		s, warned := openWaiting(t, master, 5*time.Second)
		var slowest time.Duration
		for _, q := range []string{"q1", "q2", "q3"} {
			start := time.Now()
			if _, err := s.RecordAnswer(ctx, alice, "locks", q, true); err != nil {
				t.Fatal(err)
			}
			slowest = max(slowest, time.Since(start))
		}
		t.Logf("slowest of 3 saves acknowledged by a replica: %v", slowest)
		if w := warned(); len(w) != 0 {
			t.Errorf("warnings = %v; want none with a replica", w)
		}
		// WAIT answered only once the replica had the write.
		rc := redis.NewClient(&redis.Options{Addr: replica})
		defer rc.Close()
		if n, err := rc.HLen(ctx, "locklab:learner:"+alice).Result(); err != nil || n < 3 {
			t.Errorf("replica's copy of the learner = %d flags, %v; want the saves there", n, err)
		}
	})
}

// follow makes the redis-server at replica a replica of master and waits
// until it is in sync.
func follow(t testing.TB, replica, master string) {
	t.Helper()
	ctx := context.Background()
	rc := redis.NewClient(&redis.Options{Addr: replica})
	defer rc.Close()
	mc := redis.NewClient(&redis.Options{Addr: master})
	defer mc.Close()
	// The first sync starts at once, not after Redis's default 5 s wait
	// for more replicas.
	if err := mc.ConfigSet(ctx, "repl-diskless-sync-delay", "0").Err(); err != nil {
		t.Fatal(err)
	}
	host, port, _ := strings.Cut(master, ":")
	if err := rc.ReplicaOf(ctx, host, port).Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, _ := rc.Info(ctx, "replication").Result()
		// The link is up, and a write gets through it.
		if strings.Contains(info, "master_link_status:up") && mc.Set(ctx, "follow", "1", 0).Err() == nil && mc.Wait(ctx, 1, time.Second).Val() == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica %s not in sync with %s: %s", replica, master, info)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
