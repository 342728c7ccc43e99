package testenv

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// SlowEnv is the environment variable that turns on the slow tier:
// LOCKLAB_SLOW_TESTS=1 go test ./... runs the browser tests, the attack
// suite, the load and failover tests and the long fuzz seeds too. .ci/run
// sets it; without it go test ./... is the fast tier.
const SlowEnv = "LOCKLAB_SLOW_TESTS"

// SlowTier reports whether the slow tier runs.
func SlowTier() bool { return os.Getenv(SlowEnv) == "1" }

// Slow skips t unless the slow tier runs; kind says which part of it t
// belongs to (browser, attack, load, failover, fuzz). In -short mode the
// slow tier is skipped even when asked for.
func Slow(t testing.TB, kind string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("skipping the %s test in -short mode", kind)
	}
	if !SlowTier() {
		t.Skipf("skipping the %s test: it is in the slow tier (%s=1 go test ./..., or .ci/run)", kind, SlowEnv)
	}
}

// TierNotice is the line the fast tier prints once to say what it left
// out and how to run it.
func TierNotice() string {
	if SlowTier() {
		return ""
	}
	return fmt.Sprintf("fast tier: browser, attack, load, failover and long fuzz tests were left out; run them with %s=1 go test ./... (they need chromium and redis-server), or run .ci/run", SlowEnv)
}

// HangGuard is how long a fast-tier test lets work run that a limit must
// stop, before calling the limit broken: work that no limit stops runs for
// minutes or for ever, and a busy machine delays a working limit by
// seconds at most. It checks that the work stopped, not how fast; a test
// of how fast compares with a control measured in the same run.
const HangGuard = 30 * time.Second
