package playground

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestOneDeadlinePerLine: a line that runs many scripts, by redis-cli's
// repeat prefix or by EXEC of queued EVALs, gets one script deadline in
// all. It used to get one per script: "100 EVAL ..." held the sandbox and a
// CPU for 100 seconds.
func TestOneDeadlinePerLine(t *testing.T) {
	limits := scriptLimitsForTests()
	s := newTestSandbox(t, newFakeClock(), Limits{Script: limits})
	spin := `EVAL "while true do end" 0`
	// Fifty scripts: a deadline each would hold the line for fifty
	// deadlines, far more than any busy machine adds to one.
	const scripts = 50
	queue := []string{"MULTI"}
	for range scripts {
		queue = append(queue, spin)
	}
	for _, tt := range []struct {
		name    string
		setup   []string
		line    string
		stopped int // scripts that say they were stopped
	}{
		// The repeats stop once the deadline is used up, and say so.
		{"repeat prefix", nil, fmt.Sprintf("%d %s", scripts, spin), 1},
		// A transaction runs whole, as in Redis: each script after the
		// deadline stops at once.
		{"transaction", queue, "EXEC", scripts},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, line := range tt.setup {
				s.Exec(context.Background(), ClientA, line)
			}
			start := time.Now()
			res, _ := s.Exec(context.Background(), ClientA, tt.line)
			if d, most := time.Since(start), scripts/2*limits.Timeout; d > most {
				t.Errorf("%s took %v; want one %v deadline for the line, not one a script (under %v)", tt.line, d, limits.Timeout, most)
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
