//go:build linux

package lab

import (
	"syscall"
	"time"
)

// processCPU is the CPU time of the whole test process, garbage collector
// included, for benchmarks to report beside the check thread's own.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
