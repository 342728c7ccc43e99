package lab

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/luaredis"
	"github.com/locklab/locklab/playground"
	"github.com/locklab/locklab/sim"
)

// schedule is one schedule: a virtual clock, the recipe's Redis nodes
// (playground sandboxes on the schedule's clock), the clients running
// the recipe, the storage, and a queue of actions in virtual-time order.
// It runs on one goroutine.
type schedule struct {
	ctx    context.Context
	r      Recipe
	ru     *rules
	sp     *spend
	rng    *rand.Rand
	plan   plan
	faults []*fault // nil once used
	start  time.Time
	q      sim.Queue
	nodes  []*sim.Node
	store  sim.Storage

	clients []*client
	events  []Event
	found   sim.Findings
	err     error

	reached    map[trigger]bool
	violations map[Property]int
	exercised  map[Property]bool
	honest     bool // one-holder's timing assumptions hold in this plan
	backJump   bool // the plan moves the clock back: frees-after-crash is not judged

	tokens  map[string]*client // each acquisition's token
	keys    []keyState         // the lock key on each node, as last seen
	owners  []*client          // the client whose acquisition each node's key holds
	grants  int                // acquisitions so far
	newest  int                // the newest grant among the writes the storage took
	writers map[int]bool       // the grants whose writes reached the storage
	pending []*obligation      // crashed holders whose lock must be freed
}

// keyState is the lock key on the node.
type keyState struct {
	present bool
	typ     string
	value   string        // as the key inspector shows it
	pttl    int64         // -1: no TTL
	expAt   time.Duration // when it expires, in virtual time, if it has a TTL
}

// obligation is a crashed holder's lock, which must be free by deadline.
type obligation struct {
	c        *client
	crashAt  time.Duration
	deadline time.Duration
	done     bool
}

// client runs the recipe once: it asks until it takes the lock, works,
// writes to the storage and releases, unless a fault stops it.
type client struct {
	id    int
	name  string
	steps []step
	work  time.Duration

	token    string // of the current attempt
	holding  bool   // believes it holds the lock
	grant    int    // its acquisition's number among all, from 1
	fence    int64  // its fencing token; 0 if none
	acquired int    // acquisitions
	released bool   // a release succeeded
	crashed  bool
	done     bool
	// lastReply is the deciding reply of its last attempt or release that
	// did not succeed, for Works.
	lastReply, releaseReply string
	lastOn                  int  // the node of lastReply, on several nodes
	releaseLine             step // the line whose reply stopped its release

	// On several nodes (see redlock.go): the current round's start, the
	// nodes that said yes in it and each node's reply, and the end of the
	// lock's validity.
	roundStart time.Duration
	votes      int
	replies    []string // each node's deciding reply in the round
	validUntil time.Duration
}

// step is one step of a client's job: a line of a part on a node, or the
// write.
type step struct {
	part  string // "acquire", "extend", "write" or "release"
	index int
	// on is the node's number (from 1) on several nodes, 0 on one.
	on int
}

// node is the index of the step's node.
func (st step) node() int { return max(st.on-1, 0) }

// jobOf returns the steps of a job with s's recipe.
func (s *schedule) jobOf() []step { return jobOf(s.r) }

// jobOf returns the steps of a job with recipe r: on several nodes, each
// part's lines on node 1, then on node 2, and so on, as a Redlock client
// asks one node after the other.
func jobOf(r Recipe) []step {
	var out []step
	n := r.nodeCount()
	add := func(part string, lines int) {
		for k := range n {
			for i := range lines {
				st := step{part: part, index: i}
				if n > 1 {
					st.on = k + 1
				}
				out = append(out, st)
			}
		}
	}
	add("acquire", len(r.Acquire))
	add("extend", len(r.Extend))
	out = append(out, step{part: "write"})
	add("release", len(r.Release))
	return out
}

func (s *schedule) lines(part string) []string {
	switch part {
	case "acquire":
		return s.r.Acquire
	case "extend":
		return s.r.Extend
	}
	return s.r.Release
}

func (s *schedule) decision(part string) decision {
	switch part {
	case "acquire":
		return s.ru.acquire
	case "extend":
		return s.ru.extend
	}
	return s.ru.release
}

// now is the virtual time since the schedule started.
func (s *schedule) now() time.Duration { return s.q.Now() }

// nodeClock is true time on the schedule's clock; a node adds its own
// offset.
func (s *schedule) nodeClock() time.Time { return s.start.Add(s.q.Now()) }

// nodeOptions are the options of the schedule's Redis node: the
// playground's limits, the check's deadline for one line, the check's
// script cache, and the schedule's clock.
func (s *schedule) nodeOptions() playground.SandboxOptions {
	return playground.SandboxOptions{
		Now:     s.sp.nodeNow,
		Scripts: s.sp.cache,
		Limits:  playground.Limits{Script: luaredis.Limits{Timeout: s.sp.b.LineTimeout}},
	}
}

