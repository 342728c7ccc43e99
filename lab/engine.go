package lab

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/locklab/locklab/luaredis"
	"github.com/locklab/locklab/race"
)

// The timing every schedule uses. A TTL in whole seconds keeps {ttl} and
// {ttl_s} the same lock.
const (
	ttl = 2000 * time.Millisecond
	// margin is one-holder's timing assumption: only schedules whose
	// pauses and late replies are all shorter than this are judged,
	// leaving a holder's work (at most workMax) and its lines well inside
	// the TTL.
	margin = ttl / 2
	// workMin and workMax bound how long a holder works before it writes.
	workMin, workMax = ttl / 8, ttl / 4
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
)

// epoch is the virtual wall-clock time at which every schedule starts.
func epoch() time.Time { return time.Date(2024, 1, 1, 9, 0, 0, 0, time.UTC) }

// faultKind is the kind of a fault of a schedule.
type faultKind int

const (
	faultPause   faultKind = iota // a client stops before one of its steps
	faultDelay                    // the reply to one of a client's steps comes late
	faultCrash                    // a client crashes after one of its steps
	faultJump                     // the Redis node's clock jumps forward
	faultRestart                  // the Redis node restarts empty, after a while down
)

// fault is one failure of a schedule. Client faults name a step of the
// client's job after it takes the lock (see client.steps); node faults a
// virtual time.
type fault struct {
	kind   faultKind
	client int // 0-based
	step   int
	d      time.Duration // the pause, the delay, the jump, the time down
	at     time.Duration // node faults
}

// plan is what a schedule does besides the recipe: how many clients run
// it, and the faults.
type plan struct {
	clients int
	faults  []fault
}

// honest reports whether p keeps one-holder's timing assumptions.
func (p plan) honest() bool {
	for _, f := range p.faults {
		switch {
		case f.kind == faultJump:
			return false
		case (f.kind == faultPause || f.kind == faultDelay) && f.d >= margin:
			return false
		}
	}
	return true
}

// The lengths of the systematic pauses and delays, in TTLs: shorter and
// longer than the TTL.
var (
	pauseLens = []float64{0.1, 0.4, 0.75, 1.05, 1.25, 1.6, 2.5}
	delayLens = []float64{0.3, 1.1, 1.75}
)

func ttlTimes(f float64) time.Duration {
	return time.Duration(f * float64(ttl)).Truncate(time.Millisecond)
}

// jobSteps is the number of steps of a client's job after its lock is
// taken, the taking included: every line, and the write.
func jobSteps(r Recipe) int { return len(r.Acquire) + len(r.Extend) + 1 + len(r.Release) }

// systematic lists the single-fault plans, with two clients: node faults,
// then for each step of the job a crash after it and pauses before it and
// delays after it of every length, for either client.
func systematic(r Recipe) []plan {
	var out []plan
	one := func(f fault) { out = append(out, plan{clients: 2, faults: []fault{f}}) }
	for _, at := range []time.Duration{100 * time.Millisecond, 300 * time.Millisecond, 700 * time.Millisecond} {
		for _, j := range []float64{0.5, 1} {
			one(fault{kind: faultJump, at: at, d: ttlTimes(j)})
		}
	}
	for _, at := range []time.Duration{100 * time.Millisecond, 400 * time.Millisecond} {
		one(fault{kind: faultRestart, at: at, d: ttl + ttl/4})
	}
	n := jobSteps(r)
	for step := range n {
		for c := range 2 {
			if step < n-1 {
				one(fault{kind: faultCrash, client: c, step: step})
			}
			if step > 0 {
				for _, l := range pauseLens {
					one(fault{kind: faultPause, client: c, step: step, d: ttlTimes(l)})
				}
			}
			for _, l := range delayLens {
				one(fault{kind: faultDelay, client: c, step: step, d: ttlTimes(l)})
			}
		}
	}
	return out
}

// randomPlan is a plan chosen by rng: two or three clients and one or two
// client faults of random kinds, steps and lengths, perhaps with a clock
// jump. Restarts stay in single-fault plans: a restart that loses a
// fencing counter while a client is paused breaks any Redis-held counter,
// which the race page's failover scenario teaches on its own.
//
// Half the plans keep one-holder's timing assumptions (short pauses and
// delays, no clock jump), so that it is judged in many interleavings too.
func randomPlan(r Recipe, rng *rand.Rand) plan {
	p := plan{clients: 2 + rng.IntN(2)}
	n := jobSteps(r)
	short := rng.IntN(2) == 0
	for range 1 + rng.IntN(2) {
		f := fault{client: rng.IntN(p.clients), step: rng.IntN(n), d: ttlTimes(0.05 + 2.5*rng.Float64())}
		if short {
			f.d = ttlTimes(0.05 + 0.4*rng.Float64())
		}
		kinds := 5
		if short {
			kinds = 4
		}
		switch rng.IntN(kinds) {
		case 0, 1:
			f.kind = faultPause
			if f.step == 0 {
				f.step = 1 % n
			}
		case 2:
			f.kind = faultDelay
		case 3:
			f.kind = faultCrash
			f.step = rng.IntN(max(n-1, 1))
		default:
			f = fault{kind: faultJump, at: time.Duration(rng.IntN(1000)) * time.Millisecond, d: ttlTimes(0.25 + rng.Float64())}
		}
		p.faults = append(p.faults, f)
	}
	return p
}

