package main

import (
	"runtime/debug"
)

// Defaults of the memory flags, measured with bench/memfill (see
// docs/limits.md): with 2 workers and every learner's sandbox full, the server
// and its workers stay well under 1 GB.
const (
	// defaultSandboxMemory is the data all sandboxes may hold together:
	// 32 learners at the 4 MiB limit of one sandbox, or thousands at the
	// few kilobytes a lesson uses. Each byte of it costs about 2.5 bytes
	// of memory across the processes (miniredis, the supervisor's mirror,
	// the Go heaps' slack).
	defaultSandboxMemory = 128 << 20
	// defaultPerAddress caps the sandboxes of one client address: a
	// classroom behind one NAT fits, a script minting cookies does not.
	defaultPerAddress = 50
	// defaultMemoryLimit is the server process's Go memory limit: room
	// for the workers' mirrors of a full budget and for the web server.
	defaultMemoryLimit = 512 << 20
	// defaultGCPercent is the most GOGC the server takes while its live
	// heap is small (gctune.go).
	defaultGCPercent = 400
)

// memoryConfig is how much memory the server lets the playground take.
type memoryConfig struct {
	// sandboxData is the budget of all sandboxes' data together.
	sandboxData int64
	// perAddress caps the sandboxes of one client address.
	perAddress int
	// limit is this process's Go memory limit; 0 leaves the runtime's
	// (GOMEMLIMIT, if set).
	limit int64
	// gcPercent is the most GOGC this process takes while its heap is
	// small (gctune.go); 0 leaves the runtime's (GOGC, if set).
	gcPercent int
}

// limitMemory sets this process's Go memory limit, if mc has one, and
// returns a function that puts the previous one back.
func limitMemory(mc memoryConfig) (restore func()) {
	if mc.limit == 0 {
		return func() {}
	}
	prev := debug.SetMemoryLimit(mc.limit)
	return func() { debug.SetMemoryLimit(prev) }
}
