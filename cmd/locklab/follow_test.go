package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/locklab/locklab/playground"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/worker"
)

// testClock is a clock the test moves by hand, shared by the replicas.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// replica is what the web layer and the server need of a playground.
type replica interface {
	sandboxes
	Exec(ctx context.Context, learner string, client playground.Client, line string) (playground.Result, error)
}

// newReplica starts a playground as the server does, in process or with
// a sandbox worker (the test binary, see TestMain), sharing sandboxes
// through the Redis store st.
func newReplica(t *testing.T, workers bool, st *store.Store, clock *testClock) replica {
	t.Helper()
	opts := playground.Options{Now: clock.Now, IdleTimeout: 30 * time.Minute, SandboxCopies: sandboxCopies(st)}
	if opts.SandboxCopies == nil {
		t.Fatal("a Redis store gives no sandbox copies")
	}
	if !workers {
		m := playground.NewManager(opts)
		t.Cleanup(m.Close)
		return m
	}
	s, err := worker.NewSupervisor(worker.Options{
		Workers:    1,
		Command:    func() *exec.Cmd { return exec.Command(os.Args[0], "sandbox-worker") },
		Playground: opts,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// TestSandboxFollowsLearnerThroughRedis runs two replicas' playgrounds on
// one Redis (miniredis), for each kind of playground: what a learner does
// on one replica is there on the other, with TTLs running on, the clock
// moved and resets seen; with Redis down, lines are refused.
func TestSandboxFollowsLearnerThroughRedis(t *testing.T) {
	for _, tt := range []struct {
		name     string
		one, two bool // with sandbox workers
	}{
		{"in process", false, false},
		{"sandbox workers", true, true},
		{"mixed", false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mr := miniredis.RunT(t)
			clock := &testClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
			var reps [2]replica
			for i, workers := range []bool{tt.one, tt.two} {
				st, err := store.OpenRedis("redis://" + mr.Addr())
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
				reps[i] = newReplica(t, workers, st, clock)
			}
			const learner = "followlearner012345678"
			exec := func(i int, line, want string) {
				t.Helper()
				res, err := reps[i].Exec(context.Background(), learner, playground.ClientA, line)
				if err != nil || res.Output != want {
					t.Errorf("replica %d: %s = %q, %v; want %q", i+1, line, res.Output, err, want)
				}
			}

			exec(0, "SET lock:1 tok NX PX 30000", "OK")
			clock.Add(10 * time.Second)
			exec(1, "GET lock:1", `"tok"`)
			exec(1, "PTTL lock:1", "(integer) 20000")
			if _, err := reps[1].Advance(learner, 5*time.Second); err != nil {
				t.Fatal(err)
			}
			exec(0, "PTTL lock:1", "(integer) 15000")
			now0, _ := reps[0].Clock(learner)
			if want := clock.Now().Add(5 * time.Second); !now0.Equal(want) {
				t.Errorf("replica 1 clock = %v; want %v, moved on replica 2", now0, want)
			}
			if err := reps[0].Reset(learner); err != nil {
				t.Fatal(err)
			}
			exec(1, "EXISTS lock:1", "(integer) 0")
			if keys, err := reps[1].Keys(learner); err != nil || len(keys) != 0 {
				t.Errorf("replica 2 Keys after a reset on replica 1 = %v, %v; want none", keys, err)
			}

			// Lines alternating between the replicas, as a load balancer
			// without sticky sessions sends them: no write is lost.
			for i := 1; i <= 100; i++ {
				exec(i%2, "INCR n", fmt.Sprintf("(integer) %d", i))
			}

			// Redis down: lines are refused on both replicas, rather
			// than answered by one alone.
			exec(0, "SET k before", "OK")
			exec(1, "GET k", `"before"`)
			mr.Close()
			for i, line := range []string{"SET k during", "GET k"} {
				if res, err := reps[i].Exec(context.Background(), learner, playground.ClientA, line); !errors.Is(err, playground.ErrStoreDown) {
					t.Errorf("replica %d with Redis down: %s = %+v, %v; want ErrStoreDown", i+1, line, res, err)
				}
			}
			if _, err := reps[1].Advance(learner, time.Second); !errors.Is(err, playground.ErrStoreDown) {
				t.Errorf("Advance with Redis down: %v; want ErrStoreDown", err)
			}
		})
	}
}