// at schedules f at virtual time t (or now, if t has passed).
func (s *schedule) at(t time.Duration, f func()) { s.q.At(t, f) }

// run executes the queued actions in time order until none are left, the
// horizon or the event cap.
func (s *schedule) run() error {
	// Each node's lines are events of their own.
	for s.err == nil && len(s.events) < maxEvents*len(s.nodes) {
		a, ok := s.q.Pop(horizon)
		if !ok {
			break
		}
		s.advance(a.At)
		a.Do()
	}
	return s.err
}

// advance moves virtual time to t, recording each node's lock key
// expiring on the way if it falls due, the earliest first.
func (s *schedule) advance(t time.Duration) {
	for s.err == nil {
		k := -1
		for i, key := range s.keys {
			if key.present && key.pttl >= 0 && key.expAt <= t && (k < 0 || key.expAt < s.keys[k].expAt) {
				k = i
			}
		}
		if k < 0 {
			break
		}
		s.q.SetNow(max(s.now(), s.keys[k].expAt))
		holder := s.holderName(k)
		s.observe(k)
		if s.keys[k].present {
			// A TTL read in whole milliseconds may end a little later.
			s.keys[k].expAt = s.now() + time.Millisecond
			continue
		}
		s.owners[k] = nil
		s.emit(Event{Event: sim.Event{Actor: s.actor(k), Kind: sim.KindExpire, Subject: holder, Text: sim.KeyExpires(s.nodeWord(k), holder, false)}})
	}
	s.q.SetNow(max(s.now(), t))
}

// observe reads the lock key on node k, as an observer outside the
// recipe: these reads are not charged to the check's lines.
func (s *schedule) observe(k int) {
	ki, ok := s.nodes[k].Key(lockKey)
	if !ok {
		s.keys[k] = keyState{}
		return
	}
	s.keys[k] = keyState{present: true, typ: ki.Type, value: ki.Value, pttl: ki.PTTLMS}
	if ki.PTTLMS >= 0 {
		s.keys[k].expAt = s.now() + time.Duration(ki.PTTLMS)*time.Millisecond
	}
}

// tokenOwner returns the client whose token the key's value shows, or nil.
func (s *schedule) tokenOwner(k keyState) *client {
	if !k.present {
		return nil
	}
	for tok, c := range s.tokens {
		if strings.Contains(k.value, tok) {
			return c
		}
	}
	return nil
}

// holderName names the client whose lock node k's key holds.
func (s *schedule) holderName(k int) string {
	switch {
	case !s.keys[k].present:
		return ""
	case s.owners[k] != nil:
		return s.owners[k].name
	}
	return "someone else"
}

// emit appends e, stamped with the time and the state after it.
func (s *schedule) emit(e Event) {
	e.AtMS = s.now().Milliseconds()
	e.TMS = e.AtMS
	e.Nodes = make([]sim.NodeState, len(s.nodes))
	for k, node := range s.nodes {
		ns := sim.NodeState{Node: k + 1, Up: node.Up(), Holder: s.holderName(k), ClockAheadMS: node.Offset().Milliseconds()}
		switch key := s.keys[k]; {
		case key.present && key.pttl >= 0:
			ns.TTLMS = (key.expAt - s.now()).Milliseconds()
		case key.present:
			ns.TTLMS = -1
		}
		e.Nodes[k] = ns
	}
	if s.r.Fencing {
		e.HighestToken = s.store.Highest()
	}
	for _, c := range s.clients {
		if c.holding {
			e.Holding = append(e.Holding, c.name)
		}
	}
	s.events = append(s.events, e)
}

// outcome ties o to the event just emitted, unless o already happened.
func (s *schedule) outcome(o sim.Outcome, text string) {
	i := len(s.events) - 1
	s.found.Add(o, i, s.events[i].AtMS, text)
}

// violate records that p broke at the event just emitted, with outcome o.
// Only schedules that judge p count it (see honest for one-holder).
func (s *schedule) violate(p Property, o sim.Outcome, text string) {
	s.outcome(o, text)
	if p == PropOneHolder && !s.honest {
		return
	}
	s.exercised[p] = true
	if _, ok := s.violations[p]; !ok {
		s.violations[p] = len(s.events) - 1
	}
}

// takeFault returns the unused fault of kind at c's step j, marking it
// used.
func (s *schedule) takeFault(kind faultKind, c *client, j int) *fault {
	for i, f := range s.faults {
		if f != nil && f.kind == kind && f.client == c.id && f.step == j {
			s.faults[i] = nil
			return f
		}
	}
	return nil
}

// fill fills the placeholders of line for token.
func fillFor(line, token string) string {
	return fill(line, vars{key: lockKey, token: token, ttl: strconv.FormatInt(ttl.Milliseconds(), 10), ttlS: strconv.FormatInt(int64(ttl/time.Second), 10)})
}

