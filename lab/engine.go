package lab

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/luaredis"
	"github.com/locklab/locklab/sim"
)

// epoch is the virtual wall-clock time at which every schedule starts.
func epoch() time.Time { return time.Date(2024, 1, 1, 9, 0, 0, 0, time.UTC) }

// spend is what a check has used of its budget.
type spend struct {
	b        Budget
	start    time.Time
	startCPU time.Duration
	steps    int
	cache    *luaredis.Cache
	// cur is the schedule being run: the nodes' clock is its clock.
	cur *schedule
	// ran is how long the check's schedules have run in their turns;
	// turn says the check holds the turn.
	ran  time.Duration
	turn bool
	// spare are the nodes of an earlier schedule, emptied for the next
	// one: starting a node (miniredis and a Lua VM) costs more than a
	// schedule's lines.
	spare []*sim.Node
}

// nodeNow is the clock of the schedule being run.
func (sp *spend) nodeNow() time.Time { return sp.cur.nodeClock() }

// close gives the turn back and stops the spare node.
func (sp *spend) close() {
	if sp.turn {
		sp.b.Turns.give()
		sp.turn = false
	}
	for _, n := range sp.spare {
		n.Close()
	}
	sp.spare = nil
}

// startNodes gives the schedule n empty nodes: spare ones, emptied, or
// new ones.
func (s *schedule) startNodes(n int) error {
	for k := range n {
		var node *sim.Node
		if len(s.sp.spare) > 0 {
			node = s.sp.spare[len(s.sp.spare)-1]
			s.sp.spare = s.sp.spare[:len(s.sp.spare)-1]
			if err := node.Reset(); err != nil || node.ID != k+1 {
				node.Close()
				node = nil
			}
		}
		if node == nil {
			var err error
			if node, err = sim.NewNode(k+1, s.nodeOptions()); err != nil {
				return err
			}
		}
		s.nodes = append(s.nodes, node)
	}
	s.keys = make([]keyState, n)
	s.owners = make([]*client, n)
	return nil
}

