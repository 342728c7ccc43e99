package lab

import (
	"math/rand/v2"
	"time"
)

// The timing every schedule uses. A TTL in whole seconds keeps {ttl} and
// {ttl_s} the same lock.
const (
	ttl = 2000 * time.Millisecond
	// margin is one-holder's timing assumption: a schedule is judged when
	// every holder's work, pauses and late replies together stay under
	// it, half the TTL, which leaves its lines well inside the TTL.
	margin = ttl / 2
	// workMin and workMax bound how long a holder works before it writes
	// in a random schedule; a systematic one works workFixed.
	workMin, workMax = ttl / 8, ttl / 4
	workFixed        = 300 * time.Millisecond
	// retryMin and retryMax bound the random delay before a client asks
	// again for a lock it did not get.
	retryMin, retryMax = ttl / 10, ttl / 5
	// rtt is the time one line takes, reply included.
	rtt = time.Millisecond
	// horizon is when a schedule stops: long after any well-behaved job,
	// so that a lock that is never freed only costs retries until then.
	horizon = 8 * ttl
	// maxEvents stops a schedule whose recipe makes an unreadable story.
	maxEvents = 400
	// lockKey is {key}.
	lockKey = "lock:lab"
	// longest is the longest pause or late reply, in TTLs.
	longest = 2.5
	// downDelayed and downQuick are how long Redis stays down in a
	// restart without persistence: longer than the TTL (the Redis
	// documentation's delayed restart), or hardly at all.
	downDelayed = ttl + ttl/4
	downQuick   = ttl / 10
	// downWithData is how long a restart that keeps the data takes.
	downWithData = ttl / 4
	// freeBound caps how long after a crash frees-after-crash waits for a
	// lock whose holder set a very long TTL.
	freeBound = 4 * ttl
	// spacing separates the schedule numbers of two check seeds: a
	// schedule's seed is the check's seed times spacing plus its number.
	spacing = 1 << 20
)

// faultKind is the kind of a fault of a schedule.
type faultKind int

const (
	faultPause    faultKind = iota // a client stops just before one of its steps
	faultDelay                     // the reply to one of a client's steps comes late
	faultCrash                     // a client crashes after one of its steps
	faultRestart                   // Redis restarts, just before a client's step
	faultJump                      // Redis's clock jumps ahead, just before a client's step
	faultJumpBack                  // Redis's clock jumps back, just before a client's step
)

// fault is one failure of a schedule. Every fault is tied to a step of a
// client's job (see client.steps), the first time that client reaches
// it: a node fault happens just before that step, so that it falls
// between the same two lines whatever the timing.
type fault struct {
	kind    faultKind
	client  int // 0-based
	step    int
	d       time.Duration // the pause, the delay, the jump, the time down
	persist bool          // a restart that keeps the data
	node    int           // the node a node fault strikes, 0-based
	// mid marks a systematic fault within an acquire round over several
	// nodes (see singlesMulti).
	mid bool
}

// trigger is a client's step: where a fault strikes.
type trigger struct{ client, step int }

func (f fault) at() trigger { return trigger{f.client, f.step} }

// plan is what a schedule does besides the recipe: how many clients run
// it, the faults, and whether its timing is fixed (systematic schedules)
// or drawn from its seed (random ones).
type plan struct {
	clients int
	faults  []fault
	random  bool
	// timing seeds the work times, start times and retries of a random
	// plan: a shrunk plan keeps the timing of the plan it came from.
	timing uint64
}

// stalls is how long faults stop client c: its pauses and late replies.
func (p plan) stalls(c int) time.Duration {
	var d time.Duration
	for _, f := range p.faults {
		if f.client == c && (f.kind == faultPause || f.kind == faultDelay) {
			d += f.d
		}
	}
	return d
}

// jumps reports whether the plan moves Redis's clock, and back.
func (p plan) jumps() (some, back bool) {
	for _, f := range p.faults {
		some = some || f.kind == faultJump || f.kind == faultJumpBack
		back = back || f.kind == faultJumpBack
	}
	return some, back
}

func ttlTimes(f float64) time.Duration {
	return time.Duration(f * float64(ttl)).Truncate(time.Millisecond)
}

