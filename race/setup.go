package race

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/sim"
)

// Setup is what a learner may know of a run before it is played: who
// wants the lock and when, the TTL, what each client does with it, the
// pauses, crashes and clock jumps the scenario has and the faults added to
// it, and whether the storage checks fencing tokens, one sentence each,
// for the parameters p. It never says what happens: that is for the
// learner to predict. Errors wrap ErrUnknownScenario or ErrBadParams.
func Setup(id string, p Params) ([]string, error) {
	sc, ok := scenarioByID(id)
	if !ok {
		return nil, fmt.Errorf("setup %q: %w", id, ErrUnknownScenario)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("setup %q: %w", id, err)
	}
	return sc.describe(p), nil
}

// describe writes the scenario's setup with p: its own plan, then the
// faults added to it.
func (sc scenario) describe(p Params) []string {
	out := sc.plan(p)
	for _, f := range p.Faults {
		out = append(out, f.text(sc.redis()))
	}
	return out
}

// redis is how the scenario's setup names the "redis" fault target.
func (sc scenario) redis() string {
	if sc.primary {
		return "the primary"
	}
	return "Redis"
}

// FaultText says what f does in the scenario, in one sentence: Fault.Text,
// with the "redis" target named as the scenario's setup names it (the
// primary, in a scenario with a primary and a replica).
func (in Info) FaultText(f Fault) string {
	sc, _ := scenarioByID(in.ID)
	return f.text(sc.redis())
}

// The sentences several scenarios' setups share.

// asking says how many clients want the lock, on what, and when each
// asks first.
func asking(on string, at ...time.Duration) string {
	whens := make([]string, len(at))
	for i, t := range at {
		whens[i] = fmt.Sprintf("client %d at %s", i+1, Seconds(t))
	}
	count := "Two"
	if len(at) == 3 {
		count = "Three"
	}
	return fmt.Sprintf("%s clients want the same lock on %s: client 1 asks for it at %s, %s.", count, on, Seconds(at[0]), sim.JoinAnd(whens[1:]))
}

const retryLine = "A client that gets nil asks again after a random wait of about a tenth of the TTL."

func ttlLine(p Params) string {
	return fmt.Sprintf("The lock's time to live (TTL) is %s.", Seconds(p.TTL))
}

// releaseWith says how clients release the lock.
func releaseWith(p Params) string {
	if p.Release == ReleaseDel {
		return "with a plain DEL"
	}
	return "with a script that compares the key with its own token before deleting it"
}

// workLine says what a client does once it holds the lock.
func workLine(p Params) string {
	return fmt.Sprintf("Once it has the lock, each client works for %s, writes to the storage, and releases it %s.", Seconds(p.Work), releaseWith(p))
}

// fencingLine says whether the storage checks fencing tokens.
func fencingLine(p Params) string {
	if p.Fencing {
		return "Fencing tokens are on: the lock's script takes each client's token from an INCR counter on Redis, and the storage refuses a write whose token is lower than the highest it has seen."
	}
	return "Fencing tokens are off: the storage takes every write."
}

// pauseFor is a client's pause, said before it happens.
func pauseFor(d time.Duration) string {
	return fmt.Sprintf("freezes for %s (a garbage-collection pause, say)", Seconds(d))
}

// The plans of the scenarios. Each says the times and lengths its setup
// in scenarios() uses.

func planNormal(p Params) []string {
	return []string{asking("one Redis", 0, p.TTL/20), retryLine, ttlLine(p), workLine(p), fencingLine(p)}
}

func planPause(p Params) []string {
	out := []string{asking("one Redis", 0, p.TTL/2), retryLine, ttlLine(p), workLine(p)}
	if p.Pause > 0 {
		out = append(out, "Halfway through its work, client 1 "+pauseFor(p.Pause)+" and cannot notice time passing.")
	}
	return append(out, fencingLine(p))
}

func planReleaseDel(p Params) []string {
	out := []string{asking("one Redis", 0, p.TTL/2, p.Work+p.Pause+p.TTL/100), retryLine, ttlLine(p), workLine(p)}
	if p.Pause > 0 {
		out = append(out, "After its write and before it releases the lock, client 1 "+pauseFor(p.Pause)+".")
	}
	return append(out, fencingLine(p))
}

func planRenewal(p Params) []string {
	out := []string{asking("one Redis", 0, p.TTL), retryLine, ttlLine(p), workLine(p),
		fmt.Sprintf("While it works, a client extends its lock every %s, a third of the TTL, with a script that extends the key only if its token is still there.", Seconds(renewPeriod(p)))}
	if p.Pause > 0 {
		out = append(out, "Halfway through its work, client 1 "+pauseFor(p.Pause)+"; its renewals freeze with it.")
	}
	return append(out, fencingLine(p))
}

// planRedlock is the start of both Redlock scenarios' plans.
func planRedlock(p Params) []string {
	return []string{
		"Five Redis nodes and Redlock: a client holds the lock once it has set its key on a majority of them, 3 of 5, and only for its validity: the TTL minus the time the attempt took and an allowance for clock drift.",
		"The network is split: client 1 reaches only nodes 1, 2 and 3, client 2 only nodes 3, 4 and 5.",
		fmt.Sprintf("Client 1 asks for the lock at 0 s, client 2 at %s. A client without a majority deletes its keys and asks again after a random wait of about a tenth of the TTL.", Seconds(p.TTL/10+p.TTL/20)),
		ttlLine(p),
		fmt.Sprintf("Once it has the lock, each client works for %s, writes to the storage, and releases it; a client whose validity runs out before its work is done stops without writing.", Seconds(p.Work)),
	}
}

