//go:build unix

package luaredis

import (
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
// 20 ms it runs a quarter of the time, so it takes far less CPU than
// the time it runs for, and it is still stopped at the deadline.
func TestLongScriptYields(t *testing.T) {
	const timeout = 400 * time.Millisecond
	e := NewEngine(Options{Limits: Limits{Timeout: timeout, MaxAllocBytes: 32 << 20}})
	cpu0, start := cpuTime(t), time.Now()
	got := eval(t, e, newMapCaller(), "local i = 0 while true do i = i + 1 end")
	cpu, wall := cpuTime(t)-cpu0, time.Since(start)
	if got.Kind != resp.Error || !strings.Contains(got.Str, "stopped the script after 400ms") {
		t.Fatalf("endless loop = %v; want it stopped at its deadline", got)
	}
	if wall < timeout {
		t.Errorf("the script ran %v; want its whole deadline, %v", wall, timeout)
	}
	// A quarter of the time past the first 20 ms, plus that 20 ms: some
	// 115 ms of 400. Without the pauses it would be all of it.
	if cpu > wall/2 {
		t.Errorf("the script took %v of CPU in %v; want at most half, as it pauses three quarters of the time", cpu, wall)
	}
	t.Logf("CPU %v in %v", cpu, wall)
}
