package lab

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/luaredis"
	"github.com/locklab/locklab/playground"
	"github.com/locklab/locklab/race"
)

// sim is one schedule: a virtual clock, one Redis node (a playground
// sandbox whose clock the schedule sets), the clients running the recipe,
// the storage, and a queue of actions in virtual-time order. It runs on
// one goroutine.
type sim struct {
	ctx     context.Context
	r       Recipe
	sp      *spend
	rng     *rand.Rand
	plan    plan
	faults  []*fault
	start   time.Time
	now     time.Duration // virtual time since start
	offset  time.Duration // how far the node's clock is ahead
	box     *playground.Sandbox
	down    bool
	queue   []action
	seq     int
	clients []*client
	events  []Event
	found   []race.Found
	err     error

	violations map[Property]int
	judged     map[Property]bool

	tokens  map[string]string // a token as redis-cli prints it -> the client's name
	key     keyState          // the lock key, as last seen
	owner   *client           // the client whose acquisition the key holds
	grants  int               // acquisitions so far
	highest int64             // the highest fencing token the storage has taken
	newest  int               // the newest grant among the writes the storage took
	pending []*obligation     // crashed holders whose lock must be freed
	last    lastEffect        // what the line just run did
}

// keyState is the lock key on the node.
type keyState struct {
	present bool
	shown   string        // GET's reply as redis-cli prints it
	ttl     bool          // it has a TTL
	expNode time.Duration // when it expires, on the node's clock (since start)
}

type action struct {
	at  time.Duration
	seq int
	do  func()
}

// obligation is a crashed holder's lock, which must be free by deadline.
type obligation struct {
	c        *client
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

	token     string // of the current acquisition
	holding   bool   // believes it holds the lock
	grant     int    // its acquisition's number among all, from 1
	fence     int64  // its fencing token; 0 if none
	acquired  int
	crashed   bool
	done      bool
	lastReply string // of its last failed attempt
}

// step is one step of a client's job once it has the lock: a line of a
// part, or the write.
type step struct {
	part  string // "acquire", "extend", "write" or "release"
	index int
}

