package limit

import "time"

// Rates are the limits an operator sets; New turns them into Limits.
type Rates struct {
	// Writes is state-changing requests per second per learner; 0 turns
	// every limit off, script budget and carry limits included (for
	// benchmarks).
	Writes int
	// WritesPerAddress is state-changing requests per second per client
	// address.
	WritesPerAddress int
	// Scripts is playground lines that run Lua per second per learner; ten
	// times as many are allowed per address.
	Scripts int
	// Races is race simulations per second per client address, in RaceUnit
	// of CPU time each.
	Races int
	// ScriptTimeout is how long one playground script may run.
	ScriptTimeout time.Duration
}

// Every limiter allows bursts of twice its rate a second.
const burstFactor = 2

// Script time, in units of ScriptUnit, refilled a second per learner and
// per address: a learner whose scripts all run into the deadline gets one
// every ScriptNeed/learnerRefill seconds (10 s with a 1 s deadline), an
// address five times as many.
const learnerRefill, addressRefill = 10, 50

// Lines whose scripts the playground stopped: a learner may have three
// and then one every stoppedEvery (with a 1 s deadline, a third of what
// the script time alone allows), an address five times as many.
const (
	stoppedEvery, stoppedBurst                     = 30 * time.Second, 3
	stoppedEveryPerAddress, stoppedBurstPerAddress = 6 * time.Second, 15
)

// New builds the Limits for r, made by m (in this process, or shared by
// every replica). A rate of 0 is no limit of that kind; r.Writes 0 is no
// limit at all.
func New(m Maker, r Rates) Limits {
	if r.Writes == 0 {
		return Limits{}
	}
	per := func(perSecond int) Limiter {
		if perSecond <= 0 {
			return nil
		}
		return m.Limiter(perSecond, burstFactor*perSecond)
	}
	l := Limits{
		Writes: per(r.Writes), WritesPerAddress: per(r.WritesPerAddress),
		Scripts: per(r.Scripts), ScriptsPerAddress: per(10 * r.Scripts),
		RaceNeed: r.Races,
	}
	if a, ok := m.(Asker); ok {
		l.Asker = a
	}
	if r.Races > 0 {
		l.Races = m.Meter(r.Races, burstFactor*r.Races)
	}
	// A script starts when its learner and address hold a deadline's
	// worth. Quick scripts cost one unit; one that runs into its deadline
	// costs the whole of it. A learner may hold two deadlines' worth, an
	// address five.
	need := ScriptNeed(r.ScriptTimeout)
	l.ScriptTime = ScriptBudget{
		Learner: m.Meter(learnerRefill, 2*need), Address: m.Meter(addressRefill, 5*need),
		Need: need, LearnerRefill: learnerRefill, AddressRefill: addressRefill,
		Stopped:                m.MeterPer(1, stoppedEvery, stoppedBurst),
		StoppedPerAddress:      m.MeterPer(1, stoppedEveryPerAddress, stoppedBurstPerAddress),
		StoppedEvery:           stoppedEvery,
		StoppedEveryPerAddress: stoppedEveryPerAddress,
	}
	return l
}
