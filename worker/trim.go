package worker

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// A script that runs long may have built tens of megabytes (up to the
// playground's per-script limit) that are garbage once it ends. Go would
// hand them back to the operating system only slowly, and a worker's
// resident memory would stay near its peak for minutes: with a few such
// scripts at once in every worker, the host's memory goes to garbage.
// After a line that ran at least trimAfter, the worker looks at how much
// of the heap it holds is not live data, and past trimSlack collects and
// returns it at once, at most once per trimEvery (the collection costs a
// few milliseconds of CPU, which only long lines cause).
const (
	trimAfter = 20 * time.Millisecond
	trimSlack = 32 << 20
	trimEvery = time.Second
)

// trimmer decides when a worker returns memory after a long line. It
// compares the heap memory the process holds with the live heap found by
// its own last collection: the collector's latest count of live memory
// would not do, as it may have run while the script's data was still
// live.
type trimmer struct {
	mu      sync.Mutex
	last    time.Time
	live    uint64 // the live heap after the last trim
	samples []metrics.Sample
	// free returns the memory; debug.FreeOSMemory but in tests.
	free func()
}

func newTrimmer() *trimmer {
	t := &trimmer{
		samples: []metrics.Sample{
			{Name: "/memory/classes/heap/objects:bytes"},
			{Name: "/memory/classes/heap/unused:bytes"},
			{Name: "/memory/classes/heap/free:bytes"},
			{Name: "/gc/heap/live:bytes"},
		},
		free: debug.FreeOSMemory,
	}
	_, t.live = t.read()
	return t
}

// read returns the heap memory the process holds from the system, and
// the live heap its latest collection found.
func (t *trimmer) read() (held, live uint64) {
	metrics.Read(t.samples)
	for i, s := range t.samples {
		if s.Value.Kind() != metrics.KindUint64 {
			continue
		}
		if i < 3 {
			held += s.Value.Uint64()
		} else {
			live = s.Value.Uint64()
		}
	}
	return held, live
}

// after is called when a line has run for ran.
func (t *trimmer) after(ran time.Duration) {
	if ran < trimAfter {
		return
	}
	if !t.mu.TryLock() {
		return // another line's trim is under way
	}
	defer t.mu.Unlock()
	if time.Since(t.last) < trimEvery {
		return
	}
	if held, _ := t.read(); held < t.live+trimSlack {
		return
	}
	t.last = time.Now()
	t.free()
	_, t.live = t.read()
}