// jobSteps is the number of steps of a client's job: every line on every
// node, and the write.
func jobSteps(r Recipe) int {
	return (len(r.Acquire)+len(r.Extend)+len(r.Release))*r.nodeCount() + 1
}

// writeStep is the index of the write among a job's steps.
func writeStep(r Recipe) int { return (len(r.Acquire) + len(r.Extend)) * r.nodeCount() }

// The length classes of the systematic pauses and late replies, in TTLs:
// inside one-holder's margin, past the TTL, and past two TTLs (long
// enough for another client to take the lock and use it).
var (
	pauseClasses      = []float64{0.25, 1.25, longest}
	delayClasses      = []float64{1.25}
	shortPauseClasses = []float64{0.25}
	shortDelayClasses = []float64{0.25}
)

// singles lists every plan of one fault with the given number of
// clients, in a fixed order: for each step, for each client, the node
// faults before it, the pauses before it, the late replies to it and a
// crash after it.
func singles(r Recipe, m Model, clients int) []plan {
	if r.nodeCount() > 1 {
		return singlesMulti(r, m, clients)
	}
	n := jobSteps(r)
	write := writeStep(r)
	pauses, delays := pauseClasses, delayClasses
	if !m.LongStalls {
		pauses, delays = shortPauseClasses, shortDelayClasses
	}
	var out []plan
	one := func(f fault) { out = append(out, plan{clients: clients, faults: []fault{f}}) }
	for step := range n {
		for c := range clients {
			if step > 0 || c > 0 {
				// Before the first line of the first client nothing has
				// happened yet: a node fault there changes nothing.
				switch m.Restarts {
				case RestartsWithData:
					one(fault{kind: faultRestart, client: c, step: step, d: downWithData, persist: true})
				case RestartsEmptyDelayed:
					one(fault{kind: faultRestart, client: c, step: step, d: downDelayed})
				case RestartsEmpty:
					one(fault{kind: faultRestart, client: c, step: step, d: downQuick})
				}
				if m.ClockJumps != JumpsNone {
					one(fault{kind: faultJump, client: c, step: step, d: ttl})
				}
				if m.ClockJumps == JumpsBoth {
					one(fault{kind: faultJumpBack, client: c, step: step, d: ttl})
				}
			}
			if step > 0 {
				for _, l := range pauses {
					one(fault{kind: faultPause, client: c, step: step, d: ttlTimes(l)})
				}
			}
			if step != write {
				for _, l := range delays {
					one(fault{kind: faultDelay, client: c, step: step, d: ttlTimes(l)})
				}
			}
			if step < n-1 {
				one(fault{kind: faultCrash, client: c, step: step})
			}
		}
	}
	return out
}

// space is the systematic part of a check: the numbered schedules that
// every check of a recipe and model explores, whatever its seed.
//
// Schedule 0 has no fault; then come the single faults with two clients,
// the single faults with three, every pair of single faults with two
// clients (numbered pairBase + i*len(two) + j for i < j), and then the
// random schedules: random schedule k is number randomBase + k*variants,
// and the numbers after it, to the next, are its shrunk variants (see
// shrink).
type space struct {
	two, three []plan
	combine    bool
	multi      bool // several nodes: only the pairs pairable keeps
}

func newSpace(r Recipe, m Model) space {
	return space{two: singles(r, m, 2), three: singles(r, m, 3), combine: m.Combine, multi: r.nodeCount() > 1}
}

func (sp space) pairBase() int   { return 1 + len(sp.two) + len(sp.three) }
func (sp space) randomBase() int { return sp.pairBase() + len(sp.two)*len(sp.two) }

// variants is how many schedule numbers each random schedule has: the
// schedule, and what shrinking may make of it (see shrink).
const variants = 16

// randomNumber is the schedule number of random schedule k's variant v.
func (sp space) randomNumber(k, v int) int { return sp.randomBase() + k*variants + v }

