package worker

import (
	"context"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/playground"
)

// TestTrimAfterLongLines: a worker returns memory after a long line
// that left garbage, not after a quick one, and not twice within a
// second.
func TestTrimAfterLongLines(t *testing.T) {
	runtime.GC()
	tr := newTrimmer()
	freed := 0
	tr.free = func() { freed++ }

	garbage := make([]byte, 64<<20)
	for i := range garbage {
		garbage[i] = 1 // touch it, as a script's tables are
	}
	garbage = nil
	_ = garbage

	tr.after(time.Millisecond)
	if freed != 0 {
		t.Fatalf("freed after a 1 ms line; want only after long ones")
	}
	tr.after(300 * time.Millisecond)
	if freed != 1 {
		t.Fatalf("freed %d times after a long line that left 64 MiB of garbage; want 1", freed)
	}
	tr.after(300 * time.Millisecond)
	if freed != 1 {
		t.Errorf("freed again within %v; want at most once per %v", trimEvery, trimEvery)
	}
}

// TestNoTrimWithoutGarbage: a long line that left little garbage costs
// no collection.
func TestNoTrimWithoutGarbage(t *testing.T) {
	debug.FreeOSMemory() // what earlier tests left is returned first
	tr := newTrimmer()
	freed := 0
	tr.free = func() { freed++ }
	tr.after(time.Second)
	if freed != 0 {
		t.Errorf("freed after a long line that left no garbage; want no collection")
	}
}

// TestWorkerGivesMemoryBack runs, in a worker process, scripts that fill
// a table with strings until the memory limit stops them: once they are
// stopped, the worker's resident memory comes back near where it
// started, rather than staying at what the tables took (some 200 MiB
// without the trim).
func TestWorkerGivesMemoryBack(t *testing.T) {
	s := newTestSupervisor(t, Options{Workers: 1})
	learner := learnersOn(0, 1, 1, "filler")[0]
	ctx := context.Background()
	if res, err := s.Exec(ctx, learner, playground.ClientA, "PING"); err != nil || res.Output != "PONG" {
		t.Fatalf("PING = %q, %v", res.Output, err)
	}
	pid := s.pids()[0]
	before := rss(pid)
	for range 3 {
		res, err := s.Exec(ctx, learner, playground.ClientA, `EVAL "local t = {} local i = 0 while true do i = i + 1 t[i] = string.rep('x', 250000) end" 0`)
		if err != nil || !strings.Contains(res.Output, "stopped the script") {
			t.Fatalf("table of strings = %q, %v; want it stopped", res.Output, err)
		}
		time.Sleep(trimEvery) // each long line may trim once
	}
	after := rss(pid)
	t.Logf("worker resident memory: %d MiB before, %d MiB after three tables of strings", before>>20, after>>20)
	// The race detector keeps shadow memory for what the scripts
	// touched, which no collection returns: 180 MiB here with the trim,
	// 470 MiB without.
	if slack := int64(48<<20) * raceMemoryFactor; after > before+slack {
		t.Errorf("worker resident memory %d MiB after the scripts ended, from %d MiB; want within %d MiB of where it started", after>>20, before>>20, slack>>20)
	}
}