// redlockFencing is the storage of the Redlock scenarios.
const redlockFencing = "Redlock hands out no fencing token, so the storage takes every write."

func planClockJump(p Params) []string {
	out := planRedlock(p)
	if p.ClockJump > 0 {
		out = append(out, fmt.Sprintf("At %s, node 3's clock jumps %s ahead (a bad time sync, say).", Seconds(p.TTL/10), Seconds(p.ClockJump)))
	}
	return append(out, redlockFencing)
}

func planRedlockCrash(p Params) []string {
	return append(planRedlock(p),
		fmt.Sprintf("At %s, node 3 crashes; it keeps its data only in memory, and it restarts %s.", Seconds(p.TTL/10), later(p.RestartDelay)),
		redlockFencing)
}

func planFailover(p Params) []string {
	out := []string{
		fmt.Sprintf("One Redis primary, node 1, and an asynchronous replica, node 2, which copies each write %s after the primary has it. Sentinel promotes the replica once the primary has been down for %s.", Seconds(p.ReplicationLag), Seconds(p.TTL/10)),
		asking("the primary", 0, p.TTL/20),
		retryLine, ttlLine(p),
		fmt.Sprintf("Once it has the lock, client 1 works for %s and client 2 for %s; each then writes to the storage and releases it %s.", Seconds(p.Work), Seconds(p.Work/2), releaseWith(p)),
	}
	if p.Wait {
		out = append(out, fmt.Sprintf("When the primary answers OK, a client runs WAIT 1 %d and uses the lock only once a replica has it.", waitTimeout(p).Milliseconds()))
	} else {
		out = append(out, "A client uses the lock as soon as the primary answers OK, without WAIT.")
	}
	out = append(out, fmt.Sprintf("At %s, node 1, the primary, crashes; it keeps its data only in memory, and it restarts %s.", Seconds(p.ReplicationLag/2), later(p.RestartDelay)))
	return append(out, fencingLine(p))
}

func planWatchdog(p Params) []string {
	out := []string{asking("one Redis", 0, p.TTL/2), retryLine, ttlLine(p),
		fmt.Sprintf("Client 1's work would outlast the run, but %s after it starts, the work hangs for good (a deadlock, or a call that never returns); the process stays alive.", Seconds(p.Work))}
	if p.Renew == RenewProgress {
		out = append(out, fmt.Sprintf("Client 1 runs a watchdog that extends its lock every %s, a third of the TTL, but only if the work has made progress since the last extension, and at most %d times.", Seconds(renewPeriod(p)), maxRenewals))
	} else {
		out = append(out, fmt.Sprintf("Client 1 runs a watchdog that extends its lock every %s, a third of the TTL, on a timer, for as long as its process lives.", Seconds(renewPeriod(p))))
	}
	out = append(out,
		fmt.Sprintf("Once it has the lock, client 2 works for %s, writes to the storage, and releases it %s.", Seconds(p.TTL/5), releaseWith(p)),
		fmt.Sprintf("The run is watched until %s.", Seconds(watchdogHorizon(p))))
	return append(out, fencingLine(p))
}

// later says when a crashed node restarts: "2 s later", "at once".
func later(d time.Duration) string {
	if d <= 0 {
		return "at once"
	}
	return Seconds(d) + " later"
}

// Text says what the fault does, in one sentence: "At 1 s, client 1
// pauses for 15 s."
func (f Fault) Text() string { return f.text("Redis") }

// text is Text with redis the name of the "redis" target: Redis, or the
// primary where there are two nodes.
func (f Fault) text(redis string) string {
	who := f.Target
	switch {
	case who == "redis":
		who = redis
	case isClientTarget(who):
		who = "client " + who[len("client"):]
	case isNodeTarget(who):
		who = "node " + who[len("node"):]
	}
	at := Seconds(f.At)
	switch f.Kind {
	case FaultPause:
		return fmt.Sprintf("At %s, %s pauses for %s.", at, who, Seconds(f.Length))
	case FaultCrash:
		if isClientTarget(f.Target) {
			return fmt.Sprintf("At %s, %s crashes and never runs again.", at, who)
		}
		keeps := "losing its data"
		if f.Persist {
			keeps = "keeping its data"
		}
		return fmt.Sprintf("At %s, %s crashes, %s, and restarts %s.", at, who, keeps, later(f.Length))
	case FaultClockJump:
		return fmt.Sprintf("At %s, %s's clock jumps %s ahead.", at, who, Seconds(f.Length))
	case FaultClockBack:
		return fmt.Sprintf("At %s, %s's clock jumps %s back.", at, who, Seconds(f.Length))
	case FaultDelay:
		dir := "from"
		if isClientTarget(f.Target) {
			dir = "to"
		}
		return fmt.Sprintf("At %s, the next reply %s %s is delayed by %s.", at, dir, who, Seconds(f.Length))
	}
	return f.String()
}
