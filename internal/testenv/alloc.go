package testenv

import "runtime"

// Allocated returns the bytes f allocates, in every goroutine: a measure
// of a call's cost that, unlike its time, does not depend on what else the
// machine is doing. Cost tests compare it with the size of the input.
func Allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