// exec runs one of c's lines on the node and returns what redis-cli would
// print, after charging it to the budget. The key is observed again after
// it.
func (s *schedule) exec(st step, token string) (string, bool) {
	if err := s.sp.line(s.ctx); err != nil {
		s.err = err
		return "", false
	}
	res, err := s.nodes[st.node()].Exec(s.ctx, fillArgs(s.ru.args[st.part][st.index], token))
	if errors.Is(err, sim.ErrDown) {
		return res.Output, true
	}
	if why, stopped := strings.CutPrefix(res.Output, "(error) ERR the playground stopped the script"); stopped {
		// A script stopped at a limit (time, memory) is a bomb, not a
		// lock: a lock's line takes microseconds.
		why, _, _ = strings.Cut(why, " (script ")
		why, _, _ = strings.Cut(why, " script: ")
		s.err = fmt.Errorf("check: %s line %d went past the playground's limits for one line (the playground stopped the script%s): %w",
			st.part, st.index+1, why, ErrBudget)
		return "", false
	}
	s.observe(st.node())
	return res.Output, true
}

// fillArgs fills the placeholders of a tokenized line for token.
func fillArgs(tmpl []string, token string) []string {
	argv := make([]string, len(tmpl))
	for i, a := range tmpl {
		argv[i] = fillFor(a, token)
	}
	return argv
}

// begin is c starting an attempt to take the lock: a new token, then
// acquire line 1.
func (s *schedule) begin(c *client) {
	if c.crashed || c.done {
		return
	}
	c.token = fmt.Sprintf("c%d-%08x", c.id+1, s.rng.Uint32())
	s.tokens[c.token] = c
	s.step(c, 0)
}

// retry schedules c's next attempt after a random delay, and says why.
func (s *schedule) retry(c *client, line, reply, why string) {
	wait := retryMin + time.Duration(s.rng.Int64N(int64((retryMax-retryMin)/time.Millisecond)))*time.Millisecond
	s.emit(Event{Event: sim.Event{Actor: c.name, Kind: sim.KindAcquireFail,
		Text: fmt.Sprintf("%s %s It tries again in %s.", sim.Capital(c.name), why, sim.Dur(wait))}, Line: line, Reply: reply})
	s.at(s.now()+rtt+wait, func() { s.begin(c) })
}

// step runs c's step j: first the node faults and the pause tied to it.
func (s *schedule) step(c *client, j int) {
	if c.crashed || c.done {
		return
	}
	s.reached[trigger{c.id, j}] = true
	for _, kind := range []faultKind{faultRestart, faultJump, faultJumpBack} {
		// On several nodes two nodes may have the same fault at a step.
		for f := s.takeFault(kind, c, j); f != nil; f = s.takeFault(kind, c, j) {
			s.nodeFault(f)
			if !s.multi() {
				break
			}
		}
	}
	if f := s.takeFault(faultPause, c, j); f != nil {
		s.emit(Event{Event: sim.Event{Actor: c.name, Kind: sim.KindPauseStart, Text: sim.PauseStarts(c.name, f.d, stepName(c.steps[j]))}})
		s.at(s.now()+f.d, func() {
			s.emit(Event{Event: sim.Event{Actor: c.name, Kind: sim.KindPauseEnd, Text: sim.PauseEnds(c.name, f.d)}})
			s.runStep(c, j)
		})
		return
	}
	s.runStep(c, j)
}

// runStep runs c's step j: the write, or a line, whose reply may be late.
func (s *schedule) runStep(c *client, j int) {
	if c.crashed || c.done {
		return
	}
	st := c.steps[j]
	if st.part == "write" {
		s.write(c)
		s.after(c, j, true)
		return
	}
	if st.part == "release" && st.index == 0 {
		// From its first release line on, a client no longer uses what
		// the lock protects.
		c.holding = false
	}
	if st.part != "acquire" {
		s.noteOthersHolding(c)
	}
	if st.index == 0 && st.on == 1 {
		// A round over several nodes starts before its first line.
		c.startRound(s.now())
		if st.part == "acquire" {
			c.fence = 0
		}
	}
	line := fillFor(s.lines(st.part)[st.index], c.token)
	before, prev := s.keys[st.node()], s.owners[st.node()]
	reply, ok := s.exec(st, c.token)
	if !ok {
		return
	}
	eff := s.effect(c, st, reply, before, prev)
	grant := 0
	d := s.decision(st.part)
	if st.part == "acquire" && st.index == d.line && d.success(reply) && !s.multi() {
		// The grant's place in line is when Redis gave it, not when the
		// client hears of it.
		s.grants++
		grant = s.grants
	}
	if f := s.takeFault(faultDelay, c, j); f != nil {
		s.emit(Event{Event: sim.Event{Actor: c.name, Kind: sim.KindDelay, Text: sim.ReplyLate(c.name, stepName(st), reply, f.d)}, Line: line, Reply: reply})
		eff = s.reportEffect(c, eff)
		s.at(s.now()+f.d, func() { s.decide(c, j, line, reply, eff, grant, true) })
		return
	}
	s.decide(c, j, line, reply, eff, grant, false)
}

