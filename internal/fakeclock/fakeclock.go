// Package fakeclock is the one fake clock of the tests: time that moves
// only when a test moves it, with timers that fire when it passes them, so
// that TTLs, idle times, retries and deferred work are tested without
// sleeping.
package fakeclock

import (
	"context"
	"sync"
	"time"
)

// Start is the time a clock made by New(time.Time{}) starts at: a fixed
// instant, so that timelines and golden output do not depend on the day.
var Start = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// Clock is a fake clock, safe for concurrent use. Its zero value is not
// ready; use New.
type Clock struct {
	mu      sync.Mutex
	now     time.Time
	step    time.Duration
	timers  []*timer
	sleeps  []time.Duration
	onSleep func(n int) error
}

type timer struct {
	at time.Time
	f  func()
}

// New returns a clock at t, or at Start if t is zero.
func New(t time.Time) *Clock {
	if t.IsZero() {
		t = Start
	}
	return &Clock{now: t}
}

// Now returns the clock's time: a func() time.Time for any Options.Now.
// With a step (see SetStep), the clock then moves on by it.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.now
	c.now = c.now.Add(c.step)
	return t
}

// SetStep makes every Now move the clock on by d afterwards, so that each
// attempt that reads the time appears to take d. Timers do not fire on
// these steps; Add and Sleep fire them.
func (c *Clock) SetStep(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.step = d
}

// Sleep is a Clock.Sleep (as lock.Clock) that returns at once: it records
// d, moves the clock on by it, runs the timers it passes and the hook of
// OnSleep, and returns the hook's error or else the context's.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	n, f := len(c.sleeps), c.onSleep
	c.mu.Unlock()
	c.fire(false)
	if f != nil {
		if err := f(n); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// OnSleep sets a hook that the n-th Sleep calls (n from 1): to make a
// sleep fail, or to change the world while the sleeper waits.
func (c *Clock) OnSleep(f func(n int) error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.onSleep = f
}

// Sleeps returns the durations Sleep was called with, in order.
func (c *Clock) Sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// Add moves the clock forward by d and runs, in the caller's goroutine,
// the timers it passes.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
	c.fire(false)
}

// Set moves the clock to t (back as well as forward) and runs the timers
// that are then due.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
	c.fire(false)
}

// AfterFunc is time.AfterFunc on the fake clock: f runs when the clock
// passes d from now, or at RunTimers. The returned stop reports whether it
// stopped the timer before f ran, as time.Timer.Stop does.
func (c *Clock) AfterFunc(d time.Duration, f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &timer{at: c.now.Add(d), f: f}
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

// RunTimers runs every pending timer now, without moving the clock: for
// deferred work that a test wants done without letting TTLs run.
func (c *Clock) RunTimers() { c.fire(true) }

// Pending returns how many timers have neither fired nor been stopped.
func (c *Clock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// fire runs the due timers (all of them if all is set) outside the lock,
// so that a timer's f may use the clock.
func (c *Clock) fire(all bool) {
	c.mu.Lock()
	var due []*timer
	keep := c.timers[:0]
	for _, t := range c.timers {
		if all || !t.at.After(c.now) {
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
