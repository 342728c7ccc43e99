package limit

import (
	"context"
	"time"
)

// Limits caps how fast clients may change things, so nobody can starve
// the others. Each limiter counts per key; a nil one is no limit. Learners
// are counted by their cookie and, since cookies cost nothing to drop, by
// their address too (the address limits are higher: a classroom shares
// one). Addresses are given as the caller counts them (an IPv6 client by
// its /64).
type Limits struct {
	// Writes counts each learner's state-changing requests (answers,
	// playground commands); WritesPerAddress counts them per client address.
	Writes, WritesPerAddress Limiter
	// Races meters the race simulations not found in the cache per client
	// address, in units of RaceUnit of CPU time: a run starts when the
	// address holds RaceNeed units (at least one) and is charged the time
	// it took (RaceCost), so typical runs (a millisecond) cost one unit
	// each and the costliest (100 ms or more) empty the meter. With
	// RaceNeed a second's refill, an address gets at most one of those a
	// second, and the wait is never more than a second.
	Races    Meter
	RaceNeed int
	// Scripts counts each learner's playground lines that run Lua (EVAL,
	// EVALSHA, FCALL, SCRIPT, FUNCTION), which may each take up to the script
	// deadline; ScriptsPerAddress counts them per client address.
	Scripts, ScriptsPerAddress Limiter
	// ScriptTime bounds the time scripts run, which the counts above
	// cannot: one script may run until its deadline.
	ScriptTime ScriptBudget
	// Asker answers each request's limits in one batch; nil asks them one
	// at a time (AskEach). New sets it when the Maker is an Asker.
	Asker Asker
}

// LimitsWrites reports whether Write can ever refuse.
func (l Limits) LimitsWrites() bool { return l.Writes != nil || l.WritesPerAddress != nil }

// Write checks a state-changing request by learner ("" for a visitor
// without a cookie) from addr: refused by "writes" or
// "writes_per_address", asked together. It fails open: err is a limiter
// that could not be asked, for the caller to log.
func (l Limits) Write(ctx context.Context, learner, addr string) (Decision, error) {
	var q batch
	if learner != "" {
		q.limiter(l.Writes, "w:learner:"+learner, "writes")
	}
	q.limiter(l.WritesPerAddress, "w:addr:"+addr, "writes_per_address")
	return q.ask(ctx, l.Asker)
}

// RaceUnit is the unit of Limits.Races.
const RaceUnit = 5 * time.Millisecond

// RaceCost is what a run that took d costs, in RaceUnits: at least one.
func RaceCost(d time.Duration) int {
	return max(1, int((d+RaceUnit-1)/RaceUnit))
}

// Race checks a race simulation that is not in the cache, from addr:
// refused by "races_per_address" while the address holds fewer than
// RaceNeed units. It fails open, as the write limits do.
func (l Limits) Race(ctx context.Context, addr string) (Decision, error) {
	if l.Races == nil {
		return Decision{}, nil
	}
	have, err := l.Races.Available(ctx, raceKey(addr))
	if err != nil {
		return Decision{}, err
	}
	if have < max(l.RaceNeed, 1) {
		return Decision{Limit: "races_per_address", Wait: limiterWait}, nil
	}
	return Decision{}, nil
}

// ChargeRace charges addr for a run that took d, even if ctx has ended.
func (l Limits) ChargeRace(ctx context.Context, addr string, d time.Duration) error {
	return take(ctx, l.Races, raceKey(addr), RaceCost(d))
}

func raceKey(addr string) string { return "r:addr:" + addr }