// randomOf returns the plan of schedule n, a random schedule or one of
// its variants, of the check seeded by base; false if n names none.
func (sp space) randomOf(r Recipe, m Model, base uint64, n int) (plan, bool) {
	if n < sp.randomBase() || n >= sp.randomNumber(MaxRandom, 0) {
		return plan{}, false
	}
	k, v := (n-sp.randomBase())/variants, (n-sp.randomBase())%variants
	timing := scheduleSeed(base, sp.randomNumber(k, 0))
	p := randomPlan(r, m, rand.New(rand.NewPCG(timing, 0x5eed)))
	p.timing = timing
	return shrink(p, v)
}

// shrink returns variant v of a random plan: bit i of v (i < 3) drops
// fault i, and bit 3 drops the third client and its faults. A variant
// that drops nothing that is there is no schedule.
func shrink(p plan, v int) (plan, bool) {
	if v == 0 {
		return p, true
	}
	out := p
	out.faults = nil
	for i, f := range p.faults {
		drop := v&(1<<i) != 0
		if v&8 != 0 && f.client == 2 {
			if drop {
				return plan{}, false
			}
			drop = true
		}
		if !drop {
			out.faults = append(out.faults, f)
		}
	}
	if v&8 != 0 {
		if p.clients != 3 {
			return plan{}, false
		}
		out.clients = 2
	}
	if v&7 >= 1<<len(p.faults) {
		return plan{}, false
	}
	return out, true
}

// plan returns the plan of schedule n, or false if n names none. A pair
// whose two faults are the same kind at the same step is no schedule: it
// is one longer fault.
func (sp space) plan(n int) (plan, bool) {
	switch {
	case n == 0:
		return plan{clients: 2}, true
	case n <= len(sp.two):
		return sp.two[n-1], true
	case n < sp.pairBase():
		return sp.three[n-1-len(sp.two)], true
	case n < sp.randomBase():
		if !sp.combine {
			return plan{}, false
		}
		i, j := (n-sp.pairBase())/len(sp.two), (n-sp.pairBase())%len(sp.two)
		a, b := sp.two[i].faults[0], sp.two[j].faults[0]
		if i >= j || (a.kind == b.kind && a.at() == b.at() && a.node == b.node) || (sp.multi && !pairable(a, b)) {
			return plan{}, false
		}
		return plan{clients: 2, faults: []fault{a, b}}, true
	}
	return plan{}, false
}

// randomPlan is a plan chosen by rng within the model: two or three
// clients and one to three faults (one without Combine) of random kinds,
// steps and lengths.
func randomPlan(r Recipe, m Model, rng *rand.Rand) plan {
	p := plan{clients: 2 + rng.IntN(2), random: true}
	n := jobSteps(r)
	most := 1
	if m.Combine {
		most = 3
	}
	kinds := []faultKind{faultPause, faultPause, faultDelay, faultCrash}
	if m.Restarts != RestartsNone {
		kinds = append(kinds, faultRestart)
	}
	if m.ClockJumps != JumpsNone {
		kinds = append(kinds, faultJump)
	}
	if m.ClockJumps == JumpsBoth {
		kinds = append(kinds, faultJumpBack)
	}
	long := longest - 0.05
	if !m.LongStalls {
		long = float64(margin)/float64(ttl)/2 - 0.05
	}
	for range 1 + rng.IntN(most) {
		f := fault{kind: kinds[rng.IntN(len(kinds))], client: rng.IntN(p.clients), step: rng.IntN(n)}
		if f.isNodeFault() && r.nodeCount() > 1 {
			f.node = rng.IntN(r.nodeCount())
		}
		switch f.kind {
		case faultPause, faultDelay:
			f.d = ttlTimes(0.05 + long*rng.Float64())
			if f.kind == faultPause && f.step == 0 {
				f.step = 1 % n
			}
			if f.kind == faultDelay && f.step == writeStep(r) {
				f.kind = faultPause
			}
		case faultCrash:
			f.step = rng.IntN(max(n-1, 1))
		case faultRestart:
			switch m.Restarts {
			case RestartsWithData:
				f.d, f.persist = downWithData, true
			case RestartsEmptyDelayed:
				f.d = downDelayed
			default:
				f.d = downQuick
			}
		default:
			f.d = ttlTimes(0.25 + rng.Float64())
		}
		p.faults = append(p.faults, f)
	}
	return p
}
