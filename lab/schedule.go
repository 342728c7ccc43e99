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

// sim is one schedule: a virtual clock, one Redis node (a playground
// sandbox on the schedule's clock), the clients running the recipe, the
// storage, and a queue of actions in virtual-time order. It runs on one
// goroutine.
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
	node   *sim.Node
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
	key     keyState           // the lock key, as last seen
	owner   *client            // the client whose acquisition the key holds
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
	releaseLine             step // the line whose reply stopped its release
}

// step is one step of a client's job: a line of a part, or the write.
type step struct {
	part  string // "acquire", "extend", "write" or "release"
	index int
}

// jobOf returns the steps of a job with s's recipe.
func (s *schedule) jobOf() []step {
	var out []step
	add := func(part string, n int) {
		for i := range n {
			out = append(out, step{part, i})
		}
	}
	add("acquire", len(s.r.Acquire))
	add("extend", len(s.r.Extend))
	add("write", 1)
	add("release", len(s.r.Release))
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
	for s.err == nil && len(s.events) < maxEvents {
		a, ok := s.q.Pop(horizon)
		if !ok {
			break
		}
		s.advance(a.At)
		a.Do()
	}
	return s.err
}

// advance moves virtual time to t, recording the lock key's expiry on the
// way if it falls due.
func (s *schedule) advance(t time.Duration) {
	for s.key.present && s.key.pttl >= 0 && s.key.expAt <= t && s.err == nil {
		s.q.SetNow(max(s.now(), s.key.expAt))
		holder := s.holderName()
		s.observe()
		if s.key.present {
			// A TTL read in whole milliseconds may end a little later.
			s.key.expAt = s.now() + time.Millisecond
			continue
		}
		s.owner = nil
		s.emit(Event{Event: sim.Event{Actor: "redis", Kind: sim.KindExpire, Subject: holder, Text: sim.KeyExpires("Redis", holder, false)}})
	}
	s.q.SetNow(max(s.now(), t))
}

