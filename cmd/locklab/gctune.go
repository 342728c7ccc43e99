package main

import (
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// The server's live heap is a few megabytes when only pages are read, and
// at GOGC 100 the collector then runs at Go's 4 MB floor: some forty
// times a second under load, each run scanning the binary's globals
// whatever the heap. Measured, that was 3.5 of the 25 µs of CPU a home
// page cost. A higher GOGC for good would also multiply a full
// playground's heap (the mirrors of 128 MiB of sandboxes) by as much. So
// GOGC follows the live heap: enough that the heap may grow to gcFloor
// between collections, at most -gc-percent, and Go's default of 100 once
// the live heap is half that.

// gcFloor is the heap the collector waits for while the live heap is
// small.
const gcFloor = 64 << 20

// gcPercentFor is the GOGC for a live heap of live bytes: the heap may
// grow to gcFloor, or by 100%, whichever is more, and by most% at most.
func gcPercentFor(live uint64, most int) int {
	if most <= 100 || live >= gcFloor/2 {
		return min(100, most)
	}
	p := 100
	if live > 0 {
		p = int(gcFloor*100/live) - 100
	}
	return min(max(p, 100), most)
}

// tuneGC sets GOGC from the live heap, now and then every second, and
// returns a function that stops and puts back the GOGC it found. most 0
// leaves GOGC alone.
func tuneGC(most int) (stop func()) {
	if most == 0 {
		return func() {}
	}
	set := gcPercentFor(liveHeap(), most)
	prev := debug.SetGCPercent(set)
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			if p := gcPercentFor(liveHeap(), most); p != set {
				debug.SetGCPercent(p)
				set = p
			}
		}
	}()
	return func() {
		close(quit)
		<-done
		debug.SetGCPercent(prev)
	}
}

// liveHeap is the heap the last collection found live.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