// planOf returns the plan of schedule n of the check seeded by base.
func planOf(r Recipe, sys []plan, n int, rng *rand.Rand) plan {
	switch {
	case n == 0:
		return plan{clients: 2}
	case n <= len(sys):
		return sys[n-1]
	}
	return randomPlan(r, rng)
}

// scheduleSeed is the seed of schedule n of the check seeded by base.
func scheduleSeed(base uint64, n int) uint64 { return base*MaxSchedules + uint64(n) }

// spend is what a check has used of its budget.
type spend struct {
	b        Budget
	start    time.Time
	startCPU time.Duration
	steps    int
	cache    *luaredis.Cache
}

// newSpend starts counting a check's budget. The caller runs the check
// locked to its OS thread (see threadCPU) until it is done.
func newSpend(b Budget) *spend {
	cpu, _ := threadCPU()
	return &spend{b: b, start: time.Now(), startCPU: cpu, cache: luaredis.NewCache(1 << 20)}
}

// used is the CPU time the check has taken: the thread's, or the time
// since it started where that cannot be measured.
func (sp *spend) used() time.Duration {
	if cpu, ok := threadCPU(); ok {
		return cpu - sp.startCPU
	}
	return time.Since(sp.start)
}

func (sp *spend) line(ctx context.Context) error {
	sp.steps++
	if sp.steps > sp.b.Steps {
		return fmt.Errorf("check: the recipe ran more than %d lines in all: %w", sp.b.Steps, ErrBudget)
	}
	if sp.used() > sp.b.CPU {
		return fmt.Errorf("check: the check used up its %v before it was done; make the recipe's lines cheaper: %w", sp.b.CPU, ErrBudget)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("check: %w", err)
	}
	return nil
}

// result is one schedule's run.
type result struct {
	seed       uint64
	plan       plan
	events     []Event
	found      []race.Found
	violations map[Property]int // event index of each property's first break
	judged     map[Property]bool
	lanes      []string
	faultText  []string
	works      string // "" if every client took the lock
	fencing    bool
}

// explore runs the schedules of a check and sums them up.
func explore(ctx context.Context, r Recipe, ch *Challenge, seed uint64, b Budget) (Report, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	sp := newSpend(b)
	sys := systematic(r)
	rep := Report{Schedules: b.Schedules, Seed: seed, TTLMS: ttl.Milliseconds(), MarginMS: margin.Milliseconds(), Works: true}
	type best struct {
		res   *result
		score [4]int
	}
	bests := map[Property]*best{}
	explored := map[Property]int{}
	for n := range b.Schedules {
		res, err := runSchedule(ctx, r, seed, n, sys, sp)
		if err != nil {
			return Report{}, err
		}
		if n == 0 && res.works != "" {
			rep.Works, rep.WorksText = false, res.works
		}
		for _, p := range Properties() {
			if !res.judged[p.ID] {
				continue
			}
			explored[p.ID]++
			i, broke := res.violations[p.ID]
			if !broke {
				continue
			}
			score := [4]int{len(res.plan.faults), res.plan.clients, int(res.events[i].AtMS), len(res.events)}
			if cur := bests[p.ID]; cur == nil || less(score, cur.score) {
				bests[p.ID] = &best{res: res, score: score}
			}
		}
	}
	rep.Steps = sp.steps
	rep.CPUMS = sp.used().Milliseconds()
	for _, p := range Properties() {
		pr := PropertyResult{ID: p.ID, Holds: bests[p.ID] == nil, Explored: explored[p.ID]}
		if bb := bests[p.ID]; bb != nil {
			pr.Counterexample = bb.res.counterexample(bb.res.violations[p.ID])
		}
		pr.Note = note(p.ID, pr, rep, r.Fencing)
		rep.Properties = append(rep.Properties, pr)
	}
	if ch != nil {
		pr, _ := rep.Property(ch.Property)
		passed := rep.Works && pr.Holds && pr.Explored > 0
		rep.Challenge, rep.Passed = ch.ID, &passed
	}
	return rep, nil
}

