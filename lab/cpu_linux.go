//go:build linux

package lab

import (
	"syscall"
	"time"
)

// rusageThread is Linux's RUSAGE_THREAD, which package syscall does not
// name: the resources of the calling thread alone.
const rusageThread = 1

// threadCPU returns the CPU time the calling OS thread has used. A check
// locks its goroutine to one thread, so that this is the check's own CPU
// time, whatever else the machine runs meanwhile.
func threadCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
