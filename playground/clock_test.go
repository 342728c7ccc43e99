package playground

import (
	"time"

	"github.com/locklab/locklab/internal/fakeclock"
	"github.com/locklab/locklab/playground/resp"
	"github.com/locklab/locklab/playground/script"
)

// newFakeClock is the tests' shared fake clock at its fixed start.
func newFakeClock() *fakeclock.Clock { return fakeclock.New(time.Time{}) }

func scriptLimitsForTests() script.Limits {
	return script.Limits{Timeout: 100 * time.Millisecond}
}

func intValue(n int64) resp.Value { return resp.Int(n) }
