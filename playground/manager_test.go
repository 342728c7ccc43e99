package playground

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/fakeclock"
)

func newTestManager(t *testing.T, opts Options) (*Manager, *fakeclock.Clock) {
	t.Helper()
	clock := newFakeClock()
	opts.Now = clock.Now
	m := NewManager(opts)
	t.Cleanup(m.Close)
	return m, clock
}

func mustExec(t *testing.T, m *Manager, learner string, client Client, line string) Result {
	t.Helper()
	res, err := m.Exec(context.Background(), learner, client, line)
	if err != nil {
		t.Fatalf("Exec(%q, %q, %q): %v", learner, client, line, err)
	}
	return res
}

func TestManagerIdleTimeout(t *testing.T) {
	m, clock := newTestManager(t, Options{IdleTimeout: 30 * time.Minute})
	mustExec(t, m, "ada", ClientA, "SET k v")
	clock.Add(29 * time.Minute)
	if res := mustExec(t, m, "ada", ClientA, "GET k"); res.Output != `"v"` || res.Notice != "" {
		t.Errorf("GET k after 29 minutes = %+v; want \"v\" and no notice", res)
	}
	// Lazily: the next command finds the sandbox too old.
	clock.Add(30 * time.Minute)
	res := mustExec(t, m, "ada", ClientA, "GET k")
	if res.Output != "(nil)" || res.Notice != "Your sandbox was idle for 30 minutes and was reset." {
		t.Errorf("GET k after 30 idle minutes = %+v; want (nil) and the idle notice", res)
	}
	if res := mustExec(t, m, "ada", ClientA, "PING"); res.Notice != "" {
		t.Errorf("second command after the reset has notice %q; want it only once", res.Notice)
	}
	// By Sweep.
	mustExec(t, m, "bob", ClientA, "SET k v")
	clock.Add(31 * time.Minute)
	if n := m.Sweep(clock.Now()); n != 2 {
		t.Errorf("Sweep() = %d; want 2 sandboxes dropped", n)
	}
	if m.Len() != 0 {
		t.Errorf("Len() = %d after Sweep; want 0", m.Len())
	}
	if res := mustExec(t, m, "bob", ClientB, "EXISTS k"); res.Output != "(integer) 0" || res.Notice == "" {
		t.Errorf("bob's first command after Sweep = %+v; want a fresh sandbox and a notice", res)
	}
}

func TestManagerCap(t *testing.T) {
	m, clock := newTestManager(t, Options{MaxSandboxes: 2})
	for _, learner := range []string{"ada", "bob"} {
		mustExec(t, m, learner, ClientA, "SET k "+learner)
		clock.Add(time.Minute)
	}
	mustExec(t, m, "ada", ClientA, "PING") // bob is now the longest idle
	clock.Add(time.Minute)
	mustExec(t, m, "cyd", ClientA, "SET k cyd")
	if m.Len() != 2 {
		t.Errorf("Len() = %d; want the cap of 2", m.Len())
	}
	if res := mustExec(t, m, "ada", ClientA, "GET k"); res.Output != `"ada"` {
		t.Errorf("ada's GET k = %q; want her sandbox kept", res.Output)
	}
	res := mustExec(t, m, "bob", ClientA, "GET k")
	if res.Output != "(nil)" || res.Notice == "" {
		t.Errorf("bob's GET k = %+v; want a fresh sandbox with a notice", res)
	}
}

func TestManagerSweepCompacts(t *testing.T) {
	m, clock := newTestManager(t, Options{CompactAfter: time.Minute})
	mustExec(t, m, "ada", ClientA, `SCRIPT LOAD "return 1"`)
	mustExec(t, m, "ada", ClientA, lessonRelease)
	clock.Add(2 * time.Minute)
	if n := m.Sweep(clock.Now()); n != 0 {
		t.Errorf("Sweep() = %d; want nothing dropped", n)
	}
	// A compacted sandbox still has its keys and scripts.
	if res := mustExec(t, m, "ada", ClientA, "EVALSHA e0e1f9fabfc9d4800c877a703b823ac0578ff8db 0"); res.Output != "(integer) 1" {
		t.Errorf("EVALSHA after compaction = %q; want (integer) 1", res.Output)
	}
}

// signalBox is a sandbox that closes seen when it starts running line.
type signalBox struct {
	*Sandbox
	line string
	seen chan struct{}
}

func (b signalBox) ExecWithin(ctx context.Context, client Client, line string, allow int) (Result, int, error) {
	if line == b.line {
		close(b.seen)
	}
	return b.Sandbox.ExecWithin(ctx, client, line, allow)
}

// TestLearnersDoNotBlockEachOther runs a script that spins until its
// deadline in one sandbox while other learners keep working.
func TestLearnersDoNotBlockEachOther(t *testing.T) {
	const spin = `EVAL "while true do end" 0`
	spinning := make(chan struct{})
	m := NewManager(Options{Limits: Limits{}, NewBox: func(o SandboxOptions) (Box, error) { // real clock; default 1s script deadline
		sb, err := NewSandbox(o)
		return signalBox{sb, spin, spinning}, err
	}})
	defer m.Close()
	ctx := context.Background()
	done := make(chan Result)
	go func() {
		res, _ := m.Exec(ctx, "spinner", ClientA, spin)
		done <- res
	}()
	<-spinning // the sandbox has the script
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			learner := fmt.Sprintf("learner-%d", i)
			for range 10 {
				if res, err := m.Exec(ctx, learner, ClientA, "INCR n"); err != nil || res.Output == "" {
					t.Errorf("INCR for %s = %+v, %v", learner, res, err)
				}
			}
		}()
	}
	wg.Wait()
	// The script spins for a second; the others were answered before it
	// stopped.
	select {
	case res := <-done:
		t.Errorf("200 commands of other learners were answered only after the spinning script stopped (%q)", res.Output)
	default:
	}
	if res := <-done; res.Output == "" {
		t.Error("the spinning script returned no output")
	}
	// The spinner's own sandbox answers again after its script stopped.
	if res, _ := m.Exec(ctx, "spinner", ClientB, "PING"); res.Output != "PONG" {
		t.Errorf("PING after the script = %q; want PONG", res.Output)
	}
}

// TestManagerConcurrent hammers one manager from many goroutines, with
// Sweep running alongside; run it with -race.
func TestManagerConcurrent(t *testing.T) {
	m, clock := newTestManager(t, Options{MaxSandboxes: 8, IdleTimeout: time.Minute})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				learner := fmt.Sprintf("l%d", (g*7+i)%12)
				client := []Client{ClientA, ClientB}[i%2]
				for _, line := range []string{acquireLine, lessonRelease, "MULTI", "INCR n", "EXEC"} {
					if _, err := m.Exec(context.Background(), learner, client, line); err != nil {
						t.Errorf("Exec: %v", err)
					}
				}
				m.Keys(learner)
				if i%10 == 0 {
					clock.Add(10 * time.Second)
					m.Sweep(clock.Now())
				}
			}
		}()
	}
	wg.Wait()
	if m.Len() > 8 {
		t.Errorf("Len() = %d; want at most the cap of 8", m.Len())
	}
}
