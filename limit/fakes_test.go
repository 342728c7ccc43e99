package limit

import (
	"context"
	"errors"
	"time"
)

// fakeClock is a clock that moves only when the test says so.
type fakeClock struct{ t time.Time }

func newFakeClock() *fakeClock { return &fakeClock{t: time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time          { return c.t }
func (c *fakeClock) Advance(d time.Duration) { c.t = c.t.Add(d) }

var errDown = errors.New("redis down")

// fakeLimiter refuses the keys in no and fails when err is set.
type fakeLimiter struct {
	no    map[string]bool
	err   error
	asked []string
}

func (l *fakeLimiter) Allow(_ context.Context, key string) (bool, error) {
	l.asked = append(l.asked, key)
	if l.err != nil {
		return false, l.err
	}
	return !l.no[key], nil
}

// fakeMeter holds have units per key (burst for a new key), fails when
// err is set, and notes whether each Take's context had ended.
type fakeMeter struct {
	burst     int
	have      map[string]int
	err       error
	taken     map[string]int
	takeEnded bool
}

func newFakeMeter(burst int) *fakeMeter {
	return &fakeMeter{burst: burst, have: map[string]int{}, taken: map[string]int{}}
}

func (m *fakeMeter) units(key string) int {
	if n, ok := m.have[key]; ok {
		return n
	}
	return m.burst
}

func (m *fakeMeter) Available(_ context.Context, key string) (int, error) {
	if m.err != nil {
		return 0, m.err
	}
	return m.units(key), nil
}

func (m *fakeMeter) Take(ctx context.Context, key string, n int) error {
	if ctx.Err() != nil {
		m.takeEnded = true
	}
	if m.err != nil {
		return m.err
	}
	m.taken[key] += n
	m.have[key] = max(0, m.units(key)-n)
	return nil
}
