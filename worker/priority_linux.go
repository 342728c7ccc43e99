package worker

import (
	"runtime"
	"syscall"
)

// lowerPriority locks the calling goroutine to its thread and gives the
// thread longScriptNice. It reports whether it did; if not, the goroutine
// is left unlocked. It leaves the process's main thread alone, which Go
// cannot discard (it would park it for good), and a thread it may not
// change (a process already at a lower priority, which it may not raise).
func lowerPriority() bool {
	runtime.LockOSThread()
	tid := syscall.Gettid()
	// On Linux, PRIO_PROCESS with a thread's id sets that thread alone.
	if tid == syscall.Getpid() || syscall.Setpriority(syscall.PRIO_PROCESS, tid, longScriptNice) != nil {
		runtime.UnlockOSThread()
		return false
	}
	return true
}