// noteOthersHolding records that no-foreign-release is exercised: c runs
// a release or renewal line while another client holds the lock.
func (s *schedule) noteOthersHolding(c *client) {
	for _, o := range s.clients {
		if o != c && o.holding {
			s.exercised[PropNoForeignRelease] = true
			return
		}
	}
}

// decide is c reading the reply to its step j: it goes on, stops, holds
// the lock or tries again, as the recipe's rules say.
func (s *schedule) decide(c *client, j int, line, reply string, eff effect, grant int, late bool) {
	if c.crashed || c.done {
		return
	}
	if s.multi() {
		s.decideOnNode(c, j, line, reply, eff)
		return
	}
	st := c.steps[j]
	d := s.decision(st.part)
	deciding := st.index == d.line
	ok := goesOn(reply, c.token)
	if deciding {
		ok = d.success(reply)
	}
	if st.part == "acquire" && st.index == s.ru.tokenLine {
		c.fence = fenceFrom(reply, s.ru.tokenElem)
	}
	switch {
	case st.part == "acquire" && st.index < d.line && !ok:
		c.lastReply = reply
		s.reportEffect(c, eff)
		s.retry(c, line, reply, fmt.Sprintf("runs %s and Redis answers %s, so it does not go on: not taken.", stepName(st), reply))
		return
	case st.part == "acquire" && deciding && !ok:
		c.lastReply = reply
		s.reportEffect(c, eff)
		why := fmt.Sprintf("asks for the lock and Redis answers %s: not taken.", reply)
		if reply == sim.DownReply {
			why = "asks for the lock but cannot reach Redis (" + reply + "): not taken."
		}
		s.retry(c, line, reply, why)
		return
	case st.part == "acquire" && deciding:
		s.reportEffect(c, eff)
		s.took(c, line, reply, grant, late)
	case st.part == "extend" && (deciding || st.index < d.line) && !ok:
		why := fmt.Sprintf("renews its lock and Redis answers %s", reply)
		if !deciding {
			why = fmt.Sprintf("runs %s and Redis answers %s, so the renewal does not go through", stepName(st), reply)
		}
		c.holding, c.done = false, true
		s.reportEffect(c, eff)
		s.emit(Event{Event: sim.Event{Actor: c.name, Kind: sim.KindExtendFail,
			Text: fmt.Sprintf("%s %s: it takes the lock as lost and stops its work.", sim.Capital(c.name), why)}, Line: line, Reply: reply})
		return
	case st.part == "extend" && deciding:
		text := fmt.Sprintf("%s renews its lock: %s.", sim.Capital(c.name), reply)
		if key := s.keys[0]; key.present && s.owners[0] == c && key.pttl >= 0 {
			text = fmt.Sprintf("%s renews its lock: %s; the key's TTL is now %d ms.", sim.Capital(c.name), reply, (key.expAt - s.now()).Milliseconds())
		}
		s.lineEvent(c, sim.KindExtendOK, text, line, reply, eff)
	case st.part == "release" && deciding:
		c.released = ok
		if !ok {
			c.releaseReply, c.releaseLine = reply, st
		}
		s.lineEvent(c, releaseKind(ok), s.releaseText(c, st, reply, ok, eff), line, reply, eff)
		if !ok {
			c.done = true
			return
		}
	case st.part == "release" && st.index < d.line && !ok:
		c.releaseReply, c.releaseLine = reply, st
		s.lineEvent(c, sim.KindReleaseNoop, fmt.Sprintf("%s runs %s and Redis answers %s, so it does not go on: the release does not happen.", sim.Capital(c.name), stepName(st), reply), line, reply, eff)
		c.done = true
		return
	default:
		s.lineEvent(c, KindCommand, s.commandText(c, st, reply, eff), line, reply, eff)
	}
	s.after(c, j, ok)
}

// lineEvent emits the event of one of c's lines, or the effect's own if
// the line touched another client's lock.
func (s *schedule) lineEvent(c *client, kind sim.Kind, text, line, reply string, eff effect) {
	if eff.victim != "" && !eff.reported {
		kind, text = eff.kind, eff.text
	}
	s.emit(Event{Event: sim.Event{Actor: c.name, Kind: kind, Text: text, Subject: eff.victim}, Line: line, Reply: reply})
	if !eff.reported {
		s.afterEffect(c, eff)
	}
}