// jobOf returns the steps of a job with s's recipe.
func (s *sim) jobOf() []step {
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

func (s *sim) lines(part string) []string {
	switch part {
	case "acquire":
		return s.r.Acquire
	case "extend":
		return s.r.Extend
	}
	return s.r.Release
}

// startNode starts an empty Redis node on the virtual clock, with the
// playground's limits and the check's deadline for one line.
func (s *sim) startNode() error {
	box, err := playground.NewSandbox(playground.SandboxOptions{
		Now:     func() time.Time { return s.start.Add(s.now + s.offset) },
		Scripts: s.sp.cache,
		Limits:  playground.Limits{Script: limitsFor(s.sp.b)},
	})
	if err != nil {
		return fmt.Errorf("lab: start node: %w", err)
	}
	s.box, s.down = box, false
	return nil
}

// limitsFor gives a node the check's deadline for one line; the other
// limits are the playground's.
func limitsFor(b Budget) luaredis.Limits { return luaredis.Limits{Timeout: b.LineTimeout} }

// at schedules f at virtual time t (or now, if t has passed).
func (s *sim) at(t time.Duration, f func()) {
	s.seq++
	s.queue = append(s.queue, action{at: max(t, s.now), seq: s.seq, do: f})
}

// run executes the queued actions in time order until none are left, the
// horizon or the event cap.
func (s *sim) run() error {
	for len(s.queue) > 0 && s.err == nil && len(s.events) < maxEvents {
		i := 0
		for j, a := range s.queue {
			if a.at < s.queue[i].at || (a.at == s.queue[i].at && a.seq < s.queue[i].seq) {
				i = j
			}
		}
		a := s.queue[i]
		if a.at > horizon {
			break
		}
		s.queue = slices.Delete(s.queue, i, i+1)
		s.advance(a.at)
		a.do()
	}
	return s.err
}

// advance moves virtual time to t, recording the lock key's expiry on the
// way if it falls due.
func (s *sim) advance(t time.Duration) {
	if s.key.present && s.key.ttl {
		if due := s.key.expNode - s.offset; due <= t {
			s.now = max(s.now, due)
			holder := s.holderName()
			s.keyGone()
			s.emit(Event{Event: race.Event{Actor: "redis", Kind: race.KindExpire, Subject: holder,
				Text: fmt.Sprintf("The TTL of %s's key runs out and Redis deletes it; %s is not told.", holder, holder)}})
		}
	}
	s.now = max(s.now, t)
}

// fault returns the unused fault of kind for c's step j, marking it used.
func (s *sim) fault(kind faultKind, c *client, j int) *fault {
	for i, f := range s.faults {
		if f != nil && f.kind == kind && f.client == c.id && f.step == j {
			s.faults[i] = nil
			return f
		}
	}
	return nil
}

// fill fills the placeholders of line for c's acquisition.
func (s *sim) fill(c *client, line string) string {
	return fill(line, vars{key: lockKey, token: c.token, ttl: strconv.FormatInt(ttl.Milliseconds(), 10), ttlS: strconv.FormatInt(int64(ttl/time.Second), 10)})
}

// exec runs one of c's lines on the node and returns what redis-cli would
// print, after charging it to the budget. The key is observed again after
// it.
func (s *sim) exec(c *client, st step, line string) (string, bool) {
	if err := s.sp.line(s.ctx); err != nil {
		s.err = err
		return "", false
	}
	if s.down {
		return "(error) Could not connect to Redis: Connection refused", true
	}
	res, _ := s.box.Exec(s.ctx, playground.ClientA, line)
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

// observe reads the lock key on the node, as an observer outside the
// recipe: these reads are not charged to the check's lines.
func (s *sim) observe() {
	if s.down {
		s.key = keyState{}
		return
	}
	p, _ := s.box.Exec(s.ctx, playground.ClientB, "PTTL "+lockKey)
	ms, ok := intReply(p.Output)
	if !ok || ms == -2 {
		s.key = keyState{}
		return
	}
	g, _ := s.box.Exec(s.ctx, playground.ClientB, "GET "+lockKey)
	s.key = keyState{present: true, shown: g.Output, ttl: ms >= 0}
	if ms >= 0 {
		s.key.expNode = s.now + s.offset + time.Duration(ms)*time.Millisecond
	}
}

// intReply reads "(integer) N".
func intReply(out string) (int64, bool) {
	v, ok := strings.CutPrefix(out, "(integer) ")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

// taken reports whether a first acquire line's reply takes the lock: OK
// or a positive integer.
func taken(reply string) bool {
	if reply == "OK" {
		return true
	}
	n, ok := intReply(reply)
	return ok && n > 0
}

// goesOn reports whether a client goes on after a line that answered
// reply: OK, a positive integer, or its own token.
func goesOn(reply string, c *client) bool {
	return taken(reply) || reply == playground.Quote(c.token)
}

// keyGone records that the lock key is no longer on the node.
func (s *sim) keyGone() {
	s.key = keyState{}
	s.setOwner(nil)
}

// setOwner records whose acquisition the key holds; a crashed holder's
// lock is free once it holds another's, or nothing.
func (s *sim) setOwner(c *client) {
	if s.owner == c {
		return
	}
	for _, o := range s.pending {
		if o.c == s.owner {
			o.done = true
		}
	}
	s.owner = c
}

// holderName names the client whose token is in the key.
func (s *sim) holderName() string {
	if !s.key.present {
		return ""
	}
	if name, ok := s.tokens[s.key.shown]; ok {
		return name
	}
	if s.owner != nil {
		return s.owner.name
	}
	return "someone else"
}

// emit appends e, stamped with the time and the state after it.
func (s *sim) emit(e Event) {
	e.AtMS = s.now.Milliseconds()
	e.TMS = e.AtMS
	ns := race.NodeState{Node: 1, Up: !s.down, Holder: s.holderName(), ClockAheadMS: s.offset.Milliseconds()}
	switch {
	case s.key.present && s.key.ttl:
		ns.TTLMS = (s.key.expNode - s.offset - s.now).Milliseconds()
	case s.key.present:
		ns.TTLMS = -1
	}
	e.Nodes = []race.NodeState{ns}
	if s.r.Fencing {
		e.HighestToken = s.highest
	}
	for _, c := range s.clients {
		if c.holding {
			e.Holding = append(e.Holding, c.name)
		}
	}
	s.events = append(s.events, e)
}

// outcome ties o to the event just emitted, unless o already happened.
func (s *sim) outcome(o race.Outcome, text string) {
	for _, f := range s.found {
		if f.Outcome == o {
			return
		}
	}
	i := len(s.events) - 1
	s.found = append(s.found, race.Found{Outcome: o, Event: i, AtMS: s.events[i].AtMS, Text: text})
}

// violate records that p broke at the event just emitted, with outcome o,
// if the schedule judges p.
func (s *sim) violate(p Property, o race.Outcome, text string) {
	s.outcome(o, text)
	if _, ok := s.violations[p]; !ok && s.judged[p] {
		s.violations[p] = len(s.events) - 1
	}
}

// attempt is c asking for the lock with acquire line 1.
func (s *sim) attempt(c *client) {
	if c.crashed || c.done {
		return
	}
	c.token = fmt.Sprintf("c%d-%08x", c.id+1, s.rng.Uint32())
	s.tokens[playground.Quote(c.token)] = c.name
	line := s.fill(c, s.r.Acquire[0])
	before := s.key
	reply, ok := s.exec(c, step{"acquire", 0}, line)
	if !ok {
		return
	}
	if kind, text := s.effect(c, step{"acquire", 0}, before, line, reply); s.last.foreign {
		// An acquire line that deletes or renews another's lock (a
		// DEL before SET) is a foreign release too.
		s.emit(Event{Event: race.Event{Actor: c.name, Kind: kind, Text: text, Subject: s.last.victim}, Line: line, Reply: reply})
		s.afterEffect(c, kind)
	}
	if !taken(reply) {
		c.lastReply = reply
		wait := retryMin + time.Duration(s.rng.Int64N(int64((retryMax-retryMin)/time.Millisecond)))*time.Millisecond
		s.emit(Event{Event: race.Event{Actor: c.name, Kind: race.KindAcquireFail,
			Text: fmt.Sprintf("%s asks for the lock and Redis answers %s: not taken. It tries again in %s.", capital(c.name), reply, msText(wait))},
			Line: line, Reply: reply})
		s.at(s.now+rtt+wait, func() { s.attempt(c) })
		return
	}
	// The grant's place in line is when Redis gave it, not when the
	// client heard of it.
	s.grants++
	c.grant = s.grants
	if f := s.fault(faultDelay, c, 0); f != nil {
		s.emit(Event{Event: race.Event{Actor: c.name, Kind: race.KindDelay,
			Text: fmt.Sprintf("Redis answers %s to %s, but the reply is late: %s waits %s for it, unaware.", reply, c.name, c.name, msText(f.d))},
			Line: line, Reply: reply})
		s.at(s.now+f.d, func() { s.took(c, line, reply, true) })
		return
	}
	s.took(c, line, reply, false)
}

// took is c learning that it holds the lock.
func (s *sim) took(c *client, line, reply string, late bool) {
	c.acquired++
	c.holding, c.fence = true, 0
	if len(s.r.Acquire) == 1 {
		c.fence, _ = intReply(reply)
	}
	text := fmt.Sprintf("%s asks for the lock and Redis answers %s: %s holds the lock.", capital(c.name), reply, c.name)
	switch {
	case s.r.Fencing && len(s.r.Acquire) == 1 && c.fence > 0:
		text = fmt.Sprintf("%s asks for the lock and Redis answers %s: %s holds the lock, with fencing token %d.", capital(c.name), reply, c.name, c.fence)
	case s.r.Fencing && len(s.r.Acquire) == 1:
		text = fmt.Sprintf("%s asks for the lock and Redis answers %s: %s holds the lock, but with no fencing token, as the reply is not a positive integer.", capital(c.name), reply, c.name)
	}
	if late {
		text = fmt.Sprintf("The late reply reaches %s: %s. %s now believes it holds the lock, whatever has happened since.", c.name, reply, capital(c.name))
	}
	s.emit(Event{Event: race.Event{Actor: c.name, Kind: race.KindAcquireOK, Fence: c.fence, Text: text}, Line: line, Reply: reply})
	s.checkHolders(c)
	s.next(c, 0, true)
}

// checkHolders records two holders if another client believes it holds
// the lock while c does.
func (s *sim) checkHolders(c *client) {
	for _, o := range s.clients {
		if o != c && o.holding {
			s.violate(PropOneHolder, race.OutcomeTwoHolders, fmt.Sprintf("%s and %s both believe they hold the lock.", capital(o.name), c.name))
			return
		}
	}
}

// next schedules the step after c's step j: the next line, or with cont
// false the first step after j's part (a release that stops is done).
func (s *sim) next(c *client, j int, cont bool) {
	if s.fault(faultCrash, c, j) != nil {
		s.crashClient(c)
		return
	}
	cur := c.steps[j].part
	k := j + 1
	if !cont {
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
	s.at(s.now+gap, func() { s.step(c, k) })
}

// step runs c's step j, after the pause a fault puts before it.
func (s *sim) step(c *client, j int) {
	if c.crashed || c.done {
		return
	}
	st := c.steps[j]
	if f := s.fault(faultPause, c, j); f != nil {
		s.emit(Event{Event: race.Event{Actor: c.name, Kind: race.KindPauseStart,
			Text: fmt.Sprintf("%s stops for %s just before %s (a GC pause, a swapped-out VM); it does not know.", capital(c.name), msText(f.d), stepName(st))}})
		s.at(s.now+f.d, func() {
			s.emit(Event{Event: race.Event{Actor: c.name, Kind: race.KindPauseEnd,
				Text: fmt.Sprintf("%s runs again, %s later, and carries on where it stopped: nothing told it that time passed.", capital(c.name), msText(f.d))}})
			s.step(c, j)
		})
		return
	}
	if st.part == "write" {
		s.write(c)
		s.next(c, j, true)
		return
	}
	if st.part == "release" && st.index == 0 {
		c.holding = false
	}
	line := s.fill(c, s.lines(st.part)[st.index])
	before := s.key
	reply, ok := s.exec(c, st, line)
	if !ok {
		return
	}
	kind, text := s.effect(c, st, before, line, reply)
	decide := func() {
		cont := goesOn(reply, c)
		if st.part == "extend" && st.index == 0 && kind != KindExtendOther {
			extended := reply == "OK" || reply == "(integer) 1"
			if !extended {
				kind = race.KindExtendFail
				text = fmt.Sprintf("%s renews its lock and Redis answers %s: the lock is lost, so %s stops its work.", capital(c.name), reply, c.name)
			}
		}
		s.emit(Event{Event: race.Event{Actor: c.name, Kind: kind, Text: text, Subject: s.subject(kind)}, Line: line, Reply: reply})
		s.afterEffect(c, kind)
		if kind == race.KindExtendFail {
			c.holding, c.done = false, true
			return
		}
		if st.part == "acquire" && st.index == len(s.r.Acquire)-1 && cont {
			c.fence, _ = intReply(reply)
		}
		s.next(c, j, cont)
	}
	if f := s.fault(faultDelay, c, j); f != nil {
		s.emit(Event{Event: race.Event{Actor: c.name, Kind: race.KindDelay,
			Text: fmt.Sprintf("Redis runs %s's %s and answers %s, but the reply is late: %s waits %s for it, unaware.", c.name, stepName(st), reply, c.name, msText(f.d))},
			Line: line, Reply: reply})
		s.at(s.now+f.d, decide)
		return
	}
	decide()
}

// lastEffect is what the line just run did to the lock key, for the event
// that reports it.
type lastEffect struct {
	victim  string // the client whose lock it deleted or extended
	foreign bool
}

// effect compares the key before and after c's line and records what the
// line did: took the key, deleted or extended it, perhaps another's. It
// returns the kind and narration of the line's event (emitted by the
// caller, as a late reply postpones what c learns).
func (s *sim) effect(c *client, st step, before keyState, line, reply string) (race.Kind, string) {
	after := s.key
	prev := s.owner
	victim := ""
	if prev != nil && prev != c {
		victim = prev.name
	}
	s.last = lastEffect{}
	what := fmt.Sprintf("%s runs %s: %s.", capital(c.name), stepName(st), reply)
	switch {
	case before.present && !after.present:
		s.setOwner(nil)
		if victim != "" {
			s.last = lastEffect{victim: victim, foreign: true}
			return race.KindDeleteOther, fmt.Sprintf("%s runs %s and deletes the key, but the key held %s's lock, not its own: %s still believes it holds the lock.", capital(c.name), stepName(st), victim, victim)
		}
		if st.part == "release" {
			return race.KindReleaseOK, fmt.Sprintf("%s releases its lock: %s, the key is deleted.", capital(c.name), reply)
		}
		return KindCommand, what + " The key is deleted."
	case !before.present && after.present:
		s.setOwner(c)
	case before.present && after.present && after.shown != before.shown && st.part == "acquire":
		s.setOwner(c)
	case before.present && after.present && before.ttl && (!after.ttl || after.expNode > before.expNode+time.Millisecond):
		if victim != "" {
			s.last = lastEffect{victim: victim, foreign: true}
			return KindExtendOther, fmt.Sprintf("%s runs %s and resets the key's TTL, but the key held %s's lock, not its own: it keeps %s's lock alive while believing it is its own.", capital(c.name), stepName(st), victim, victim)
		}
		if st.part == "extend" {
			return race.KindExtendOK, fmt.Sprintf("%s renews its lock: %s, the TTL starts again from %s.", capital(c.name), reply, msText(ttl))
		}
	}
	switch {
	case st.part == "extend" && st.index == 0:
		return race.KindExtendOK, fmt.Sprintf("%s renews its lock: %s.", capital(c.name), reply)
	case st.part == "release" && (st.index == len(s.r.Release)-1 || !goesOn(reply, c)):
		return race.KindReleaseNoop, fmt.Sprintf("%s runs %s: %s. Nothing is deleted: the lock is no longer its own.", capital(c.name), stepName(st), reply)
	}
	return KindCommand, what
}

// afterEffect records the outcome of a line that deleted or extended
// another client's lock, once its event is out.
func (s *sim) afterEffect(c *client, kind race.Kind) {
	switch {
	case kind == race.KindDeleteOther && s.last.foreign:
		s.violate(PropNoForeignRelease, race.OutcomeForeignLockDeleted, fmt.Sprintf("%s deleted %s's lock.", capital(c.name), s.last.victim))
	case kind == KindExtendOther && s.last.foreign:
		s.violate(PropNoForeignRelease, OutcomeForeignLockExtended, fmt.Sprintf("%s extended %s's lock as if it were its own.", capital(c.name), s.last.victim))
	}
}

// subject is the other client of the event being emitted, if any.
func (s *sim) subject(kind race.Kind) string {
	if kind == race.KindDeleteOther || kind == KindExtendOther {
		return s.last.victim
	}
	return ""
}

// write is c's write to the storage, with its fencing token when fencing
// is on.
func (s *sim) write(c *client) {
	if !c.holding {
		return
	}
	stale := c.grant < s.newest
	ok := !s.r.Fencing || c.fence >= s.highest
	e := Event{Event: race.Event{Actor: "storage", Subject: c.name, Stale: stale}}
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
		e.Kind = race.KindWriteRejected
		e.Text = fmt.Sprintf("The storage rejects %s's write: token %d is lower than %d, which it has already seen.", c.name, c.fence, s.highest)
	case s.r.Fencing:
		e.Kind = race.KindWriteAccepted
		e.Text = fmt.Sprintf("The storage accepts %s's write with token %d.", c.name, c.fence)
	default:
		e.Kind = race.KindWriteAccepted
		e.Text = fmt.Sprintf("The storage accepts %s's write.", c.name)
	}
	if ok {
		s.highest = max(s.highest, c.fence)
		s.newest = max(s.newest, c.grant)
		if stale {
			e.Text += fmt.Sprintf(" But %s has held the lock since, and wrote already: %s's write is stale.", newer, c.name)
			if !s.r.Fencing {
				e.Text += " Without fencing the storage cannot tell."
			}
		}
	}
	s.emit(e)
	switch {
	case ok && stale:
		s.violate(PropNoStaleWrite, race.OutcomeStaleWriteAccepted, fmt.Sprintf("The storage accepted a write from %s after one from %s, who got the lock after it.", c.name, newer))
	case !ok && stale:
		s.outcome(race.OutcomeStaleWriteRejected, fmt.Sprintf("%s wrote after the lock had passed to %s, but its fencing token was too low and the storage rejected it.", capital(c.name), newer))
	}
}

// crashClient is c crashing: it never runs another line. If the key holds
// its lock, the lock must be free within the TTL.
func (s *sim) crashClient(c *client) {
	c.crashed, c.holding = true, false
	text := fmt.Sprintf("%s crashes: its process is gone and it will never release anything.", capital(c.name))
	s.emit(Event{Event: race.Event{Actor: c.name, Kind: KindClientCrash, Text: text}})
	if s.owner != c || !s.key.present {
		return
	}
	s.judged[PropFreesAfterCrash] = true
	o := &obligation{c: c, deadline: s.now + ttl}
	s.pending = append(s.pending, o)
	s.at(o.deadline, func() {
		if o.done {
			return
		}
		o.done = true
		s.emit(Event{Event: race.Event{Actor: "redis", Kind: KindStillLocked, Subject: c.name,
			Text: fmt.Sprintf("%s after %s crashed, its lock is still in Redis: nobody else can take it.", capital(msText(ttl)), c.name)}})
		s.violate(PropFreesAfterCrash, OutcomeLockNotFreed, fmt.Sprintf("%s crashed holding the lock, and a TTL later the lock was still taken.", capital(c.name)))
	})
}

// jump moves the node's clock d ahead.
func (s *sim) jump(d time.Duration) {
	s.offset += d
	s.emit(Event{Event: race.Event{Actor: "redis", Kind: race.KindClockJump,
		Text: fmt.Sprintf("Redis's clock jumps %s ahead (an NTP correction, an operator): every TTL on it runs out %s early.", msText(d), msText(d))}})
	s.advance(s.now)
}

// crashNode is the node crashing without persistence; it is back, empty,
// after down.
func (s *sim) crashNode(down time.Duration) {
	if s.down {
		return
	}
	s.box.Close()
	s.down = true
	s.keyGone()
	s.emit(Event{Event: race.Event{Actor: "redis", Kind: race.KindCrash,
		Text: fmt.Sprintf("Redis crashes. It has no persistence, so every key is lost; it stays down %s.", msText(down))}})
	s.at(s.now+down, func() {
		if err := s.startNode(); err != nil {
			s.err = err
			return
		}
		s.emit(Event{Event: race.Event{Actor: "redis", Kind: race.KindRestart,
			Text: "Redis is back, empty: no lock, and no counter either."}})
	})
}

// faultText describes f in one sentence.
func (s *sim) faultText(f fault) string {
	steps := s.jobOf()
	name := func() string { return stepName(steps[min(f.step, len(steps)-1)]) }
	who := fmt.Sprintf("client %d", f.client+1)
	switch f.kind {
	case faultPause:
		return fmt.Sprintf("%s pauses for %s before %s.", capital(who), msText(f.d), name())
	case faultDelay:
		return fmt.Sprintf("The reply to %s's %s is %s late.", who, name(), msText(f.d))
	case faultCrash:
		return fmt.Sprintf("%s crashes after %s.", capital(who), name())
	case faultJump:
		return fmt.Sprintf("At %s, Redis's clock jumps %s ahead.", msText(f.at), msText(f.d))
	}
	return fmt.Sprintf("At %s, Redis restarts without persistence; it is down for %s.", msText(f.at), msText(f.d))
}

// stepName names a step for people: "acquire line 1", "its write".
func stepName(st step) string {
	if st.part == "write" {
		return "its write to the storage"
	}
	return fmt.Sprintf("%s line %d", st.part, st.index+1)
}

func msText(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }

func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// outcomeOrder ranks outcomes, most serious first.
var outcomeOrder = []race.Outcome{race.OutcomeForeignLockDeleted, OutcomeForeignLockExtended, race.OutcomeTwoHolders,
	race.OutcomeStaleWriteAccepted, OutcomeLockNotFreed, race.OutcomeStaleWriteRejected, race.OutcomeSafe}

// sortFound orders outcomes most serious first.
func sortFound(found []race.Found) []race.Found {
	rank := func(o race.Outcome) int {
		if i := slices.Index(outcomeOrder, o); i >= 0 {
			return i
		}
		return len(outcomeOrder)
	}
	out := slices.Clone(found)
	slices.SortStableFunc(out, func(a, b race.Found) int { return rank(a.Outcome) - rank(b.Outcome) })
	return out
}
