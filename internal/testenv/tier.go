package testenv

import (
	"fmt"
	"os"
	"testing"
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
