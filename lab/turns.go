package lab

import (
	"sync"
	"time"
)

// Turns lets the checks running in one process take turns, schedule by
// schedule: one schedule runs at a time, and between two schedules the
// turn goes to the check that has run for the least time so far, the one
// holding it included. A short
// check started beside long ones so runs almost at once and finishes in
// proportion to its own size, not theirs, while the long ones share what
// is left. The zero Turns is ready for use; it is safe for concurrent
// use.
type Turns struct {
	mu      sync.Mutex
	busy    bool
	waiting []*turnWait
}

// turnWait is a check waiting for its turn, with the time it has run.
type turnWait struct {
	used time.Duration
	ch   chan struct{}
}

// take waits for the turn of a check that has run for used so far.
func (t *Turns) take(used time.Duration) {
	t.mu.Lock()
	if !t.busy {
		t.busy = true
		t.mu.Unlock()
		return
	}
	w := &turnWait{used: used, ch: make(chan struct{})}
	t.waiting = append(t.waiting, w)
	t.mu.Unlock()
	<-w.ch
}

// give hands the turn to the waiting check that has run least, the one
// that asked first among equals.
func (t *Turns) give() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.waiting) == 0 {
		t.busy = false
		return
	}
	next := 0
	for i, w := range t.waiting {
		if w.used < t.waiting[next].used {
			next = i
		}
	}
	w := t.waiting[next]
	t.waiting = append(t.waiting[:next:next], t.waiting[next+1:]...)
	close(w.ch)
}

// yield, between two schedules of the check that holds the turn and has
// run for used, hands the turn to a waiting check that has run less, and
// waits for it to come back; otherwise the holder keeps it.
func (t *Turns) yield(used time.Duration) {
	t.mu.Lock()
	next := -1
	for i, w := range t.waiting {
		if w.used < used && (next < 0 || w.used < t.waiting[next].used) {
			next = i
		}
	}
	if next < 0 {
		t.mu.Unlock()
		return
	}
	w := t.waiting[next]
	t.waiting = append(t.waiting[:next:next], t.waiting[next+1:]...)
	me := &turnWait{used: used, ch: make(chan struct{})}
	t.waiting = append(t.waiting, me)
	close(w.ch)
	t.mu.Unlock()
	<-me.ch
}