// observe reads the lock key on the node, as an observer outside the
// recipe: these reads are not charged to the check's lines.
func (s *schedule) observe() {
	ki, ok := s.node.Key(lockKey)
	if !ok {
		s.key = keyState{}
		return
	}
	s.key = keyState{present: true, typ: ki.Type, value: ki.Value, pttl: ki.PTTLMS}
	if ki.PTTLMS >= 0 {
		s.key.expAt = s.now() + time.Duration(ki.PTTLMS)*time.Millisecond
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

// holderName names the client whose lock the key holds.
func (s *schedule) holderName() string {
	switch {
	case !s.key.present:
		return ""
	case s.owner != nil:
		return s.owner.name
	}
	return "someone else"
}

// emit appends e, stamped with the time and the state after it.
func (s *schedule) emit(e Event) {
	e.AtMS = s.now().Milliseconds()
	e.TMS = e.AtMS
	ns := sim.NodeState{Node: 1, Up: s.node.Up(), Holder: s.holderName(), ClockAheadMS: s.node.Offset().Milliseconds()}
	switch {
	case s.key.present && s.key.pttl >= 0:
		ns.TTLMS = (s.key.expAt - s.now()).Milliseconds()
	case s.key.present:
		ns.TTLMS = -1
	}
	e.Nodes = []sim.NodeState{ns}
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
	res, err := s.node.Exec(s.ctx, fillArgs(s.ru.args[st.part][st.index], token))
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
	s.observe()
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
		if f := s.takeFault(kind, c, j); f != nil {
			s.nodeFault(f)
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
	line := fillFor(s.lines(st.part)[st.index], c.token)
	before, prev := s.key, s.owner
	reply, ok := s.exec(st, c.token)
	if !ok {
		return
	}
	eff := s.effect(c, st, reply, before, prev)
	grant := 0
	d := s.decision(st.part)
	if st.part == "acquire" && st.index == d.line && d.success(reply) {
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
		if s.key.present && s.owner == c && s.key.pttl >= 0 {
			text = fmt.Sprintf("%s renews its lock: %s; the key's TTL is now %d ms.", sim.Capital(c.name), reply, (s.key.expAt - s.now()).Milliseconds())
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
	// Virtual time stays in whole milliseconds, as PTTL reads it.
	half := (c.work / 2).Truncate(time.Millisecond)
	gap := rtt
	switch nxt := c.steps[k].part; {
	case cur == "acquire" && nxt == "extend":
		gap = half
	case cur == "acquire" && nxt == "write":
		gap = c.work
	case cur == "extend" && nxt == "write":
		gap = c.work - half
	}
	s.at(s.now()+gap, func() { s.step(c, k) })
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
		text = fmt.Sprintf("%s runs %s and Redis answers %s, which the recipe reads as taken: %s holds the lock.", sim.Capital(c.name), stepName(step{"acquire", d.line}), reply, c.name)
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
	after := s.key
	var eff effect
	switch {
	case !after.present:
		s.owner = nil
		eff.deleted = before.present
	case !before.present || after.value != before.value || after.typ != before.typ:
		o := s.tokenOwner(after)
		if o == nil {
			o = c
		}
		s.owner = o
	}
	victim := prev != nil && prev != c && prev.holding
	switch {
	case !victim || !before.present:
	case !after.present:
		eff.kind, eff.outcome = sim.KindDeleteOther, sim.OutcomeForeignLockDeleted
		eff.text = fmt.Sprintf("%s runs %s: %s. It deletes the key, but the key held %s's lock, not its own: %s still believes it holds the lock.", sim.Capital(c.name), stepName(st), reply, prev.name, prev.name)
	case s.owner != prev:
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
		return fmt.Sprintf("%s releases its lock: %s, and the key is deleted.", sim.Capital(c.name), reply)
	case ok:
		return fmt.Sprintf("%s releases its lock: %s.", sim.Capital(c.name), reply)
	case strings.HasPrefix(reply, "(error)") || reply == sim.DownReply:
		return fmt.Sprintf("%s's release fails: %s. The lock stays until its TTL runs out, if it has one.", sim.Capital(c.name), reply)
	case s.key.present && s.owner != nil && s.owner != c:
		return fmt.Sprintf("%s runs %s: %s. The key holds %s's lock, and the release leaves it alone.", sim.Capital(c.name), stepName(st), reply, s.owner.name)
	case !s.key.present:
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
	wait := ttl
	if s.key.present && s.owner == c && s.key.pttl >= 0 {
		wait = time.Duration(s.key.pttl) * time.Millisecond
	}
	o := &obligation{c: c, crashAt: s.now(), deadline: s.now() + min(wait, freeBound)}
	s.pending = append(s.pending, o)
	// A lock whose expiry is a time in its value is free once that time
	// has passed (the SETNX documentation adds 1 ms to it): the probe
	// allows a hundredth of the TTL for such rounding.
	s.at(o.deadline+ttl/100, func() { s.probe(o) })
}

// probe is a fresh client trying the recipe's acquire, on a copy of the
// node, when a crashed holder's lock must be free: the check's own
// observer, which changes nothing in the schedule.
func (s *schedule) probe(o *obligation) {
	if o.done {
		return
	}
	if !s.node.Up() {
		// Nobody can take the lock while Redis is down; ask again when
		// it is back.
		s.at(s.now()+downQuick, func() { s.probe(o) })
		return
	}
	o.done = true
	node, err := s.node.Copy()
	if err != nil {
		s.err = err
		return
	}
	defer node.Close()
	token := fmt.Sprintf("probe-%08x", s.rng.Uint32())
	d := s.ru.acquire
	reply, line := "", ""
	for i := 0; i <= d.line; i++ {
		if err := s.sp.line(s.ctx); err != nil {
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
	if d.success(reply) {
		return
	}
	after := s.now() - o.crashAt
	s.emit(Event{Event: sim.Event{Actor: "redis", Kind: KindStillLocked, Subject: o.c.name,
		Text: fmt.Sprintf("%s after %s crashed holding it, a fresh client runs the recipe's acquire and Redis answers %s: the lock is still taken, and nobody else can have it.", sim.Capital(sim.Dur(after)), o.c.name, reply)},
		Line: line, Reply: reply})
	s.violate(PropFreesAfterCrash, sim.OutcomeLockNeverFreed, fmt.Sprintf("%s crashed holding the lock, and %s later a fresh client still could not take it.", sim.Capital(o.c.name), sim.Dur(after)))
}

// nodeFault makes a node fault happen now.
func (s *schedule) nodeFault(f *fault) {
	switch f.kind {
	case faultJump:
		s.jump(f.d)
	case faultJumpBack:
		s.jump(-f.d)
	case faultRestart:
		s.restart(f.d, f.persist)
	}
}

// jump moves the node's clock d ahead (or back, for a negative d).
func (s *schedule) jump(d time.Duration) {
	up := s.node.Up()
	if err := s.node.Jump(d); err != nil {
		s.err = err
		return
	}
	if !up {
		return
	}
	holder := s.holderName()
	s.observe()
	s.emit(Event{Event: sim.Event{Actor: "redis", Kind: sim.KindClockJump, Text: sim.ClockJumps("Redis", d), Jump: sim.JumpShort(d)}})
	if holder != "" && !s.key.present {
		s.owner = nil
		s.emit(Event{Event: sim.Event{Actor: "redis", Kind: sim.KindExpire, Subject: holder,
			Text: fmt.Sprintf("To Redis, %s's key is now past its TTL, so it expires at once, early by true time.", holder)}})
	}
}

// restart is the node crashing and coming back after down: empty, or with
// its data (keys whose TTL ran out meanwhile are gone).
func (s *schedule) restart(down time.Duration, persist bool) {
	if !s.node.Up() {
		return
	}
	holder := s.holderName()
	if err := s.node.Crash(persist); err != nil {
		s.err = err
		return
	}
	s.key = keyState{}
	if !persist {
		s.owner = nil
	}
	s.emit(Event{Event: sim.Event{Actor: "redis", Kind: sim.KindCrash, Subject: holder, Text: sim.NodeCrashes("Redis", persist, down)}})
	s.at(s.now()+down, func() {
		if err := s.node.Restart(down); err != nil {
			s.err = err
			return
		}
		s.observe()
		if !s.key.present {
			s.owner = nil
		}
		s.emit(Event{Event: sim.Event{Actor: "redis", Kind: sim.KindRestart, Text: sim.NodeBack("Redis", persist)}})
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
	switch f.kind {
	case faultPause:
		return fmt.Sprintf("%s pauses for %s before %s.", sim.Capital(who), sim.Dur(f.d), name)
	case faultDelay:
		return fmt.Sprintf("The reply to %s's %s is %s late.", who, name, sim.Dur(f.d))
	case faultCrash:
		return fmt.Sprintf("%s crashes after %s.", sim.Capital(who), name)
	case faultJump:
		return fmt.Sprintf("Just before %s's %s, Redis's clock jumps %s ahead.", who, name, sim.Dur(f.d))
	case faultJumpBack:
		return fmt.Sprintf("Just before %s's %s, Redis's clock jumps %s back.", who, name, sim.Dur(f.d))
	case faultRestart:
		if f.persist {
			return fmt.Sprintf("Just before %s's %s, Redis restarts with its data; it is down for %s.", who, name, sim.Dur(f.d))
		}
		return fmt.Sprintf("Just before %s's %s, Redis restarts without persistence; it is down for %s.", who, name, sim.Dur(f.d))
	}
	return ""
}

// stepName names a step for people: "acquire line 1", "its write".
func stepName(st step) string {
	if st.part == "write" {
		return "its write to the storage"
	}
	return fmt.Sprintf("%s line %d", st.part, st.index+1)
}
