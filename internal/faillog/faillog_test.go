package faillog_test

import (
	"testing"
	"time"

	"github.com/locklab/locklab/internal/faillog"
	"github.com/locklab/locklab/internal/fakeclock"
	"github.com/locklab/locklab/internal/testenv"
)

// TestOncePerMinutePerKind: each kind is logged at its first failure and
// then at most once every minute, the line counting the failures of its
// kind not logged since; kinds do not hold each other back.
func TestOncePerMinutePerKind(t *testing.T) {
	var logs testenv.Logs
	clock := fakeclock.New(time.Time{})
	l := faillog.New(logs.Logger(), clock.Now)
	for range 100 {
		l.Warn("rate limiter", "error", "down")
		l.Warn("read progress", "error", "down")
		clock.Add(time.Second / 10) // 100 failures of each kind in 10 s
	}
	if got := logs.Messages(); got["rate limiter"] != 1 || got["read progress"] != 1 {
		t.Fatalf("after 100 failures of two kinds in 10 s: lines %v; want one of each", got)
	}
	clock.Add(faillog.Every - 10*time.Second)
	l.Warn("rate limiter", "error", "down")
	attrs := logs.Attrs("rate limiter")
	if len(attrs) != 2 {
		t.Fatalf("a minute after the first line: %d lines of the kind; want 2", len(attrs))
	}
	for i, want := range []int64{0, 99} {
		if got := attrs[i][faillog.NotLogged].Int64(); got != want {
			t.Errorf("line %d: %s = %d; want %d", i, faillog.NotLogged, got, want)
		}
	}
	if got := attrs[1]["error"].String(); got != "down" {
		t.Errorf("line 2: error = %q; want the caller's attributes kept", got)
	}
	if got := logs.Count("read progress"); got != 1 {
		t.Errorf("read progress lines = %d; want 1 (it did not fail again)", got)
	}
}
