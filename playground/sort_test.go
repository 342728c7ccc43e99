package playground

import (
	"strings"
	"testing"
)

// TestSortWorkBound: SORT's lookups are counted as work before it runs,
// elements times patterns, and a SORT over the bound is refused.
func TestSortWorkBound(t *testing.T) {
	s := newTestSandbox(t, newFakeClock(), Limits{MaxWork: 1000})
	for i := range 300 {
		s.m.RPush("l", strings.Repeat("x", i%7))
	}
	runSteps(t, s, []step{
		{ClientA, "SORT l ALPHA LIMIT 0 1", `1) ""`},
		{ClientA, "SORT l BY w_* GET # GET o_* GET p_*", "(error) ERR the playground runs commands that visit at most 1000 elements, and this one would visit about 1500 (each key counts its elements every time it is named); use fewer or smaller keys"},
	})
}
