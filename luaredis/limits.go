package luaredis

import (
	"context"
	"errors"
	"runtime/metrics"
	"time"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// Limits bound one script: what it may compile into, and one run of it.
// A zero field takes its default.
type Limits struct {
	// MaxFunctions, MaxConstants and MaxInstructions bound what a script
	// compiles into, all its functions together; defaults 100, 5,000 and
	// 20,000. Without them a 60 KB source of empty functions compiles into
	// 10 MB, all kept for EVALSHA. A lesson's script needs a few of each.
	MaxFunctions    int
	MaxConstants    int
	MaxInstructions int

	// Timeout is how long a script may run; default 1s. Redis would let it
	// run on and answer BUSY to everyone else; a playground stops it.
	Timeout time.Duration
	// MaxAllocBytes is how many bytes a run may hold; default 16 MiB. It
	// is measured on the script's own Lua state: everything reachable
	// from its stack, globals and registry, estimated whenever the
	// process has allocated enough since the last estimate that the
	// script might have passed the limit. A script that holds nothing is
	// never stopped, however much the rest of the process allocates.
	// What a script allocates and drops again is garbage and not counted;
	// making it costs time, which Timeout bounds. 16 MiB holds a table of
	// 500,000 numbers or of 60,000 string keys, four times the data a
	// playground sandbox may hold. What a script holds, the collector
	// marks again and again while the script grows it: in a sandbox
	// worker, `local t={} for i=1,1e8 do t[i]=i end` took 880 ms of CPU
	// to reach its 1 s deadline at 64 MiB; at 16 MiB it is stopped for its
	// memory after 100 ms.
	MaxAllocBytes uint64
	// MaxStringBytes is the longest string a script may build with ..,
	// string.rep, string.format, string.gsub or table.concat; default 256 KiB.
	MaxStringBytes int
	// MaxPatternSteps bounds the backtracking a Lua pattern may need,
	// estimated before it runs; default 100 million.
	MaxPatternSteps float64
}

// WithDefaults returns l with each zero field at its default.
func (l Limits) WithDefaults() Limits {
	if l.MaxFunctions <= 0 {
		l.MaxFunctions = 100
	}
	if l.MaxConstants <= 0 {
		l.MaxConstants = 5000
	}
	if l.MaxInstructions <= 0 {
		l.MaxInstructions = 20000
	}
	if l.Timeout <= 0 {
		l.Timeout = time.Second
	}
	if l.MaxAllocBytes == 0 {
		l.MaxAllocBytes = 16 << 20
	}
	if l.MaxStringBytes <= 0 {
		l.MaxStringBytes = 256 << 10
	}
	if l.MaxPatternSteps <= 0 {
		l.MaxPatternSteps = 1e8
	}
	return l
}

var (
	errTimeout = errors.New("timeout")
	errMemory  = errors.New("memory")
)

// checkEvery is how many Lua instructions pass between two watchdog checks.
const checkEvery = 1024

// A memory is what the watchdog judges a script's memory by: allocs is
// how many bytes the process has allocated in all, a cheap counter that
// only says when to look again; held estimates what the script holds now,
// walking no further than past max.
type memory struct {
	allocs func() uint64
	held   func(max uint64) uint64
}

// processAllocs reads the process's count of allocated bytes.
type processAllocs struct{ sample [1]metrics.Sample }

func newProcessAllocs() *processAllocs {
	p := &processAllocs{}
	p.sample[0].Name = "/gc/heap/allocs:bytes"
	return p
}

func (p *processAllocs) read() uint64 {
	metrics.Read(p.sample[:])
	if p.sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return p.sample[0].Value.Uint64()
}

// watchdog is the context a script runs with. gopher-lua calls Done before
// every instruction; every checkEvery calls the watchdog looks at the clock,
// the caller's context and the process's allocation counter, and closes
// done when one of them says stop. No timer goroutine is needed.
//
// The script's memory is judged when the process has allocated, since the
// last judgement, as many bytes as the script had left under the limit
// then (at least an eighth of the limit, so that a script near it is not
// judged all the time): the script's own growth is part of the process's,
// so it cannot pass the limit by more than that eighth unseen. The
// judgement's own allocations do not count towards the next.
type watchdog struct {
	parent   context.Context
	deadline time.Time
	maxAlloc uint64
	mem      memory
	next     uint64 // the allocation count at which to judge again
	judged   int    // how many times the memory was judged, for tests
	// pad, if set, shows the watchdog each table write before it runs
	// (see guarded); virtual counts the bytes the nils of such writes take as if the
	// process had allocated them, and extra is what the write about to
	// run adds to what the script holds (see padding).
	pad     *padGuard
	virtual uint64
	extra   uint64
	done    chan struct{}
	err     error // errTimeout, errMemory or the parent's error
	n       uint32
	// started is when the script began, resumed when it last came back
	// from a pause (see yield); work counts what the libraries did for it
	// (see longWork), beyond its instructions.
	started, resumed time.Time
	work             uint64
}

func newWatchdog(parent context.Context, now time.Time, l Limits, mem memory, pad *padGuard) *watchdog {
	w := &watchdog{
		parent:   parent,
		deadline: now.Add(l.Timeout),
		maxAlloc: l.MaxAllocBytes,
		mem:      mem,
		pad:      pad,
		done:     make(chan struct{}),
		started:  now,
		resumed:  now,
	}
	// A caller with less time left, such as a line that runs several
	// scripts, shortens the deadline.
	if d, ok := parent.Deadline(); ok && d.Before(w.deadline) {
		w.deadline = d
	}
	if mem.allocs != nil {
		w.next = mem.allocs() + w.maxAlloc
	}
	if !now.Before(w.deadline) {
		w.check() // no time left: stop at the first instruction
	}
	return w
}

// check looks at the limits now; the Go functions of the library call it
// too before work that takes long.
func (w *watchdog) check() {
	if w.err != nil {
		return
	}
	now := time.Now()
	switch {
	case !now.Before(w.deadline):
		w.err = errTimeout
	case w.parent.Err() != nil:
		w.err = w.parent.Err()
	case w.mem.allocs != nil && w.mem.allocs()+w.virtual >= w.next && w.overMemory():
		w.err = errMemory
	default:
		w.yield(now)
		return
	}
	close(w.done)
}

// A script that has run for longScript and done longWork goes on in
// slices: it runs for yieldRun, then pauses for yieldPause, so that a
// script running into its 1 s deadline takes a third of a core, not a
// whole one, and leaves the rest to other learners' requests. The first
// 100 ms run at full speed, so that a script that needs a few hundred
// milliseconds of CPU (Redis's own test of 100,000 redis.call('ping')
// takes some 250 ms here) still finishes within its deadline. Its work is its
// instructions, a unit for every KiB of strings and replies the libraries
// built for it and callWork for each redis.call: a script that builds
// big strings in a few instructions (as one bound for the memory limit
// does) reaches the limit without a pause, however slow the machine, and
// scripts a lesson runs end in microseconds and never pause. The pauses
// are the script's time: its learner's script time budget pays for them
// as for the rest of its run.
const (
	longScript = 100 * time.Millisecond
	longWork   = 1 << 18 // a few milliseconds of instructions
	callWork   = 256     // a redis.call takes as long as some hundreds
	yieldRun   = 5 * time.Millisecond
	yieldPause = 15 * time.Millisecond
)

// yield pauses a long script when its slice has run out (see longScript),
// never past its deadline, and at once if its caller gives up.
func (w *watchdog) yield(now time.Time) {
	if uint64(w.n)+w.work < longWork || now.Sub(w.started) < longScript || now.Sub(w.resumed) < yieldRun {
		return
	}
	t := time.NewTimer(min(yieldPause, w.deadline.Sub(now)))
	select {
	case <-t.C:
	case <-w.parent.Done():
	}
	t.Stop()
	w.resumed = time.Now()
}

// overMemory judges the script's memory, and sets when to judge it next.
func (w *watchdog) overMemory() bool {
	w.judged++
	held := w.mem.held(w.maxAlloc) + w.extra
	if held > w.maxAlloc {
		return true
	}
	w.next = w.mem.allocs() + w.virtual + max(w.maxAlloc-held, w.maxAlloc/8)
	return false
}

func (w *watchdog) Deadline() (time.Time, bool) { return w.deadline, true }
func (w *watchdog) Value(key any) any           { return w.parent.Value(key) }
func (w *watchdog) Err() error                  { return w.err }

// Done is called by the Lua VM before each instruction.
func (w *watchdog) Done() <-chan struct{} {
	w.n++
	if w.n%checkEvery == 0 {
		w.check()
	}
	return w.done
}

// guarded is the context of a script that writes tables at computed
// keys: its Done also looks at the instruction about to run (see
// padding.go), which scripts without such writes need not pay for.
type guarded struct{ *watchdog }

// context returns what the script runs with: the watchdog, or with pad
// set, the watchdog that looks at each instruction.
func (w *watchdog) context() context.Context {
	if w.pad != nil {
		return guarded{w}
	}
	return w
}

// Done is watchdog.Done, and a look at the instruction. Only the VM's
// loop calls it (the channel library, which would too, is not opened),
// and it has just read the frame's function and instruction: they are
// there.
func (g guarded) Done() <-chan struct{} {
	w := g.watchdog
	w.n++
	if w.n%checkEvery == 0 {
		w.check()
	}
	p := w.pad
	cf := *(*unsafe.Pointer)(p.frame)
	fn := *(**lua.LFunction)(unsafe.Add(cf, p.fnOff))
	if inst := fn.Proto.Code[*(*int)(unsafe.Add(cf, p.pcOff))-1]; int(inst>>26) == lua.OP_SETTABLE {
		w.setTable(p, cf, fn, inst)
	}
	return w.done
}
