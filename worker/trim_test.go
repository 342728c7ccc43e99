package worker

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
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
