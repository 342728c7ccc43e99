package worker

import (
	"fmt"
	"runtime/debug"
)

// LimitMemory limits the worker process to about n bytes. The Go runtime
// is told to collect garbage harder from three quarters of n on
// (debug.SetMemoryLimit), and the operating system refuses the process
// more than n bytes of data beyond what it has now (see limitData), so
// that a runaway allocation ends the worker with Go's "out of memory"
// fatal error instead of growing until the host's OOM killer picks a
// victim. The supervisor then starts another worker.
func LimitMemory(n int64) error {
	if n < 32<<20 {
		return fmt.Errorf("sandbox worker memory limit %d bytes: want at least 32 MiB", n)
	}
	debug.SetMemoryLimit(n / 4 * 3)
	if err := limitData(n); err != nil {
		return fmt.Errorf("sandbox worker memory limit: %w", err)
	}
	return nil
}
