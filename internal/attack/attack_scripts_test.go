package attack

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// scriptTimeout is the servers' -script-timeout (the default).
const scriptTimeout = time.Second

// spin is a script that runs until the playground stops it.
const spin = `"while true do end"`

// dodge is one way of running a spinning script, and how many scripts the
// lines may run at most.
type dodge struct {
	name    string
	lines   []string
	scripts int
}

// dodges are the ways a learner might run scripts past the budget: a
// redis-cli repeat count in front, other spellings, scripts queued in a
// transaction, EVALSHA after SCRIPT LOAD, FCALL after FUNCTION LOAD, and (in attackScriptBudget)
// two lines at once.
var dodges = []dodge{
	{"FCALL", []string{`FUNCTION LOAD REPLACE "#!lua name=spinlib\nredis.register_function('spin', function() while true do end end)"`, "FCALL spin 0"}, 1},
	{"plain", []string{"EVAL " + spin + " 0"}, 1},
	{"repeat 1", []string{"1 EVAL " + spin + " 0"}, 1},
	{"repeat 3", []string{"3 eval " + spin + " 0"}, 3},
	{"mixed case", []string{"eVaL " + spin + " 0"}, 1},
	{"quoted name", []string{`"EVAL" ` + spin + " 0"}, 1},
	{"EVAL_RO", []string{"EVAL_RO " + spin + " 0"}, 1},
	{"MULTI", []string{"MULTI", "EVAL " + spin + " 0", "EVAL " + spin + " 0", "EVAL " + spin + " 0", "EXEC"}, 3},
	{"EVALSHA", []string{"SCRIPT LOAD " + spin, "EVALSHA 694a5fe1ddb97a4c6a1bf299d9537c7d3d0f84e7 0"}, 1},
}

// attackScriptBudget has one learner on the limited server spend eight
// seconds trying every dodge, from two tabs at once, and sums the time
// its lines ran scripts on the server: at most what docs/configuration.md's budget
// grants (two deadlines up front, then 0.1 s a second) plus one deadline.
func attackScriptBudget(t *testing.T, tg *target) {
	s := tg.limited
	b := newBrowser(s)
	if _, out := b.exec("script-start", "PING", ordinary); out != "PONG" {
		t.Fatalf("first PING = %q", out)
	}
	const length, tabs = 8 * time.Second, 2
	type result struct {
		dodge   string
		line    string
		a       answer
		server  time.Duration
		stopped int
	}
	var mu sync.Mutex
	var results []result
	from := time.Now()
	var wg sync.WaitGroup
	for tab := range tabs {
		wg.Go(func() {
			pace := time.NewTicker(50 * time.Millisecond) // an attacker's loop, not a wait
			defer pace.Stop()
			for i := tab; time.Since(from) < length; i++ {
				d := dodges[i%len(dodges)]
				for _, line := range d.lines {
					// A line may run its own scripts and, as the
					// sandbox runs one command at a time, wait for one
					// the other tab started.
					scripts := d.scripts
					if strings.HasPrefix(line, "MULTI") || strings.HasPrefix(line, "SCRIPT") || strings.HasPrefix(line, "FUNCTION") {
						scripts = 0
					}
					deadline := scriptTimeout * time.Duration(scripts+1)
					a, out := b.exec("script", line, deadline)
					mu.Lock()
					results = append(results, result{dodge: d.name, line: line, a: a, stopped: stoppedScripts(out)})
					mu.Unlock()
					<-pace.C
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(from)

	type tally struct {
		lines, limited, stopped, late int
		time                          time.Duration
	}
	by := map[string]*tally{}
	var total time.Duration
	var late []string
	for i := range results {
		r := &results[i]
		// The time the server spent on the line, as it logged it; a
		// line the client gave up on counts what the client waited.
		r.server = r.a.took
		if d, ok := s.log.serverLatency(r.a.uri, 5*time.Second); ok {
			r.server = d
		}
		tl := by[r.dodge]
		if tl == nil {
			tl = &tally{}
			by[r.dodge] = tl
		}
		tl.lines++
		tl.stopped += r.stopped
		if r.a.status == 429 {
			tl.limited++
		}
		if r.a.err != nil {
			tl.late++
			late = append(late, r.line+": "+r.a.String())
		}
		// A line that says it stopped n scripts ran them for as long as
		// it took, up to n deadlines (it may have waited for something
		// else first). One that took a quarter of a deadline or more
		// without saying why is counted as running a script that long;
		// quick refusals and PONGs cost nothing here.
		var used time.Duration
		switch {
		case r.stopped > 0:
			used = min(r.server, time.Duration(r.stopped)*scriptTimeout)
		case r.server >= scriptTimeout/4:
			used = r.server
		}
		tl.time += used
		total += used
	}
	budget := 2*scriptTimeout + time.Duration(float64(elapsed)*0.1)
	var rows strings.Builder
	for _, d := range dodges {
		if tl := by[d.name]; tl != nil {
			fmt.Fprintf(&rows, "\n  %-11s %3d lines, %3d refused (429), %2d scripts stopped at the deadline, %v of script time",
				d.name+":", tl.lines, tl.limited, tl.stopped, tl.time.Round(10*time.Millisecond))
		}
	}
	t.Logf("one learner, %d tabs, %v: %d lines, %v of script time on the server; the budget allows %v (2 deadlines + 0.1 s a second), %v with one deadline's margin:%s",
		tabs, elapsed.Round(time.Millisecond), len(results), total.Round(10*time.Millisecond), budget.Round(10*time.Millisecond), (budget + scriptTimeout).Round(10*time.Millisecond), rows.String())
	if total > budget+scriptTimeout {
		t.Errorf("one learner got %v of script time in %v; the budget allows %v (plus a %v margin)", total.Round(10*time.Millisecond), elapsed.Round(time.Millisecond), budget.Round(10*time.Millisecond), scriptTimeout)
	}
	if len(late) > 0 {
		t.Errorf("%d script lines got no answer within their deadline plus %v; first: %s", len(late), slack, late[0])
	}
	tg.mon.checkPings(t, s, from, time.Now(), "while a learner dodges the script budget")
}

// stoppedScripts counts the lines of a playground answer that report a
// script stopped at its deadline.
func stoppedScripts(out string) int {
	n := 0
	for line := range strings.Lines(strings.ToLower(out)) {
		if strings.Contains(line, "script") && (strings.Contains(line, "stopped") || strings.Contains(line, "timeout") ||
			strings.Contains(line, "timed out") || strings.Contains(line, "deadline")) {
			n++
		}
	}
	return n
}
