package playground

import (
	"sync"
	"time"

	"github.com/locklab/locklab/luaredis"
	"github.com/locklab/locklab/resp"
)

// fakeClock is a clock the test moves by hand, with timers that fire
// when it passes them.
type fakeClock struct {
	mu     sync.Mutex
	t      time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	at time.Time
	f  func()
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Add moves the clock forward by d and runs the timers it passes.
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
	c.fire(false)
}

// AfterFunc is time.AfterFunc on the fake clock, as Options.AfterFunc.
func (c *fakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{at: c.t.Add(d), f: f}
	c.timers = append(c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, other := range c.timers {
			if other == t {
				c.timers = append(c.timers[:i], c.timers[i+1:]...)
				return true
			}
		}
		return false
	}
}

// runTimers runs every pending timer now, without moving the clock: for
// tests of replicas, the deferred saves of the Managers as if the learner
// took a second before moving, with TTLs that did not run meanwhile.
func (c *fakeClock) runTimers() { c.fire(true) }

// pendingTimers returns how many timers have not fired.
func (c *fakeClock) pendingTimers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

func (c *fakeClock) fire(all bool) {
	c.mu.Lock()
	var due []*fakeTimer
	keep := c.timers[:0]
	for _, t := range c.timers {
		if all || !t.at.After(c.t) {
			due = append(due, t)
		} else {
			keep = append(keep, t)
		}
	}
	c.timers = keep
	c.mu.Unlock()
	for _, t := range due {
		t.f()
	}
}

func scriptLimitsForTests() luaredis.Limits {
	return luaredis.Limits{Timeout: 100 * time.Millisecond}
}

func intValue(n int64) resp.Value { return resp.Int(n) }
