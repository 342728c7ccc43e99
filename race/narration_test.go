package race

import (
	"fmt"
	"strings"
	"testing"
)

// The narration says what the lock package does: SET answers OK and the
// token comes from INCR in the same script; PX takes milliseconds; a
// Redlock's validity counts the time the attempt took; a restart is judged
// by the longest TTL the node granted; a woken client is not told that no
// time has passed. Every golden run is checked.
func TestNarrationMatchesLockCode(t *testing.T) {
	banned := []string{
		"no time has passed",     // a client can read its clock
		"only after a full TTL",  // the rule is the longest TTL the node granted
		"SET NX PX",              // SET takes the key and the token first
		" s) with fencing token", // PX is not in seconds; SET does not return the token
	}
	for _, g := range goldenRuns(t) {
		tl := run(t, g.id, g.p)
		px := fmt.Sprintf("NX PX %d ", g.p.TTL.Milliseconds())
		for i, e := range tl.Events {
			for _, b := range banned {
				if strings.Contains(e.Text, b) {
					t.Errorf("%s: event %d says %q: %s", g.name, i, b, e.Text)
				}
			}
			switch {
			case e.Kind == KindAcquireOK && strings.Contains(e.Text, "SET "):
				if !strings.Contains(e.Text, px) || !strings.Contains(e.Text, "answers OK") {
					t.Errorf("%s: event %d: %q; want SET ... %sanswers OK", g.name, i, e.Text, px)
				}
				token := fmt.Sprintf("INCR in the same script gives it fencing token %d", e.Fence)
				if g.p.Fencing != strings.Contains(e.Text, token) || g.p.Fencing != (e.Fence > 0) {
					t.Errorf("%s: event %d (fencing %v, fence %d): %q; want the token from INCR exactly when fencing is on", g.name, i, g.p.Fencing, e.Fence, e.Text)
				}
			case e.Kind == KindAcquireOK && strings.Contains(e.Text, "majority"):
				if !strings.Contains(e.Text, "the attempt took") || !strings.Contains(e.Text, "clock drift") {
					t.Errorf("%s: event %d: %q; want the validity to count the attempt's time and the drift", g.name, i, e.Text)
				}
			case e.Kind == KindRestart && strings.Contains(e.Text, "empty database"):
				if !strings.Contains(e.Text, "TTL it granted") && !strings.Contains(e.Text, "granted no lock") {
					t.Errorf("%s: event %d: %q; want the restart judged by the TTL the node granted", g.name, i, e.Text)
				}
			}
			if !g.p.Fencing && (e.HighestToken != 0 || e.Fence != 0) {
				t.Errorf("%s: event %d shows tokens (%d, highest %d) with fencing off", g.name, i, e.Fence, e.HighestToken)
			}
		}
	}
}

// A restart's text follows the rule: harmless only if the node stayed
// down longer than the longest TTL it granted.
func TestRestartRule(t *testing.T) {
	for _, tt := range []struct {
		delay int64 // ms
		want  string
	}{
		{1000, "no longer than the 10 s TTL it granted"},
		{10000, "no longer than the 10 s TTL it granted"}, // equal is not longer
		{10001, "longer than the longest TTL it granted"},
	} {
		p := defaultsOf(t, "redlock-crash")
		p.RestartDelay = msDur(tt.delay)
		tl := run(t, "redlock-crash", p)
		i := indexOf(t, tl, "redis node 3", KindRestart)
		if !strings.Contains(tl.Events[i].Text, tt.want) {
			t.Errorf("restart after %d ms: %q; want %q", tt.delay, tl.Events[i].Text, tt.want)
		}
	}
}
