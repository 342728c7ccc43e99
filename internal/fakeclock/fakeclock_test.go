package fakeclock

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// TestTimers checks that a timer fires when the clock passes it and not
// before, that a stopped one never fires, and that RunTimers runs the
// rest without moving the clock.
func TestTimers(t *testing.T) {
	c := New(time.Time{})
	if !c.Now().Equal(Start) {
		t.Fatalf("New(zero).Now() = %v; want %v", c.Now(), Start)
	}
	var fired []string
	c.AfterFunc(time.Second, func() { fired = append(fired, "1s") })
	c.AfterFunc(3*time.Second, func() { fired = append(fired, "3s") })
	stop := c.AfterFunc(2*time.Second, func() { fired = append(fired, "2s") })
	late := c.AfterFunc(time.Hour, func() { fired = append(fired, "1h") })
	c.Add(999 * time.Millisecond)
	if len(fired) != 0 {
		t.Fatalf("fired %v before any timer was due", fired)
	}
	c.Add(time.Millisecond)
	if !stop() {
		t.Error("stop() of a pending timer = false; want true")
	}
	if stop() {
		t.Error("a second stop() = true; want false")
	}
	c.Add(2 * time.Second)
	if got := c.Pending(); got != 1 {
		t.Errorf("Pending() = %d; want 1 (the hour)", got)
	}
	now := c.Now()
	c.RunTimers()
	if want := []string{"1s", "3s", "1h"}; len(fired) != 3 || fired[0] != want[0] || fired[1] != want[1] || fired[2] != want[2] {
		t.Errorf("fired %v; want %v", fired, want)
	}
	if !c.Now().Equal(now) {
		t.Errorf("RunTimers moved the clock from %v to %v", now, c.Now())
	}
	if late() {
		t.Error("stop() after the timer ran = true; want false")
	}
	c.Set(Start)
	if !c.Now().Equal(Start) {
		t.Errorf("after Set(Start) Now() = %v", c.Now())
	}
}

// TestStepAndSleep checks the retry side: a step per Now, sleeps that
// move the clock and fire timers, and the hook's error.
func TestStepAndSleep(t *testing.T) {
	c := New(time.Time{})
	c.SetStep(10 * time.Millisecond)
	if a, b := c.Now(), c.Now(); b.Sub(a) != 10*time.Millisecond {
		t.Errorf("two Nows %v apart; want the step, 10ms", b.Sub(a))
	}
	c.SetStep(0)
	fired := false
	c.AfterFunc(time.Second, func() { fired = true })
	boom := errors.New("boom")
	c.OnSleep(func(n int) error {
		if n == 2 {
			return boom
		}
		return nil
	})
	start := c.Now()
	if err := c.Sleep(context.Background(), time.Second); err != nil || !fired {
		t.Errorf("first Sleep = %v, timer fired %v; want nil and fired", err, fired)
	}
	if err := c.Sleep(context.Background(), time.Second); !errors.Is(err, boom) {
		t.Errorf("second Sleep = %v; want the hook's error", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Sleep(ctx, time.Second); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep with a canceled context = %v; want context.Canceled", err)
	}
	if got := c.Now().Sub(start); got != 3*time.Second {
		t.Errorf("the clock moved %v over three 1s sleeps", got)
	}
	if got := c.Sleeps(); !slices.Equal(got, []time.Duration{time.Second, time.Second, time.Second}) {
		t.Errorf("Sleeps() = %v", got)
	}
}
