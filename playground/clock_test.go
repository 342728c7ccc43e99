package playground

import (
	"sync"
	"time"

	"github.com/locklab/locklab/playground/resp"
	"github.com/locklab/locklab/playground/script"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func scriptLimitsForTests() script.Limits {
	return script.Limits{Timeout: 100 * time.Millisecond}
}

func intValue(n int64) resp.Value { return resp.Int(n) }