// reportEffect emits an event for a line that touched another client's
// lock when the line's own event says something else (a failed attempt,
// a late reply).
func (s *schedule) reportEffect(c *client, eff effect) effect {
	if eff.victim == "" || eff.reported {
		return eff
	}
	s.emit(Event{Event: sim.Event{Actor: c.name, Kind: eff.kind, Text: eff.text, Subject: eff.victim}})
	s.afterEffect(c, eff)
	eff.reported = true
	return eff
}

// after schedules what follows c's step j: the next line, the next part,
// or nothing (a part that stopped, the end of the job), unless c crashes
// now.
func (s *schedule) after(c *client, j int, ok bool) {
	if s.takeFault(faultCrash, c, j) != nil {
		s.crashClient(c)
		return
	}
	if s.multi() {
		s.afterOnNode(c, j, ok)
		return
	}
	cur := c.steps[j].part
	k := j + 1
	if !ok {
		if cur == "release" {
			c.done = true
			return
		}
		for k < len(c.steps) && c.steps[k].part == cur {
			k++
		}
	}
	if k >= len(c.steps) {
		c.done = true
		return
	}
	s.at(s.now()+s.gap(c, cur, c.steps[k].part), func() { s.step(c, k) })
}

// gap is the time between a client's step in part cur and its next in
// part nxt: a line's round trip, or its work (half before a renewal).
func (s *schedule) gap(c *client, cur, nxt string) time.Duration {
	// Virtual time stays in whole milliseconds, as PTTL reads it.
	half := (c.work / 2).Truncate(time.Millisecond)
	gap := rtt
	switch {
	case cur == "acquire" && nxt == "extend":
		gap = half
	case cur == "acquire" && nxt == "write":
		gap = c.work
	case cur == "extend" && nxt == "write":
		gap = c.work - half
	}
	return gap
}

// took is c learning that it holds the lock.
func (s *schedule) took(c *client, line, reply string, grant int, late bool) {
	c.acquired++
	c.holding, c.grant = true, grant
	for _, o := range s.pending {
		if !o.done && o.c != c {
			o.done = true // another client took it: the crashed holder's lock is free
		}
	}
	d := s.ru.acquire
	text := fmt.Sprintf("%s asks for the lock and Redis answers %s: %s holds the lock.", sim.Capital(c.name), reply, c.name)
	if d.custom {
		text = fmt.Sprintf("%s runs %s and Redis answers %s, which the recipe reads as taken: %s holds the lock.", sim.Capital(c.name), stepName(step{part: "acquire", index: d.line}), reply, c.name)
	}
	if s.r.Fencing && s.ru.tokenLine <= d.line {
		if c.fence > 0 {
			text = strings.TrimSuffix(text, ".") + fmt.Sprintf(", with fencing token %d.", c.fence)
		} else {
			text = strings.TrimSuffix(text, ".") + ", but with no fencing token: the reply holds no positive integer."
		}
	}
	if late {
		text = fmt.Sprintf("The late reply reaches %s: %s. %s now believes it holds the lock, whatever has happened since.", c.name, reply, sim.Capital(c.name))
	}
	s.emit(Event{Event: sim.Event{Actor: c.name, Kind: sim.KindAcquireOK, Fence: c.fence, Text: text}, Line: line, Reply: reply})
	s.checkHolders(c)
}

// checkHolders records two holders if another client believes it holds
// the lock while c does.
func (s *schedule) checkHolders(c *client) {
	for _, o := range s.clients {
		if o != c && o.holding {
			s.violate(PropOneHolder, sim.OutcomeTwoHolders, fmt.Sprintf("%s and %s both believe they hold the lock.", sim.Capital(o.name), c.name))
			return
		}
	}
	if s.honest {
		n := 0
		for _, o := range s.clients {
			if o.acquired > 0 {
				n++
			}
		}
		if n >= 2 {
			s.exercised[PropOneHolder] = true
		}
	}
}

// effect is what a line did to another client's lock, if anything.
type effect struct {
	victim   string   // the client whose lock it deleted, overwrote or extended
	kind     sim.Kind // KindDeleteOther or KindExtendOther
	text     string
	outcome  sim.Outcome
	reported bool
	deleted  bool // the line deleted the key (its own, or another's)
}

