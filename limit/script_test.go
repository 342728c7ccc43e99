package limit

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// TestScript checks the admission of a playground line and what it pays
// afterwards.
func TestScript(t *testing.T) {
	const need = 10 // 100 ms
	const learner, addr = "alice", "192.0.2.1"
	script := Line{RunsScript: true, RunsLong: true}
	exec := Line{RunsLong: true} // EXEC: may run what it queued
	plain := Line{}
	type fixture struct {
		scripts, scriptsAddr *fakeLimiter
		learnerM, addrM      *fakeMeter
		stopM, stopAddrM     *fakeMeter
		run                  *Running
		l                    Limits
	}
	for _, tt := range []struct {
		name      string
		line      Line
		setup     func(f *fixture)
		used      time.Duration
		stopped   bool // the playground stopped one of the line's scripts
		want      Decision
		wantErr   bool
		wantTaken int // from the learner's and the address's script time
		wantStops int // from the learner's and the address's stopped lines
		wantAsked bool
	}{
		{name: "a script stopped at its deadline pays it and a stop", line: script, used: 100 * time.Millisecond, stopped: true, wantTaken: need, wantStops: 1, wantAsked: true},
		{name: "a script stopped for its memory pays its time and a stop", line: script, used: 20 * time.Millisecond, stopped: true, wantTaken: 2, wantStops: 1, wantAsked: true},
		{
			name: "the learner's stops are used up", line: script, used: time.Second, wantAsked: true,
			setup: func(f *fixture) { f.stopM.have["st:learner:"+learner] = 0 },
			want:  Decision{"scripts_stopped", 30 * time.Second},
		},
		{
			name: "the address's stops are used up", line: exec, used: time.Second,
			setup: func(f *fixture) { f.stopAddrM.have["st:addr:"+addr] = 0 },
			want:  Decision{"scripts_stopped_per_address", 6 * time.Second},
		},
		{
			name: "a plain line is not held up by stops", line: plain, used: 25 * time.Millisecond, wantTaken: 3,
			setup: func(f *fixture) { f.stopM.have["st:learner:"+learner] = 0 },
		},
		{
			name: "the stop meters fail: open", line: script, used: 100 * time.Millisecond, stopped: true, wantAsked: true, wantErr: true, wantTaken: need,
			setup: func(f *fixture) { f.stopM.err, f.stopAddrM.err = errDown, errDown },
		},
		{name: "a plain line pays what it used, rounded up", line: plain, used: 25 * time.Millisecond, wantTaken: 3},
		{name: "a plain line that ran no script pays nothing", line: plain, used: 0, wantTaken: 0},
		{name: "a quick script pays a unit", line: script, used: time.Millisecond, wantTaken: 1, wantAsked: true},
		{name: "a script that ran into its deadline pays it", line: script, used: 100 * time.Millisecond, wantTaken: need, wantAsked: true},
		{name: "EXEC is not counted by the rate limits but metered", line: exec, used: 0, wantTaken: 1},
		{
			name: "the learner's rate is over", line: script, used: time.Second, wantAsked: true,
			setup: func(f *fixture) { f.scripts.no = map[string]bool{"s:learner:" + learner: true} },
			want:  Decision{"scripts", time.Second},
		},
		{
			name: "the address's rate is over", line: script, used: time.Second, wantAsked: true,
			setup: func(f *fixture) { f.scriptsAddr.no = map[string]bool{"s:addr:" + addr: true} },
			want:  Decision{"scripts_per_address", time.Second},
		},
		{
			name: "the learner has a script running", line: exec, used: time.Second,
			setup: func(f *fixture) { f.run.Enter(learner, "198.51.100.7") },
			want:  Decision{"scripts_running", time.Second},
		},
		{
			name: "the learner's time is short", line: exec, used: time.Second,
			setup: func(f *fixture) { f.learnerM.have["t:learner:"+learner] = need / 2 },
			want:  Decision{"script_time", 500 * time.Millisecond}, // 5 units at 10 a second
		},
		{
			name: "the address's time is gone", line: exec, used: time.Second,
			setup: func(f *fixture) { f.addrM.have["t:addr:"+addr] = 0 },
			want:  Decision{"script_time_per_address", 200 * time.Millisecond}, // 10 units at 50 a second
		},
		{
			name: "the meters fail: open", line: script, used: time.Millisecond, wantAsked: true, wantErr: true, wantTaken: 1,
			setup: func(f *fixture) { f.learnerM.err, f.addrM.err = errDown, errDown },
		},
		{
			name: "the rate limiters fail: open", line: script, used: time.Millisecond, wantAsked: true, wantErr: true, wantTaken: 1,
			setup: func(f *fixture) { f.scripts.err, f.scriptsAddr.err = errDown, errDown },
		},
		{
			name: "rate limits only, no budget", line: script, used: time.Second, wantAsked: true,
			setup: func(f *fixture) { f.l.ScriptTime = ScriptBudget{} },
		},
		{
			name: "no limits at all", line: script, used: time.Second,
			setup: func(f *fixture) { f.l = Limits{} },
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := &fixture{scripts: &fakeLimiter{}, scriptsAddr: &fakeLimiter{}, learnerM: newFakeMeter(2 * need), addrM: newFakeMeter(5 * need),
				stopM: newFakeMeter(2), stopAddrM: newFakeMeter(10), run: &Running{}}
			f.l = Limits{Scripts: f.scripts, ScriptsPerAddress: f.scriptsAddr, ScriptTime: ScriptBudget{
				Learner: f.learnerM, Address: f.addrM, Need: need, LearnerRefill: 10, AddressRefill: 50,
				Stopped: f.stopM, StoppedPerAddress: f.stopAddrM, StoppedEvery: 30 * time.Second, StoppedEveryPerAddress: 6 * time.Second,
			}}
			if tt.setup != nil {
				tt.setup(f)
			}
			ctx, cancel := context.WithCancel(context.Background())
			charge, d, err := f.l.Script(ctx, f.run, learner, addr, tt.line)
			if d != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("Script = %+v, %v; want %+v, error %v", d, err, tt.want, tt.wantErr)
			}
			cancel() // the client went away: the charge must land all the same
			// An admitted line that may run a script holds the gate until
			// its charge; a refused one does not hold it.
			if tt.want.Limit != "scripts_running" {
				wantHeld := tt.want.Allowed() && tt.line.RunsLong && f.l.ScriptTime.Learner != nil
				entered := f.run.Enter(learner, addr)
				if entered {
					f.run.Leave(learner, addr)
				}
				if entered == wantHeld {
					t.Errorf("the learner holds the gate before the charge: %v; want %v", !entered, wantHeld)
				}
			}
			f.learnerM.err, f.addrM.err = nil, nil
			stopErr := f.stopM.err != nil
			if err := charge(tt.used, tt.stopped); (err != nil) != (stopErr && tt.stopped && tt.want.Allowed()) {
				t.Errorf("charge(%v, %v) = %v", tt.used, tt.stopped, err)
			}
			for _, m := range []struct {
				meter *fakeMeter
				key   string
			}{{f.stopM, "st:learner:" + learner}, {f.stopAddrM, "st:addr:" + addr}} {
				if got := m.meter.taken[m.key]; got != tt.wantStops {
					t.Errorf("charge(%v, %v) took %d from %s; want %d", tt.used, tt.stopped, got, m.key, tt.wantStops)
				}
			}
			if tt.want.Limit != "scripts_running" && !f.run.Enter(learner, addr) {
				t.Error("the learner's next script refused after the charge")
			}
			for _, m := range []struct {
				meter *fakeMeter
				key   string
			}{{f.learnerM, "t:learner:" + learner}, {f.addrM, "t:addr:" + addr}} {
				if got := m.meter.taken[m.key]; got != tt.wantTaken {
					t.Errorf("charge(%v) took %d units from %s; want %d", tt.used, got, m.key, tt.wantTaken)
				}
				if m.meter.takeEnded {
					t.Errorf("charge took from %s on an ended context", m.key)
				}
			}
			if asked := len(f.scripts.asked) > 0; asked != tt.wantAsked {
				t.Errorf("script rate limiter asked: %v; want %v", asked, tt.wantAsked)
			}
		})
	}
}

