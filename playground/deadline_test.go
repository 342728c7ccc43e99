package playground

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestOneDeadlinePerLine: a line that runs many scripts, by redis-cli's
// repeat prefix or by EXEC of queued EVALs, gets one script deadline in
// all. It used to get one per script: "100 EVAL ..." held the sandbox and a
// CPU for 100 seconds.
func TestOneDeadlinePerLine(t *testing.T) {
	s := newTestSandbox(t, newFakeClock(), Limits{Script: scriptLimitsForTests()})
	spin := `EVAL "while true do end" 0`
	for _, tt := range []struct {
		name    string
		setup   []string
		line    string
		stopped int // scripts that say they were stopped
	}{
		// The repeats stop once the deadline is used up, and say so.
		{"repeat prefix", nil, "5 " + spin, 1},
		// A transaction runs whole, as in Redis: each script after the
		// deadline stops at once.
		{"transaction", []string{"MULTI", spin, spin, spin, spin, spin}, "EXEC", 5},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, line := range tt.setup {
				s.Exec(context.Background(), ClientA, line)
			}
			start := time.Now()
			res, _ := s.Exec(context.Background(), ClientA, tt.line)
			if d := time.Since(start); d > 350*time.Millisecond {
				t.Errorf("%s took %v; want about one 100ms deadline", tt.line, d)
			}
			if n := strings.Count(res.Output, "stopped the script after 100ms"); n != tt.stopped {
				t.Errorf("%s = %q; want %d scripts stopped", tt.line, res.Output, tt.stopped)
			}
			if res, _ := s.Exec(context.Background(), ClientB, "PING"); res.Output != "PONG" {
				t.Errorf("PING after %s = %q; want PONG", tt.line, res.Output)
			}
		})
	}
}
