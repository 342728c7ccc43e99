package playground

import (
	"context"
	"testing"
	"time"
)

// TestCommandReadsTheClockOnce: a command reads the sandbox clock once,
// however many steps it takes here (SET with an expiry checks, writes and
// sets the TTL) and however many commands its script calls, and the line
// once more for the clock it answers with. Each reading of a moved clock
// makes miniredis walk every key of the sandbox.
func TestCommandReadsTheClockOnce(t *testing.T) {
	var reads int
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s, err := NewSandbox(SandboxOptions{Now: func() time.Time {
		reads++
		at = at.Add(time.Millisecond) // a clock that has moved at every reading
		return at
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tt := range []struct{ line, want string }{
		{"SET lock:a tok PX 30000 NX", "OK"},
		{"SET lock:a tok2 PX 30000 GET", `"tok"`},
		{"SETEX lock:b 30 tok", "OK"},
		{`EVAL "redis.call('SET', KEYS[1], 'x', 'PX', 500); redis.call('PEXPIRE', KEYS[1], 900); return redis.call('PTTL', KEYS[1])" 1 lock:c`, "(integer) 900"},
		{"PTTL lock:a", "(integer) 29994"}, // set three lines ago: 6 readings of 1 ms
	} {
		reads = 0
		res, _, err := s.ExecWithin(context.Background(), ClientA, tt.line, 1<<20)
		if err != nil || res.Output != tt.want {
			t.Fatalf("%s: %q, %v; want %q", tt.line, res.Output, err, tt.want)
		}
		if reads > 2 {
			t.Errorf("%s read the clock %d times; want once for the command and once for the answer", tt.line, reads)
		}
	}
}
