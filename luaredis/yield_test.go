//go:build unix

package luaredis

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locklab/locklab/resp"
)

// cpuTime is the CPU time the test process has used so far.
func cpuTime(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Skipf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestLongScriptYields runs a script into its deadline: past its first
// 100 ms it runs a quarter of the time, so it takes far less CPU than
// the time it runs for, and it is still stopped at the deadline.
func TestLongScriptYields(t *testing.T) {
	const timeout = 800 * time.Millisecond
	e := NewEngine(Options{Limits: Limits{Timeout: timeout, MaxAllocBytes: 32 << 20}})
	cpu0, start := cpuTime(t), time.Now()
	got := eval(t, e, newMapCaller(), "local i = 0 while true do i = i + 1 end")
	cpu, wall := cpuTime(t)-cpu0, time.Since(start)
	if got.Kind != resp.Error || !strings.Contains(got.Str, "stopped the script after 800ms") {
		t.Fatalf("endless loop = %v; want it stopped at its deadline", got)
	}
	if wall < timeout {
		t.Errorf("the script ran %v; want its whole deadline, %v", wall, timeout)
	}
	// A quarter of the time past the first 100 ms, plus that 100 ms: some
	// 275 ms of 800. Without the pauses it would be all of it.
	if cpu > wall/2 {
		t.Errorf("the script took %v of CPU in %v; want at most half, as it pauses three quarters of the time", cpu, wall)
	}
	t.Logf("CPU %v in %v", cpu, wall)
}

// TestYieldCountsWork: a script pauses once it has run 100 ms and done
// longWork, counting a KiB of built strings as one instruction and a
// redis.call as callWork; a script that builds big strings in a few
// instructions, as a memory bomb does, reaches the memory limit first and
// is not slowed down before it.
func TestYieldCountsWork(t *testing.T) {
	for _, tt := range []struct {
		name   string
		n      uint32
		work   uint64
		ran    time.Duration
		paused bool
	}{
		{"instructions", longWork, 0, 200 * time.Millisecond, true},
		{"built strings", 0, longWork, 200 * time.Millisecond, true},
		{"64 MiB of strings", 1000, (64 << 20) / 1024, 200 * time.Millisecond, false},
		{"redis.call in a loop", 2000, 1100 * callWork, 200 * time.Millisecond, true},
		{"little work", longWork / 2, 0, 200 * time.Millisecond, false},
		{"not long yet", longWork, 0, 5 * time.Millisecond, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now().Add(-tt.ran)
			w := newWatchdog(context.Background(), start, Limits{Timeout: time.Minute, MaxAllocBytes: 64 << 20}, memory{}, nil)
			w.n, w.work = tt.n, tt.work
			before := time.Now()
			w.yield(before)
			if paused := w.resumed != start; paused != tt.paused {
				t.Errorf("paused: %v after %v; want %v", paused, time.Since(before), tt.paused)
			}
		})
	}
}
