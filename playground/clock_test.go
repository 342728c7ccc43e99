package playground

import (
	"time"

	"github.com/locklab/locklab/internal/fakeclock"
	"github.com/locklab/locklab/luaredis"
	"github.com/locklab/locklab/resp"
)

// newFakeClock is the tests' shared fake clock at its fixed start.
func newFakeClock() *fakeclock.Clock { return fakeclock.New(time.Time{}) }

func scriptLimitsForTests() luaredis.Limits {
	return luaredis.Limits{Timeout: 100 * time.Millisecond}
}

func intValue(n int64) resp.Value { return resp.Int(n) }