// effect compares the key before and after c's line, records whose lock
// the key now holds, and returns what the line did to a lock another
// client still believes it holds.
func (s *schedule) effect(c *client, st step, reply string, before keyState, prev *client) effect {
	k := st.node()
	after := s.keys[k]
	var eff effect
	switch {
	case !after.present:
		s.owners[k] = nil
		eff.deleted = before.present
	case !before.present || after.value != before.value || after.typ != before.typ:
		o := s.tokenOwner(after)
		if o == nil {
			o = c
		}
		s.owners[k] = o
	}
	victim := prev != nil && prev != c && prev.holding
	switch {
	case !victim || !before.present:
	case !after.present:
		eff.kind, eff.outcome = sim.KindDeleteOther, sim.OutcomeForeignLockDeleted
		eff.text = fmt.Sprintf("%s runs %s: %s. It deletes the key, but the key held %s's lock, not its own: %s still believes it holds the lock.", sim.Capital(c.name), stepName(st), reply, prev.name, prev.name)
	case s.owners[k] != prev:
		eff.kind, eff.outcome = sim.KindDeleteOther, sim.OutcomeForeignLockDeleted
		eff.text = fmt.Sprintf("%s runs %s: %s. It overwrites the key, which held %s's lock: %s still believes it holds the lock.", sim.Capital(c.name), stepName(st), reply, prev.name, prev.name)
	case before.pttl >= 0 && (after.pttl < 0 || after.expAt > before.expAt+rtt):
		eff.kind, eff.outcome = KindExtendOther, sim.OutcomeForeignLockExtended
		eff.text = fmt.Sprintf("%s runs %s: %s. It resets the key's TTL, but the key holds %s's lock, not its own: it keeps %s's lock alive.", sim.Capital(c.name), stepName(st), reply, prev.name, prev.name)
	}
	if eff.kind != "" {
		eff.victim = prev.name
	}
	return eff
}

// afterEffect records the outcome of a line that deleted, overwrote or
// extended another client's lock, once its event is out.
func (s *schedule) afterEffect(c *client, eff effect) {
	if eff.victim == "" {
		return
	}
	what := "deleted"
	if eff.kind == KindExtendOther {
		what = "extended"
	}
	s.violate(PropNoForeignRelease, eff.outcome, fmt.Sprintf("%s %s %s's lock while %s still believed it held it.", sim.Capital(c.name), what, eff.victim, eff.victim))
}

// releaseKind is the event kind of a release's deciding line.
func releaseKind(ok bool) sim.Kind {
	if ok {
		return sim.KindReleaseOK
	}
	return sim.KindReleaseNoop
}

// releaseText says what a release's deciding line did, from its reply and
// what happened to the key.
func (s *schedule) releaseText(c *client, st step, reply string, ok bool, eff effect) string {
	switch {
	case ok && eff.deleted:
		return fmt.Sprintf("%s releases its lock%s: %s, and the key is deleted.", sim.Capital(c.name), onNode(st), reply)
	case ok:
		return fmt.Sprintf("%s releases its lock%s: %s.", sim.Capital(c.name), onNode(st), reply)
	case strings.HasPrefix(reply, "(error)") || reply == sim.DownReply:
		return fmt.Sprintf("%s's release fails: %s. The lock stays until its TTL runs out, if it has one.", sim.Capital(c.name), reply)
	case s.keys[st.node()].present && s.owners[st.node()] != nil && s.owners[st.node()] != c:
		return fmt.Sprintf("%s runs %s: %s. The key holds %s's lock, and the release leaves it alone.", sim.Capital(c.name), stepName(st), reply, s.owners[st.node()].name)
	case !s.keys[st.node()].present:
		return fmt.Sprintf("%s runs %s: %s. There is no key to release: its lock had already gone.", sim.Capital(c.name), stepName(st), reply)
	}
	return fmt.Sprintf("%s runs %s: %s, which the recipe does not read as released.", sim.Capital(c.name), stepName(st), reply)
}

// commandText narrates a line that decides nothing.
func (s *schedule) commandText(c *client, st step, reply string, eff effect) string {
	text := fmt.Sprintf("%s runs %s: %s.", sim.Capital(c.name), stepName(st), reply)
	if eff.deleted {
		text += " The key is deleted."
	}
	return text
}

// write is c's write to the storage, with its fencing token when fencing
// is on.
func (s *schedule) write(c *client) {
	if !c.holding {
		return
	}
	s.writers[c.grant] = true
	if len(s.writers) >= 2 {
		s.exercised[PropNoStaleWrite] = true
	}
	stale := c.grant < s.newest
	highest := s.store.Highest()
	ok := s.store.Write(c.fence)
	e := Event{Event: sim.Event{Actor: "storage", Subject: c.name, Stale: stale}}
	if s.r.Fencing {
		e.Fence = c.fence
	}
	newer := ""
	for _, o := range s.clients {
		if o.grant == s.newest {
			newer = o.name
		}
	}
	switch {
	case !ok:
		e.Kind = sim.KindWriteRejected
		e.Text = fmt.Sprintf("The storage rejects %s's write: token %d is lower than %d, which it has already seen.", c.name, c.fence, highest)
	case s.r.Fencing:
		e.Kind = sim.KindWriteAccepted
		e.Text = fmt.Sprintf("The storage accepts %s's write with token %d.", c.name, c.fence)
	default:
		e.Kind = sim.KindWriteAccepted
		e.Text = fmt.Sprintf("The storage accepts %s's write.", c.name)
	}
	if ok {
		s.newest = max(s.newest, c.grant)
		if stale {
			e.Text += fmt.Sprintf(" But %s got the lock after %s and wrote already: %s's write is stale.", newer, c.name, c.name)
			if !s.r.Fencing {
				e.Text += " Without fencing the storage cannot tell."
			}
		}
	}
	s.emit(e)
	switch {
	case ok && stale:
		s.violate(PropNoStaleWrite, sim.OutcomeStaleWriteAccepted, fmt.Sprintf("The storage accepted a write from %s after one from %s, who got the lock after it.", c.name, newer))
	case !ok && stale:
		s.outcome(sim.OutcomeStaleWriteRejected, fmt.Sprintf("%s wrote after the lock had passed to %s, but its fencing token was too low and the storage rejected it.", sim.Capital(c.name), newer))
	}
}

