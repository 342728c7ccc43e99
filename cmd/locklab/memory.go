package main

import (
	"flag"
	"fmt"
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

// addMemoryFlags declares the memory flags. GOMEMLIMIT and GOGC, when
// set and their flag is not, are left to the Go runtime.
func addMemoryFlags(fset *flag.FlagSet, getenv func(string) string, mc *memoryConfig) {
	mc.sandboxData, mc.perAddress = defaultSandboxMemory, defaultPerAddress
	mc.limit, mc.gcPercent = defaultMemoryLimit, defaultGCPercent
	if getenv("GOMEMLIMIT") != "" {
		mc.limit = 0
	}
	if getenv("GOGC") != "" {
		mc.gcPercent = 0
	}
	fset.Var((*byteSize)(&mc.sandboxData), "sandbox-memory", "data all playground sandboxes may hold together, counted as the 4 MiB limit of one sandbox counts it; near it, the least recently used idle sandboxes are reset, and when none is left, writes are refused (env LOCKLAB_SANDBOX_MEMORY)")
	fset.IntVar(&mc.perAddress, "sandboxes-per-address", mc.perAddress, "most playground sandboxes alive at once for the learners of one client address; at the cap, that address's least recently used one is reset (env LOCKLAB_SANDBOXES_PER_ADDRESS)")
	fset.Var((*byteSize)(&mc.limit), "memory-limit", "Go memory limit of the server process, such as 512MiB; 0 leaves GOMEMLIMIT to the Go runtime (env LOCKLAB_MEMORY_LIMIT; default 512MiB unless GOMEMLIMIT is set)")
	fset.IntVar(&mc.gcPercent, "gc-percent", mc.gcPercent, "most GOGC of the server process, and of its sandbox workers, while the live heap is small: the heap may grow to 64 MiB between collections (a worker's to a quarter of its heap limit), by this many percent at most, and by 100% once it is larger; 0 leaves GOGC to the Go runtime (env LOCKLAB_GC_PERCENT; default 400 unless GOGC is set)")
}

func checkMemoryFlags(mc memoryConfig) error {
	if mc.sandboxData < 4<<20 {
		return fmt.Errorf("-sandbox-memory must be at least 4MiB, the data of one sandbox")
	}
	if mc.perAddress < 1 {
		return fmt.Errorf("-sandboxes-per-address must be at least 1")
	}
	if mc.limit != 0 && mc.limit < 64<<20 {
		return fmt.Errorf("-memory-limit must be 0 (the runtime's) or at least 64MiB")
	}
	return checkGCPercent(mc.gcPercent)
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