// keepNodes keeps the schedule's nodes as the spares, the last first.
func (s *schedule) keepNodes() {
	for _, n := range s.sp.spare {
		n.Close()
	}
	s.sp.spare = nil
	for k := len(s.nodes) - 1; k >= 0; k-- {
		s.sp.spare = append(s.sp.spare, s.nodes[k])
	}
	s.nodes = nil
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

// schedule runs one schedule in its turn (see Turns).
func (sp *spend) schedule(ctx context.Context, r Recipe, ru *rules, m Model, base uint64, n int, p plan) (*result, error) {
	if t := sp.b.Turns; t != nil {
		if sp.turn {
			t.yield(sp.ran)
		} else {
			t.take(sp.ran)
			sp.turn = true
		}
		start := time.Now()
		defer func() { sp.ran += time.Since(start) }()
	}
	return runSchedule(ctx, r, ru, m, base, n, p, sp)
}

// result is one schedule's run.
type result struct {
	n          int
	seed       uint64
	plan       plan
	events     []Event
	found      []sim.Found
	violations map[Property]int // event index of each property's first break
	exercised  map[Property]bool
	reached    map[trigger]bool
	lanes      []string
	faultText  []string
	works      string // "" if every client took the lock and released it
	fencing    bool
	nodes      int
}

// score orders counterexamples: fewest faults, then fewest clients, then
// earliest, then shortest.
func (res *result) score(p Property) [4]int {
	i := res.violations[p]
	return [4]int{len(res.plan.faults), res.plan.clients, int(res.events[i].AtMS), len(res.events)}
}

// explore runs the schedules of a check and sums them up: the systematic
// ones (every schedule of up to two faults), then the random ones.
func explore(ctx context.Context, r Recipe, ru *rules, m Model, ch *Challenge, seed uint64, b Budget) (Report, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	sp := newSpend(b)
	defer sp.close()
	space := newSpace(r, m)
	rep := Report{Seed: seed, TTLMS: ttl.Milliseconds(), MarginMS: margin.Milliseconds(), Works: true, Model: m, ModelText: m.Text(),
		Nodes: r.nodeCount(), Quorum: r.quorum()}
	best := map[Property]*result{}
	exercised := map[Property]int{}
	take := func(res *result) {
		rep.Schedules++
		for _, p := range Properties() {
			if res.exercised[p.ID] {
				exercised[p.ID]++
			}
			if _, broke := res.violations[p.ID]; broke {
				if cur := best[p.ID]; cur == nil || less(res.score(p.ID), cur.score(p.ID)) {
					best[p.ID] = res
				}
			}
		}
	}
	run := func(n int) (*result, bool, error) {
		p, ok := space.plan(n)
		if !ok {
			return nil, false, nil
		}
		res, err := sp.schedule(ctx, r, ru, m, seed, n, p)
		if err != nil {
			return nil, false, err
		}
		take(res)
		return res, true, nil
	}
	// The schedule without faults, then each single fault.
	reach := make([]map[trigger]bool, len(space.two))
	for n := 0; n < space.pairBase(); n++ {
		res, _, err := run(n)
		if err != nil {
			return Report{}, err
		}
		switch {
		case n == 0 && res.works != "":
			rep.Works, rep.WorksText = false, res.works
		case n >= 1 && n <= len(space.two):
			reach[n-1] = res.reached
		}
	}
	rep.Systematic = rep.Schedules
	rep.MaxFaults = 1
	if m.Combine {
		// Every pair of single faults, unless one of them never strikes
		// in the other's schedule: then the pair runs exactly as that
		// schedule did, and is a duplicate.
		rep.MaxFaults = 2
		for i := range space.two {
			for j := i + 1; j < len(space.two); j++ {
				a, b := space.two[i].faults[0], space.two[j].faults[0]
				if !reach[i][b.at()] || !reach[j][a.at()] {
					continue
				}
				if _, _, err := run(space.pairBase() + i*len(space.two) + j); err != nil {
					return Report{}, err
				}
			}
		}
		rep.Systematic = rep.Schedules
	}
	// Random schedules from the seed, each shrunk if it broke something
	// no systematic schedule did.
	for k := range b.Random {
		n := space.randomNumber(k, 0)
		p, _ := space.randomOf(r, m, seed, n)
		res, err := sp.schedule(ctx, r, ru, m, seed, n, p)
		if err != nil {
			return Report{}, err
		}
		take(res)
	}
	rep.Random = rep.Schedules - rep.Systematic
	// A property that only a random schedule broke gets that schedule
	// shrunk: fewer faults, then fewer clients, while it still breaks.
	for _, p := range Properties() {
		res := best[p.ID]
		if res == nil || !res.plan.random {
			continue
		}
		k := (res.n - space.randomBase()) / variants
		for v := 1; v < variants; v++ {
			n := space.randomNumber(k, v)
			pl, ok := space.randomOf(r, m, seed, n)
			if !ok || len(pl.faults) >= len(best[p.ID].plan.faults) && pl.clients >= best[p.ID].plan.clients {
				continue
			}
			shrunk, err := sp.schedule(ctx, r, ru, m, seed, n, pl)
			if err != nil {
				return Report{}, err
			}
			rep.Shrunk++
			if _, broke := shrunk.violations[p.ID]; broke && less(shrunk.score(p.ID), best[p.ID].score(p.ID)) {
				best[p.ID] = shrunk
			}
		}
	}
	rep.Steps = sp.steps
	rep.CPUMS = sp.used().Milliseconds()
	for _, p := range Properties() {
		pr := PropertyResult{ID: p.ID, Explored: exercised[p.ID]}
		switch {
		case best[p.ID] != nil:
			pr.Status = StatusBroken
			pr.Counterexample = best[p.ID].counterexample(best[p.ID].violations[p.ID])
		case exercised[p.ID] > 0:
			pr.Status, pr.Holds = StatusHolds, true
		default:
			pr.Status = StatusNotJudged
		}
		pr.Note = note(p.ID, pr, rep, r.Fencing)
		if rep.Nodes > 1 {
			pr.Note = noteOnNodes(p.ID, pr, rep, pr.Note)
		}
		rep.Properties = append(rep.Properties, pr)
	}
	rep.Summary = fmt.Sprintf("All %d schedules with up to %d %s explored, and %d random.", rep.Systematic, rep.MaxFaults, plural(rep.MaxFaults, "fault", "faults"), rep.Random)
	if rep.Nodes > 1 {
		rep.Summary += " " + nodesSummary(rep)
	}
	if ch != nil {
		rep.Challenge = ch.ID
		judgeChallenge(&rep, ch)
	}
	return rep, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
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
	case p == PropOneHolder && pr.Status == StatusNotJudged:
		return "Not judged: no schedule within the timing a TTL lock assumes had two clients take the lock. Does the recipe take the lock?"
	case p == PropOneHolder:
		return fmt.Sprintf("Judged in the %d schedules in which two clients took the lock, no clock jumped, and every client's work, pauses and late replies together stayed under %d ms, half the %d ms TTL: the timing a TTL lock assumes.", pr.Explored, rep.MarginMS, rep.TTLMS)
	case p == PropNoForeignRelease && pr.Status == StatusNotJudged:
		return "Not judged: in no schedule did a client release or renew while another held the lock. Does the recipe take the lock, and release it?"
	case p == PropNoForeignRelease:
		return fmt.Sprintf("Judged in the %d schedules in which a client released or renewed while another held the lock.", pr.Explored)
	case p == PropNoStaleWrite && pr.Status == StatusNotJudged:
		return "Not judged: no schedule had writes from two different holders. Does the recipe take the lock?"
	case p == PropNoStaleWrite && !pr.Holds && !fencing:
		return fmt.Sprintf("Judged in the %d schedules with writes from two different holders. Fencing is off: the storage takes every write, whoever sends it.", pr.Explored)
	case p == PropNoStaleWrite:
		return fmt.Sprintf("Judged in the %d schedules with writes from two different holders.", pr.Explored)
	case p == PropFreesAfterCrash && pr.Status == StatusNotJudged:
		return "Not judged: no client crashed while it held the lock. Does the recipe take the lock?"
	case p == PropFreesAfterCrash:
		return fmt.Sprintf("Judged in the %d schedules in which a holder crashed (and no clock went back): a fresh client must be able to take the lock with the recipe's acquire once the TTL its holder set has run out (at most %s).", pr.Explored, sim.Dur(freeBound))
	}
	return ""
}

