package playground

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestPatternWorkBounded: a glob of thousands of wildcards over a 60 KB
// key name once took seconds inside one miniredis call (and, at 8,000,
// the worker's watchdog killed the worker); it is refused before it runs,
// while the patterns people type still work.
func TestPatternWorkBounded(t *testing.T) {
	s := newTestSandbox(t, newFakeClock(), Limits{})
	ctx := context.Background()
	long := strings.Repeat("a", 60_000)
	for _, line := range []string{"SET " + long + " v", "SET lock:invoice:7 t", "HSET h " + long + " v"} {
		if res, err := s.Exec(ctx, ClientA, line); err != nil || res.Output != "OK" && res.Output != "(integer) 1" {
			t.Fatalf("%.20s… = %q, %v", line, res.Output, err)
		}
	}
	bomb := strings.Repeat("*a", 1000) + "*b"
	for _, tt := range []struct{ line, want string }{
		{"KEYS " + bomb, "use fewer * ? and [ ]"},
		{"SCAN 0 MATCH " + bomb, "use fewer * ? and [ ]"},
		{"HSCAN h 0 MATCH " + bomb, "use fewer * ? and [ ]"},
		{"KEYS lock:*", `"lock:invoice:7"`},
		{"KEYS *invoice*", `"lock:invoice:7"`},
	} {
		res, _ := s.Exec(ctx, ClientA, tt.line)
		if !strings.Contains(res.Output, tt.want) {
			t.Errorf("%.30q… = %.120q; want it to contain %.40q", tt.line, res.Output, tt.want)
		}
		if res.RunTime > s.limits.Script.Timeout {
			t.Errorf("%.30q… ran %v", tt.line, res.RunTime)
		}
	}
}

// TestInspectorShortensKeyNames: the key inspector shows at most keyWidth
// characters of a name, so that a sandbox of 64 KB names does not make
// a listing of megabytes.
func TestInspectorShortensKeyNames(t *testing.T) {
	s := newTestSandbox(t, newFakeClock(), Limits{})
	name := strings.Repeat("k", 30_000)
	if res, _ := s.Exec(context.Background(), ClientA, "SET "+name+" v"); res.Output != "OK" {
		t.Fatalf("SET of a 30 KB name = %q", res.Output)
	}
	keys, err := s.Keys()
	if err != nil || len(keys) != 1 {
		t.Fatalf("Keys() = %v, %v", keys, err)
	}
	if n := utf8.RuneCountInString(keys[0].Key); n > keyWidth || !strings.HasSuffix(keys[0].Key, "…") {
		t.Errorf("Keys()[0].Key has %d characters (%.20q…); want at most %d, ending in …", n, keys[0].Key, keyWidth)
	}
}