func TestRunning(t *testing.T) {
	var r Running
	if !r.Enter("a", "1.2.3.4") {
		t.Fatal("first script refused")
	}
	if r.Enter("a", "1.2.3.4") {
		t.Error("a learner's second script at once was let in")
	}
	if r.Enter("a", "5.6.7.8") {
		t.Error("a learner's second script at once, from another address, was let in")
	}
	for i := range ScriptsPerAddress - 1 {
		if !r.Enter("other"+strconv.Itoa(i), "1.2.3.4") {
			t.Fatalf("script %d from the address refused", i+2)
		}
	}
	if r.Enter("one-more", "1.2.3.4") {
		t.Errorf("script %d from one address at once was let in", ScriptsPerAddress+1)
	}
	if !r.Enter("one-more", "5.6.7.8") {
		t.Error("a script from another address was refused")
	}
	r.Leave("a", "1.2.3.4")
	if !r.Enter("a", "1.2.3.4") {
		t.Error("a learner's next script, after the first ended, was refused")
	}
	for _, l := range []string{"a", "one-more"} {
		r.Leave(l, map[string]string{"a": "1.2.3.4", "one-more": "5.6.7.8"}[l])
	}
	for i := range ScriptsPerAddress - 1 {
		r.Leave("other"+strconv.Itoa(i), "1.2.3.4")
	}
	if len(r.byKey) != 0 {
		t.Errorf("after every script left, the gate holds %v; want nothing", r.byKey)
	}
}

func TestScriptNeed(t *testing.T) {
	for _, tt := range []struct {
		timeout time.Duration
		want    int
	}{{10 * time.Millisecond, 1}, {15 * time.Millisecond, 2}, {time.Second, 100}, {10 * time.Second, 1000}} {
		if got := ScriptNeed(tt.timeout); got != tt.want {
			t.Errorf("ScriptNeed(%v) = %d; want %d", tt.timeout, got, tt.want)
		}
	}
	if got := (ScriptBudget{Need: 100}).Deadline(); got != time.Second {
		t.Errorf("Deadline of 100 units = %v; want 1s", got)
	}
}

// TestLineCost: quick lines are free, heavy lines without scripts pay for
// the time they ran past RunAllowance in whole units, rounded down, and
// script lines pay their scripts' time.
func TestLineCost(t *testing.T) {
	for _, tt := range []struct {
		name              string
		script, run, want time.Duration
	}{
		{"quick", 0, 300 * time.Microsecond, 0},
		{"at the allowance", 0, RunAllowance, 0},
		{"under a unit past it", 0, RunAllowance + ScriptUnit - 1, 0},
		{"heavy", 0, RunAllowance + 2*ScriptUnit + 3*time.Millisecond, 2 * ScriptUnit},
		{"the whole deadline", 0, time.Second, time.Second - RunAllowance},
		{"script", 500 * time.Millisecond, 510 * time.Millisecond, 500 * time.Millisecond},
		{"quick script", time.Millisecond, time.Millisecond, time.Millisecond},
	} {
		if got := LineCost(tt.script, tt.run); got != tt.want {
			t.Errorf("%s: LineCost(%v, %v) = %v; want %v", tt.name, tt.script, tt.run, got, tt.want)
		}
	}
}