// replay runs one schedule and returns it as a counterexample.
func replay(ctx context.Context, r Recipe, ru *rules, m Model, base uint64, n int, b Budget) (Counterexample, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	space := newSpace(r, m)
	p, ok := space.plan(n)
	if n >= space.randomBase() {
		p, ok = space.randomOf(r, m, base, n)
	}
	if !ok {
		return Counterexample{}, fmt.Errorf("replay seed %d: no schedule has that number: %w", scheduleSeed(base, n), ErrBadSeed)
	}
	sp := newSpend(b)
	defer sp.close()
	res, err := runSchedule(ctx, r, ru, m, base, n, p, sp)
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

// scheduleSeed is the seed of schedule n of the check seeded by base.
func scheduleSeed(base uint64, n int) uint64 { return base*spacing + uint64(n) }

// counterexample returns the schedule as a Counterexample that broke at
// event i (-1: none broke).
func (res *result) counterexample(i int) *Counterexample {
	ce := &Counterexample{Seed: res.seed, Faults: res.faultText, Events: res.events, Lanes: res.lanes, Nodes: res.nodes, Violation: i,
		Params: RunParams{TTLMS: ttl.Milliseconds(), Fencing: res.fencing}}
	if ce.Faults == nil {
		ce.Faults = []string{}
	}
	found := res.found
	if len(found) == 0 {
		last := max(len(res.events)-1, 0)
		f := sim.Found{Outcome: sim.OutcomeSafe, Event: last, Text: "Nothing went wrong."}
		if len(res.events) > 0 {
			f.AtMS = res.events[last].AtMS
		}
		found = []sim.Found{f}
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

// runSchedule runs schedule n, with plan p, of the check seeded by base.
// A systematic schedule's timing and retries do not depend on base, so
// that every check of a recipe explores the same ones.
func runSchedule(ctx context.Context, r Recipe, ru *rules, m Model, base uint64, n int, p plan, sp *spend) (*result, error) {
	seed := scheduleSeed(base, n)
	rng := rand.New(rand.NewPCG(uint64(n), 0x10c1ab))
	if p.random {
		rng = rand.New(rand.NewPCG(p.timing, 0x10c1ab))
	}
	some, back := p.jumps()
	if r.nodeCount() > 1 {
		// On several nodes, clocks that jump on a minority of them are
		// within what a majority is meant to outvote (see honest).
		some = p.jumpedNodes() > r.nodeCount()-lock.Quorum(r.nodeCount())
	}
	s := &schedule{
		ctx: ctx, r: r, ru: ru, sp: sp, rng: rng, plan: p, start: epoch(),
		tokens:     map[string]*client{},
		violations: map[Property]int{},
		exercised:  map[Property]bool{},
		reached:    map[trigger]bool{},
		writers:    map[int]bool{},
		store:      sim.Storage{Fencing: r.Fencing},
		backJump:   back,
		honest:     !some,
	}
	s.faults = make([]*fault, len(p.faults))
	for i := range p.faults {
		f := p.faults[i]
		s.faults[i] = &f
	}
	sp.cur = s
	defer s.keepNodes()
	if err := s.startNodes(r.nodeCount()); err != nil {
		return nil, err
	}
	for i := range p.clients {
		c := &client{id: i, name: fmt.Sprintf("client %d", i+1), work: workFixed}
		start := time.Duration(i) * 20 * time.Millisecond
		if p.random {
			c.work = workMin + time.Duration(rng.Int64N(int64(workMax-workMin)/1e6))*time.Millisecond
			start = time.Duration(i) * (10*time.Millisecond + time.Duration(rng.IntN(50))*time.Millisecond)
		}
		if p.stalls(i)+c.work >= margin {
			s.honest = false
		}
		s.clients = append(s.clients, c)
		c.steps = s.jobOf()
		s.at(start, func() { s.begin(c) })
	}
	if err := s.run(); err != nil {
		return nil, err
	}
	s.starve()
	res := &result{n: n, seed: seed, plan: p, events: s.events, found: s.found.Sorted(), violations: s.violations,
		exercised: s.exercised, reached: s.reached, fencing: r.Fencing, nodes: len(s.nodes)}
	for _, c := range s.clients {
		res.lanes = append(res.lanes, c.name)
		if res.works != "" {
			continue
		}
		a, rel := ru.acquire, ru.release
		switch {
		case c.acquired == 0:
			res.works = fmt.Sprintf("In the schedule without faults, %s never took the lock", c.name)
			if c.lastReply != "" {
				res.works += fmt.Sprintf(": %s answered %s", stepName(step{part: "acquire", index: a.line, on: c.lastOn}), c.lastReply)
			}
			res.works += fmt.Sprintf("; the lock is taken when %s %s%s.", stepName(step{part: "acquire", index: a.line}), a.text, s.quorumWords())
		case !c.released && c.releaseReply != "":
			res.works = fmt.Sprintf("In the schedule without faults, %s's release did not succeed: %s answered %s; a release succeeds when %s %s%s.",
				c.name, stepName(c.releaseLine), c.releaseReply, stepName(step{part: "release", index: rel.line}), rel.text, s.quorumWords())
		case !c.released:
			res.works = fmt.Sprintf("In the schedule without faults, %s never released the lock.", c.name)
		}
	}
	for k := range s.nodes {
		res.lanes = append(res.lanes, s.actor(k))
	}
	res.lanes = append(res.lanes, "storage")
	for _, f := range p.faults {
		res.faultText = append(res.faultText, s.faultText(f))
	}
	return res, nil
}