// crashClient is c crashing: it never runs another line. If it held the
// lock, a fresh client must be able to take it within the TTL it set.
func (s *schedule) crashClient(c *client) {
	held := c.holding
	c.crashed, c.holding = true, false
	s.emit(Event{Event: sim.Event{Actor: c.name, Kind: KindClientCrash, Text: sim.ClientCrashes(c.name)}})
	if !held || s.backJump {
		return
	}
	s.exercised[PropFreesAfterCrash] = true
	// The longest TTL the holder's keys have left, or the TTL.
	wait, set := ttl, false
	for k, key := range s.keys {
		if key.present && s.owners[k] == c && key.pttl >= 0 {
			if d := time.Duration(key.pttl) * time.Millisecond; !set || d > wait {
				wait, set = d, true
			}
		}
	}
	o := &obligation{c: c, crashAt: s.now(), deadline: s.now() + min(wait, freeBound)}
	s.pending = append(s.pending, o)
	// A lock whose expiry is a time in its value is free once that time
	// has passed (the SETNX documentation adds 1 ms to it): the probe
	// allows a hundredth of the TTL for such rounding.
	s.at(o.deadline+ttl/100, func() { s.probe(o) })
}

// probe is a fresh client trying the recipe's acquire, on a copy of
// each node, when a crashed holder's lock must be free: the check's own
// observer, which changes nothing in the schedule. On several nodes the
// lock is free when a quorum of the nodes that are up grant it.
func (s *schedule) probe(o *obligation) {
	if o.done {
		return
	}
	up := 0
	for _, n := range s.nodes {
		if n.Up() {
			up++
		}
	}
	if up < s.quorum() {
		// Nobody can take the lock while too few nodes are up; ask
		// again when they are back.
		s.at(s.now()+downQuick, func() { s.probe(o) })
		return
	}
	o.done = true
	token := fmt.Sprintf("probe-%08x", s.rng.Uint32())
	d := s.ru.acquire
	votes := 0
	reply, line, said := "", "", ""
	for k, n := range s.nodes {
		if !n.Up() {
			continue
		}
		node, err := n.Copy()
		if err != nil {
			s.err = err
			return
		}
		for i := 0; i <= d.line; i++ {
			if err := s.sp.line(s.ctx); err != nil {
				node.Close()
				s.err = err
				return
			}
			line = fillFor(s.r.Acquire[i], token)
			res, _ := node.Exec(s.ctx, fillArgs(s.ru.args["acquire"][i], token))
			reply = res.Output
			if i < d.line && !goesOn(reply, token) {
				break
			}
		}
		node.Close()
		if d.success(reply) {
			votes++
		} else if said == "" {
			said = fmt.Sprintf("%s answers %s", s.nodeWord(k), reply)
		}
	}
	if votes >= s.quorum() {
		return
	}
	after := s.now() - o.crashAt
	text := fmt.Sprintf("%s after %s crashed holding it, a fresh client runs the recipe's acquire and Redis answers %s: the lock is still taken, and nobody else can have it.", sim.Capital(sim.Dur(after)), o.c.name, reply)
	if s.multi() {
		text = fmt.Sprintf("%s after %s crashed holding it, a fresh client runs the recipe's acquire on every node that is up and gets %d of %d (it needs %d; %s): the lock is still taken, and nobody else can have it.",
			sim.Capital(sim.Dur(after)), o.c.name, votes, len(s.nodes), s.quorum(), said)
		line, reply = "", ""
	}
	s.emit(Event{Event: sim.Event{Actor: s.actor(0), Kind: KindStillLocked, Subject: o.c.name, Text: text}, Line: line, Reply: reply})
	s.violate(PropFreesAfterCrash, sim.OutcomeLockNeverFreed, fmt.Sprintf("%s crashed holding the lock, and %s later a fresh client still could not take it.", sim.Capital(o.c.name), sim.Dur(after)))
}