func less(a, b [4]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// note qualifies a property's result for people.
func note(p Property, pr PropertyResult, rep Report, fencing bool) string {
	switch {
	case p == PropOneHolder:
		return fmt.Sprintf("Judged in the %d schedules without a clock jump whose pauses and late replies all stay under %d ms, half the %d ms TTL: the timing a TTL lock assumes.", pr.Explored, rep.MarginMS, rep.TTLMS)
	case pr.Explored == 0 && p == PropFreesAfterCrash:
		return "No schedule crashed a client while its lock was in Redis, so nothing could be judged: does the recipe take the lock?"
	case pr.Explored == 0:
		return "No schedule could judge it: does the recipe take the lock?"
	case p == PropNoStaleWrite && !pr.Holds && !fencing:
		return "Fencing is off: the storage takes every write, whoever sends it."
	}
	return ""
}

// replay runs one schedule and returns it as a counterexample.
func replay(ctx context.Context, r Recipe, base uint64, n int, b Budget) (Counterexample, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	res, err := runSchedule(ctx, r, base, n, systematic(r), newSpend(b))
	if err != nil {
		return Counterexample{}, err
	}
	first := -1
	for _, i := range res.violations {
		if first < 0 || i < first {
			first = i
		}
	}
	return *res.counterexample(first), nil
}

// counterexample returns the schedule as a Counterexample that broke at
// event i (-1: none broke).
func (res *result) counterexample(i int) *Counterexample {
	ce := &Counterexample{Seed: res.seed, Faults: res.faultText, Events: res.events, Lanes: res.lanes, Nodes: 1, Violation: i,
		Params: RunParams{TTLMS: ttl.Milliseconds(), Fencing: res.fencing}}
	if ce.Faults == nil {
		ce.Faults = []string{}
	}
	found := res.found
	if len(found) == 0 {
		last := max(len(res.events)-1, 0)
		f := race.Found{Outcome: race.OutcomeSafe, Event: last, Text: "Nothing went wrong."}
		if len(res.events) > 0 {
			f.AtMS = res.events[last].AtMS
		}
		found = []race.Found{f}
	}
	for _, f := range found {
		ce.Outcomes = append(ce.Outcomes, Found{Found: f, TMS: f.AtMS})
	}
	ce.Verdict = found[0].Outcome
	ce.Summary = found[0].Text
	for _, f := range res.found {
		if f.Event == i {
			ce.Summary = f.Text
			break
		}
	}
	return ce
}

// runSchedule runs schedule n of the check seeded by base.
func runSchedule(ctx context.Context, r Recipe, base uint64, n int, sys []plan, sp *spend) (*result, error) {
	seed := scheduleSeed(base, n)
	rng := rand.New(rand.NewPCG(seed, 0x10c1ab))
	p := planOf(r, sys, n, rng)
	s := &sim{
		ctx: ctx, r: r, sp: sp, rng: rng, plan: p, start: epoch(),
		tokens:     map[string]string{},
		violations: map[Property]int{},
		judged:     map[Property]bool{PropNoForeignRelease: true, PropNoStaleWrite: true, PropOneHolder: p.honest()},
	}
	s.faults = make([]*fault, len(p.faults))
	for i := range p.faults {
		f := p.faults[i]
		s.faults[i] = &f
	}
	if err := s.startNode(); err != nil {
		return nil, err
	}
	defer func() { s.box.Close() }()
	for i := range p.clients {
		c := &client{id: i, name: fmt.Sprintf("client %d", i+1)}
		c.work = workMin + time.Duration(rng.Int64N(int64(workMax-workMin)/1e6))*time.Millisecond
		s.clients = append(s.clients, c)
		c.steps = s.jobOf()
		start := time.Duration(i) * (10*time.Millisecond + time.Duration(rng.IntN(50))*time.Millisecond)
		s.at(start, func() { s.attempt(c) })
	}
	for _, f := range s.faults {
		switch f.kind {
		case faultJump:
			s.at(f.at, func() { s.jump(f.d) })
		case faultRestart:
			s.at(f.at, func() { s.crashNode(f.d) })
		}
	}
	if err := s.run(); err != nil {
		return nil, err
	}
	res := &result{seed: seed, plan: p, events: s.events, found: sortFound(s.found), violations: s.violations, judged: s.judged, fencing: r.Fencing}
	for _, c := range s.clients {
		res.lanes = append(res.lanes, c.name)
		if c.acquired == 0 && res.works == "" {
			res.works = fmt.Sprintf("In the schedule without faults, %s never took the lock", c.name)
			if c.lastReply != "" {
				res.works += fmt.Sprintf(": acquire line 1 answered %s every time", c.lastReply)
			}
			res.works += "; the lock is taken when acquire line 1 answers OK or a positive integer."
		}
	}
	res.lanes = append(res.lanes, "redis", "storage")
	for _, f := range p.faults {
		res.faultText = append(res.faultText, s.faultText(f))
	}
	return res, nil
}
