package playground

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/luaredis"
)

// TestHelpGivesTheSandboxLimits: help ends with the limits the sandbox
// enforces, its defaults or what the server set.
func TestHelpGivesTheSandboxLimits(t *testing.T) {
	for _, tt := range []struct {
		limits Limits
		want   string
	}{
		{Limits{}, "Limits: lines of 64 KiB, 8,192 arguments, values of 64 KiB, 1,000 keys and 4 MiB of data, scripts of 1 second that hold at most 16 MiB."},
		{Limits{MaxLineBytes: 1000, MaxArgs: 12, MaxKeys: 10_000, MaxDataBytes: 1 << 30, Script: luaredis.Limits{Timeout: 250 * time.Millisecond, MaxAllocBytes: 8 << 20}},
			"Limits: lines of 1000 bytes, 12 arguments, values of 64 KiB, 10,000 keys and 1024 MiB of data, scripts of 250 ms that hold at most 8 MiB."},
		{Limits{Script: luaredis.Limits{Timeout: 2 * time.Second}}, "scripts of 2 seconds that"},
	} {
		s := newTestSandbox(t, newFakeClock(), tt.limits)
		res, err := s.Exec(context.Background(), ClientA, "help")
		if err != nil || !strings.HasPrefix(res.Output, helpText+"\n") || !strings.Contains(res.Output[len(helpText):], tt.want) {
			t.Errorf("help with %+v ends %q, %v; want %q", tt.limits, res.Output[strings.LastIndexByte(res.Output, '\n')+1:], err, tt.want)
		}
	}
	for _, tt := range []struct {
		n    int
		want string
	}{{0, "0"}, {999, "999"}, {1000, "1,000"}, {8192, "8,192"}, {1234567, "1,234,567"}, {-1234, "-1,234"}} {
		if got := thousands(tt.n); got != tt.want {
			t.Errorf("thousands(%d) = %q; want %q", tt.n, got, tt.want)
		}
	}
}