// nodeFault makes a node fault happen now, on the node it names.
func (s *schedule) nodeFault(f *fault) {
	switch f.kind {
	case faultJump:
		s.jump(f.node, f.d)
	case faultJumpBack:
		s.jump(f.node, -f.d)
	case faultRestart:
		s.restart(f.node, f.d, f.persist)
	}
}

// jump moves node k's clock d ahead (or back, for a negative d).
func (s *schedule) jump(k int, d time.Duration) {
	node := s.nodes[k]
	up := node.Up()
	if err := node.Jump(d); err != nil {
		s.err = err
		return
	}
	if !up {
		return
	}
	holder := s.holderName(k)
	s.observe(k)
	s.emit(Event{Event: sim.Event{Actor: s.actor(k), Kind: sim.KindClockJump, Text: sim.ClockJumps(s.nodeWord(k), d), Jump: sim.JumpShort(d)}})
	if holder != "" && !s.keys[k].present {
		s.owners[k] = nil
		s.emit(Event{Event: sim.Event{Actor: s.actor(k), Kind: sim.KindExpire, Subject: holder,
			Text: fmt.Sprintf("To %s, %s's key is now past its TTL, so it expires at once, early by true time.", s.nodeWord(k), holder)}})
	}
}

// restart is node k crashing and coming back after down: empty, or with
// its data (keys whose TTL ran out meanwhile are gone).
func (s *schedule) restart(k int, down time.Duration, persist bool) {
	node := s.nodes[k]
	if !node.Up() {
		return
	}
	holder := s.holderName(k)
	if err := node.Crash(persist); err != nil {
		s.err = err
		return
	}
	s.keys[k] = keyState{}
	if !persist {
		s.owners[k] = nil
	}
	s.emit(Event{Event: sim.Event{Actor: s.actor(k), Kind: sim.KindCrash, Subject: holder, Text: sim.NodeCrashes(s.nodeWord(k), persist, down)}})
	s.at(s.now()+down, func() {
		if err := node.Restart(down); err != nil {
			s.err = err
			return
		}
		s.observe(k)
		if !s.keys[k].present {
			s.owners[k] = nil
		}
		s.emit(Event{Event: sim.Event{Actor: s.actor(k), Kind: sim.KindRestart, Text: sim.NodeBack(s.nodeWord(k), persist)}})
	})
}

// starve records, at the end of a schedule, each client that wanted the
// lock and never got it.
func (s *schedule) starve() {
	for _, c := range s.clients {
		if c.crashed || c.acquired > 0 {
			continue
		}
		s.emit(Event{Event: sim.Event{Actor: c.name, Kind: sim.KindStop,
			Text: fmt.Sprintf("%s has asked for the lock since the start and never got it; the schedule ends at %s.", sim.Capital(c.name), sim.Dur(s.now()))}})
		s.outcome(sim.OutcomeStarved, fmt.Sprintf("%s wanted the lock and never got it.", sim.Capital(c.name)))
	}
}

// faultText describes f in one sentence.
func (s *schedule) faultText(f fault) string {
	steps := s.jobOf()
	name := stepName(steps[min(f.step, len(steps)-1)])
	who := fmt.Sprintf("client %d", f.client+1)
	redis, its := s.nodeWord(f.node), "its"
	if s.multi() {
		// On several nodes the node's name starts a clause, and a
		// restart names the node again.
		redis = "node " + strconv.Itoa(f.node+1)
		its = "node " + strconv.Itoa(f.node+1) + "'s"
	}
	switch f.kind {
	case faultPause:
		return fmt.Sprintf("%s pauses for %s before %s.", sim.Capital(who), sim.Dur(f.d), name)
	case faultDelay:
		return fmt.Sprintf("The reply to %s's %s is %s late.", who, name, sim.Dur(f.d))
	case faultCrash:
		return fmt.Sprintf("%s crashes after %s.", sim.Capital(who), name)
	case faultJump:
		return fmt.Sprintf("Just before %s's %s, %s's clock jumps %s ahead.", who, name, redis, sim.Dur(f.d))
	case faultJumpBack:
		return fmt.Sprintf("Just before %s's %s, %s's clock jumps %s back.", who, name, redis, sim.Dur(f.d))
	case faultRestart:
		if f.persist {
			return fmt.Sprintf("Just before %s's %s, %s restarts with %s data; it is down for %s.", who, name, redis, its, sim.Dur(f.d))
		}
		return fmt.Sprintf("Just before %s's %s, %s restarts without persistence; it is down for %s.", who, name, redis, sim.Dur(f.d))
	}
	return ""
}

// stepName names a step for people: "acquire line 1", "acquire line 1
// on node 3", "its write".
func stepName(st step) string {
	if st.part == "write" {
		return "its write to the storage"
	}
	if st.on > 0 {
		return fmt.Sprintf("%s line %d on node %d", st.part, st.index+1, st.on)
	}
	return fmt.Sprintf("%s line %d", st.part, st.index+1)
}
