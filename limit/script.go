package limit

import (
	"context"
	"sync"
	"time"
)

// ScriptBudget meters the time learners' scripts run, in units of
// ScriptUnit, per learner and per address. A script starts only when both
// hold Need units (its deadline's worth) and is charged the time it took,
// so a learner whose scripts keep running into the deadline gets one every
// Need/LearnerRefill seconds, while quick scripts (a unit each) are never
// held up. One learner runs one script at a time (Running).
type ScriptBudget struct {
	Learner, Address             Meter
	Need                         int
	LearnerRefill, AddressRefill int // units per second, for the wait
	// Stopped and StoppedPerAddress count, in whole lines, the lines
	// whose scripts the playground stopped (at their deadline or for
	// their memory), refilled one every StoppedEvery and
	// StoppedEveryPerAddress: a long line starts only while both hold
	// one, and a stopped line takes one. A loop that never ends by
	// mistake costs a learner nothing more; one who keeps sending
	// scripts that must be stopped, each a third of a core for a second,
	// gets one every StoppedEvery, where the time alone would let them
	// have one every Need/LearnerRefill seconds. Nil meters are no such
	// limit.
	Stopped, StoppedPerAddress           Meter
	StoppedEvery, StoppedEveryPerAddress time.Duration
}

// ScriptUnit is the unit of a ScriptBudget.
const ScriptUnit = 10 * time.Millisecond

// ScriptNeed is the units a script with the given deadline needs to
// start: the deadline, rounded up to whole units.
func ScriptNeed(timeout time.Duration) int {
	return int((timeout + ScriptUnit - 1) / ScriptUnit)
}

// Deadline is the longest a script may run, as the budget counts it.
func (b ScriptBudget) Deadline() time.Duration { return time.Duration(b.Need) * ScriptUnit }

// RunAllowance is the run time of a line that is free: a lesson's
// commands take far less, and only heavy lines (SINTER of large sets, a
// long transaction) pay for their time.
const RunAllowance = 20 * time.Millisecond

// LineCost is the time a playground line pays for from the script
// budget, given the time its scripts ran and the time the whole line ran:
// its scripts' time or, for heavy lines without scripts, the time it ran
// past RunAllowance, rounded down to whole units so that quick lines stay
// free.
func LineCost(scriptTime, runTime time.Duration) time.Duration {
	heavy := (runTime - RunAllowance).Truncate(ScriptUnit)
	return max(scriptTime, heavy, 0)
}

// Line is what the playground reads in a line, as far as the script
// limits care.
type Line struct {
	// RunsScript: the line runs or loads Lua (after a repeat count, in any
	// case, queued in a transaction or not); such lines count against the
	// script rate limits.
	RunsScript bool
	// RunsLong: the line may run until its deadline (RunsScript lines,
	// EXEC, which runs what its transaction queued, and a repeat count);
	// such lines start only while the budget holds a deadline's worth, one
	// at a time per learner. Any other line is one command, which the
	// playground's own limits keep short, and pays afterwards for what it
	// used.
	RunsLong bool
}

// Charge is what an admitted line pays, once it has run: the script time
// the sandbox really used, and whether the playground stopped one of its
// scripts (see ScriptBudget.Stopped). It charges even if the request's
// context has ended, and returns the meters' errors for the caller to
// log.
type Charge func(used time.Duration, stopped bool) error

func noCharge(time.Duration, bool) error { return nil }

