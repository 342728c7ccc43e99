package worker

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/locklab/locklab/playground"
)

// memSnapshots is playground.SandboxCopies in memory, which the
// replicas of a test share as they would a Redis.
type memSnapshots struct {
	mu     sync.Mutex
	copies map[string][2]string // learner: version, data
	seq    int
}

func (s *memSnapshots) Version(_ context.Context, learner string, _ time.Duration) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.copies[learner][0], nil
}

func (s *memSnapshots) LoadNewer(_ context.Context, learner, have string, _ time.Duration) (string, []byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.copies[learner]
	if c[0] == "" || c[0] == have {
		return c[0], nil, nil
	}
	return c[0], []byte(c[1]), nil
}

func (s *memSnapshots) Load(_ context.Context, learner string) (string, []byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.copies[learner]
	return c[0], []byte(c[1]), nil
}

func (s *memSnapshots) Save(_ context.Context, learner, base string, data []byte, _ time.Duration) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.copies[learner][0] != base {
		return "", false, nil
	}
	s.seq++
	if s.copies == nil {
		s.copies = map[string][2]string{}
	}
	s.copies[learner] = [2]string{strconv.Itoa(s.seq), string(data)}
	return strconv.Itoa(s.seq), true, nil
}

// TestSupervisorFollowsLearners runs one learner on two replicas, one
// with worker processes and one in process, sharing their sandboxes
// through a store: keys, TTLs, the clock and a reset follow the learner
// both ways, and a sandbox restored from the store into a worker comes
// back, as it was, after that worker is killed.
func TestSupervisorFollowsLearners(t *testing.T) {
	clock := newFakeClock()
	store := &memSnapshots{}
	popts := playground.Options{Now: clock.Now, SandboxCopies: store}
	logs := newLogRecorder(t)
	sup := newTestSupervisor(t, Options{Workers: 1, Playground: popts, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	local := playground.NewManager(popts)
	t.Cleanup(local.Close)
	type replica interface {
		Exec(ctx context.Context, learner string, client playground.Client, line string) (playground.Result, error)
	}
	run := func(name string, r replica, line, want string) {
		t.Helper()
		res, err := r.Exec(context.Background(), "ada", playground.ClientA, line)
		if err != nil || res.Output != want {
			t.Errorf("%s: %s = %q, %v; want %q", name, line, res.Output, err, want)
		}
	}

	run("in process", local, "SET lock:1 tok NX PX 30000", "OK")
	clock.Add(5 * time.Second)
	// The first thing asked of the workers' replica may be a page's keys.
	if keys, err := sup.Keys("ada"); err != nil || len(keys) != 1 || keys[0].Key != "lock:1" {
		t.Errorf("workers Keys before any command there = %v, %v; want lock:1", keys, err)
	}
	run("workers", sup, "PTTL lock:1", "(integer) 25000")
	run("workers", sup, "SET n 1", "OK")
	if _, err := sup.Advance("ada", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	run("in process", local, "PTTL lock:1", "(integer) 15000")
	run("in process", local, "INCR n", "(integer) 2")

	// Restored into the worker from the store, then the worker dies: the
	// sandbox comes back from its mirror, which the restore seeded.
	run("workers", sup, "GET n", `"2"`)
	restarted := logs.waitFor("sandbox worker restarted")
	if err := syscall.Kill(sup.pids()[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-restarted:
	case <-time.After(10 * time.Second):
		t.Fatal("the killed worker was not restarted within 10 s")
	}
	clock.Add(time.Second)
	run("workers after the kill", sup, "GET n", `"2"`)
	run("workers after the kill", sup, "PTTL lock:1", "(integer) 14000")
	if now, err := sup.Clock("ada"); err != nil || !now.Equal(clock.Now().Add(10*time.Second)) {
		t.Errorf("workers Clock = %v, %v; want 10s ahead of %v", now, err, clock.Now())
	}

	if err := local.Reset("ada"); err != nil {
		t.Fatal(err)
	}
	run("workers after the reset", sup, "DBSIZE", "(integer) 0")
	if keys, err := sup.Keys("ada"); err != nil || len(keys) != 0 {
		t.Errorf("workers Keys after the reset = %v, %v; want none", keys, err)
	}
}
