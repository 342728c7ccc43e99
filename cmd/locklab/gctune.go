package main

import (
	"fmt"
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
// GOGC follows the live heap: enough that the heap may grow to a floor
// between collections, at most -gc-percent, and Go's default of 100 once
// the live heap is half that. A sandbox worker is the same: its live heap
// is small until learners fill their sandboxes, and a collection every
// few megabytes was a tenth of what it spent on a playground line.

// serverGCFloor is the heap the server's collector waits for while the
// live heap is small.
const serverGCFloor = 64 << 20

// workerGCFloor is a sandbox worker's: a quarter of what its memory
// limit leaves to the heap, so that a worker holding little data does not
// run near that limit.
func workerGCFloor(memory int64) uint64 { return uint64(memory / 4 * 3 / 4) }

// checkGCPercent checks a -gc-percent, the server's or a worker's.
func checkGCPercent(n int) error {
	if n < 0 || n > 10_000 {
		return fmt.Errorf("-gc-percent must be 0 (the runtime's) or 1 to 10000")
	}
	return nil
}

// gcPercentFor is the GOGC for a live heap of live bytes: the heap may
// grow to floor, or by 100%, whichever is more, and by most% at most.
func gcPercentFor(live uint64, most int, floor uint64) int {
	if most <= 100 || live >= floor/2 {
		return min(100, most)
	}
	p := 100
	if live > 0 {
		p = int(floor*100/live) - 100
	}
	return min(max(p, 100), most)
}

// tuneGC sets GOGC from the live heap, now and then every second, and
// returns a function that stops and puts back the GOGC it found. most 0
// leaves GOGC alone.
func tuneGC(most int, floor uint64) (stop func()) {
	if most == 0 {
		return func() {}
	}
	set := gcPercentFor(liveHeap(), most, floor)
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
			if p := gcPercentFor(liveHeap(), most, floor); p != set {
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