// Script admits one playground line of learner from addr, under the
// script rate limits (Scripts, ScriptsPerAddress: "scripts",
// "scripts_per_address"), the running-scripts gate run ("scripts_running")
// and the budget ("script_time", "script_time_per_address").
//
// It returns charge, to call with the line's script time once it has run
// (or the time it took, if it failed): every line pays the script time
// the sandbox really used, whether or not it was seen as a script line,
// so no way of typing a script escapes the budget. A refused line is
// charged nothing. Like the write limits, it fails open: err is a limiter
// or meter that could not be asked, for the caller to log.
func (l Limits) Script(ctx context.Context, run *Running, learner, addr string, line Line) (Charge, Decision, error) {
	if l.Scripts == nil && l.ScriptsPerAddress == nil && l.ScriptTime.Learner == nil {
		return noCharge, Decision{}, nil
	}
	b := l.ScriptTime
	budget := b.Learner != nil || b.Stopped != nil
	pay := func(used time.Duration, stopped bool) error { return l.charge(ctx, learner, addr, used, stopped) }
	if !budget {
		pay = noCharge
	}
	if !line.RunsLong {
		return pay, Decision{}, nil
	}
	var q batch
	if line.RunsScript {
		q.limiter(l.Scripts, "s:learner:"+learner, "scripts")
		q.limiter(l.ScriptsPerAddress, "s:addr:"+addr, "scripts_per_address")
	}
	if !budget {
		d, err := q.ask(ctx, l.Asker)
		return noCharge, d, err
	}
	// One line at a time per learner: a second one while the first runs
	// is refused before any limit counts it.
	if !run.Enter(learner, addr) {
		return noCharge, Decision{Limit: "scripts_running", Wait: limiterWait}, nil
	}
	q.need(b.Stopped, "st:learner:"+learner, 1, b.StoppedEvery, "scripts_stopped")
	q.need(b.StoppedPerAddress, "st:addr:"+addr, 1, b.StoppedEveryPerAddress, "scripts_stopped_per_address")
	q.need(b.Learner, "t:learner:"+learner, b.Need, unitEvery(b.LearnerRefill), "script_time")
	q.need(b.Address, "t:addr:"+addr, b.Need, unitEvery(b.AddressRefill), "script_time_per_address")
	d, err := q.ask(ctx, l.Asker)
	if !d.Allowed() {
		run.Leave(learner, addr)
		return noCharge, d, err
	}
	return func(used time.Duration, stopped bool) error {
		run.Leave(learner, addr)
		// An admitted line pays at least a unit, so that even scripts that
		// return at once are not free.
		return pay(max(used, ScriptUnit), stopped)
	}, Decision{}, err
}

// charge takes used, rounded up to whole units, from the learner's and
// the address's script time, and a stopped line from their stopped
// scripts, in one batch. The charge must land even if the client went
// away, so it does not end with ctx.
func (l Limits) charge(ctx context.Context, learner, addr string, used time.Duration, stopped bool) error {
	b := l.ScriptTime
	var q batch
	if stopped {
		q.take(b.Stopped, "st:learner:"+learner, 1)
		q.take(b.StoppedPerAddress, "st:addr:"+addr, 1)
	}
	if used > 0 {
		units := int((used + ScriptUnit - 1) / ScriptUnit)
		q.take(b.Learner, "t:learner:"+learner, units)
		q.take(b.Address, "t:addr:"+addr, units)
	}
	_, err := q.ask(context.WithoutCancel(ctx), l.Asker)
	return err
}

// Running is the running-scripts gate: it counts the scripts running now
// in this process, per learner (one at a time) and per address
// (ScriptsPerAddress). The zero Running is ready for use.
type Running struct {
	mu    sync.Mutex
	byKey map[string]int
}

// ScriptsPerAddress bounds the scripts running at once from one address;
// a classroom behind one address rarely has more than a few.
const ScriptsPerAddress = 8

// Enter reports whether learner may start a script from addr now, and if
// so counts it until Leave.
func (r *Running) Enter(learner, addr string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byKey == nil {
		r.byKey = map[string]int{}
	}
	if r.byKey["l:"+learner] >= 1 || r.byKey["a:"+addr] >= ScriptsPerAddress {
		return false
	}
	r.byKey["l:"+learner]++
	r.byKey["a:"+addr]++
	return true
}

// Leave counts the end of a script that Enter let in.
func (r *Running) Leave(learner, addr string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range []string{"l:" + learner, "a:" + addr} {
		if r.byKey[k]--; r.byKey[k] <= 0 {
			delete(r.byKey, k)
		}
	}
}
