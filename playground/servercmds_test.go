package playground

import (
	"context"
	"fmt"
	"testing"
)

// TestRawStringNotesHaveACeiling: keys changed in place and then expired
// leave no more notes behind than a sandbox may have keys.
func TestRawStringNotesHaveACeiling(t *testing.T) {
	clock := newFakeClock()
	s := newTestSandbox(t, clock, Limits{MaxKeys: 20})
	for i := range 200 {
		k := fmt.Sprintf("k%d", i)
		for _, line := range []string{"SET " + k + " x PX 1", "SETRANGE " + k + " 0 y"} {
			if res, err := s.Exec(context.Background(), ClientA, line); err != nil {
				t.Fatalf("%s: %v %q", line, err, res.Output)
			}
		}
		clock.Add(2e6) // 2 ms: the key expires
	}
	if n := len(s.rawStrings); n > 20 {
		t.Errorf("%d raw-string notes after 200 expired keys; want at most MaxKeys (20)", n)
	}
	runSteps(t, s, []step{
		{ClientA, "SETRANGE k 0 x", "(integer) 1"},
		{ClientA, "OBJECT ENCODING k", `"raw"`},
		{ClientA, "SET k 5", "OK"},
		{ClientA, "OBJECT ENCODING k", `"int"`},
	})
}
