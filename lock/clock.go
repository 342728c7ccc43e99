package lock

import (
	"context"
	"fmt"
	"time"
)

// Clock tells the time and waits. Acquire uses it to measure how long an
// attempt took (Redlock's validity) and to wait between retries, so a test or
// a simulation can run the lock on virtual time.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// Sleep waits for d, or returns the context's error if it ends first.
	Sleep(ctx context.Context, d time.Duration) error
}

// RealClock is the Clock of the machine: time.Now and a timer.
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// Sleep waits for d or until ctx is done.
func (RealClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("sleep %v: %w", d, ctx.Err())
	}
}
