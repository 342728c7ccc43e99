package lab

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/sim"
)

// A recipe on several nodes is a Redlock client. Each part's lines run on
// node 1, then node 2, and so on, with the same token; a node says yes
// to a part when its deciding line succeeds there, and a line before the
// deciding one that does not go on ends that node's turn. Then:
//
//   - acquire: the lock is taken when at least the quorum of nodes said
//     yes and its validity, lock.Validity of the TTL and the time the
//     round took (from before its first line to after its last reply),
//     is positive; the drift allowance is lock.Drift (lock.DriftRule).
//     Otherwise the client runs the release lines on every node, as a
//     Redlock client does after a failed attempt, and tries again.
//   - extend: the renewal counts when the quorum said yes before the
//     validity ran out; it then lasts the TTL from the round's start,
//     less the drift allowance.
//   - release: runs on every node; it succeeded when the quorum said yes.
//
// The quorum is a majority, lock.Quorum, unless the recipe names one.
//
// A check's cost grows with the nodes: every line runs on each node, so
// a schedule runs that many times more lines, and a job has that many
// times more steps. The systematic faults grow with them too, but not as
// the square: see singlesMulti and pairable.

// nodeCount is how many nodes r runs on.
func (r Recipe) nodeCount() int { return max(r.Nodes, 1) }

// quorum is how many nodes must say yes to r.
func (r Recipe) quorum() int {
	if r.Quorum > 0 {
		return r.Quorum
	}
	return lock.Quorum(r.nodeCount())
}

// validateNodes refuses a count of nodes other than NodeCounts, a quorum
// outside 1 to the nodes, and too many lines for the nodes.
func (r Recipe) validateNodes() error {
	if r.Nodes != 0 && !slices.Contains(NodeCounts, r.Nodes) {
		return fmt.Errorf("recipe: nodes %d: a recipe runs on 1, 3 or 5 Redis nodes (an odd number, so that a majority is clear): %w", r.Nodes, ErrBadRecipe)
	}
	n := r.nodeCount()
	if r.Quorum < 0 || r.Quorum > n {
		return fmt.Errorf("recipe: quorum %d: between 1 and the %d nodes (0 is a majority, %d): %w", r.Quorum, n, lock.Quorum(n), ErrBadRecipe)
	}
	if lines := len(r.Acquire) + len(r.Release) + len(r.Extend); n > 1 && lines*n > MaxNodeLines {
		return fmt.Errorf("recipe: %d lines on %d nodes; at most %d lines on %d nodes (every line runs on each node): %w", lines, n, MaxNodeLines/n, n, ErrBadRecipe)
	}
	return nil
}

// multi reports whether the schedule's recipe runs on several nodes.
func (s *schedule) multi() bool { return len(s.nodes) > 1 }

// quorum is how many nodes must say yes.
func (s *schedule) quorum() int { return s.r.quorum() }

// actor is node k's lane: "redis" alone, "redis node 3" among several,
// as the race names them.
func (s *schedule) actor(k int) string {
	if !s.multi() {
		return "redis"
	}
	return "redis node " + strconv.Itoa(k+1)
}

// nodeWord is node k in a sentence: "Redis" alone, "node 3" among
// several.
func (s *schedule) nodeWord(k int) string {
	if !s.multi() {
		return "Redis"
	}
	return "node " + strconv.Itoa(k+1)
}

// quorumWords says on how many nodes a part must succeed, after its rule:
// " on 3 of 5 nodes"; "" on one node.
func (s *schedule) quorumWords() string {
	if !s.multi() {
		return ""
	}
	return fmt.Sprintf(" on %d of %d nodes", s.quorum(), len(s.nodes))
}

// onNode is " on node 3" for a step on one of several nodes, else "".
func onNode(st step) string {
	if st.on == 0 {
		return ""
	}
	return " on node " + strconv.Itoa(st.on)
}

// startRound notes the start of a client's round of a part over the
// nodes: the time before its first line, and no yes yet.
func (c *client) startRound(now time.Duration) {
	c.roundStart, c.votes, c.replies = now, 0, c.replies[:0]
}

// decideOnNode is c reading the reply to its step j on one of several
// nodes: a yes or a no of that node, or a line that goes on or not.
func (s *schedule) decideOnNode(c *client, j int, line, reply string, eff effect) {
	st := c.steps[j]
	d := s.decision(st.part)
	deciding := st.index == d.line
	ok := goesOn(reply, c.token)
	if deciding {
		ok = d.success(reply)
		if ok {
			c.votes++
		} else if st.part == "acquire" {
			c.lastReply, c.lastOn = reply, st.on
		}
		c.replies = append(c.replies, reply)
	}
	if st.part == "acquire" && st.index == s.ru.tokenLine && (deciding && ok || !deciding) {
		c.fence = max(c.fence, fenceFrom(reply, s.ru.tokenElem))
	}
	node := s.nodeWord(st.node())
	kind := KindCommand
	var text string
	switch {
	case !deciding && !ok:
		text = fmt.Sprintf("%s runs %s: %s, so it does not go on on %s.", sim.Capital(c.name), stepName(st), reply, node)
		if st.part == "release" {
			c.releaseReply, c.releaseLine = reply, st
		}
	case !deciding:
		text = s.commandText(c, st, reply, eff)
	case st.part == "release":
		kind = releaseKind(ok)
		text = s.releaseText(c, st, reply, ok, eff)
		if !ok {
			c.releaseReply, c.releaseLine = reply, st
		}
	default:
		what := "asks " + node + " for the lock"
		if st.part == "extend" {
			what = "asks " + node + " to renew its lock"
		}
		if d.custom {
			what = "runs " + stepName(st)
		}
		yes := "a yes"
		if !ok {
			yes = "a no"
		}
		text = fmt.Sprintf("%s %s: %s, %s (%d %s of %d nodes so far).", sim.Capital(c.name), what, reply, yes, c.votes, plural(c.votes, "yes", "yeses"), len(s.nodes))
		if eff.deleted {
			text += " The key is deleted."
		}
	}
	s.lineEvent(c, kind, text, line, reply, eff)
	s.after(c, j, ok)
}

// afterOnNode schedules what follows c's step j on one of several nodes:
// its next line on the same node, the part's lines on the next node, or,
// at the end of the round, the part's outcome.
func (s *schedule) afterOnNode(c *client, j int, ok bool) {
	st := c.steps[j]
	k := j + 1
	if !ok {
		for k < len(c.steps) && c.steps[k].part == st.part && c.steps[k].on == st.on {
			k++
		}
	}
	if k < len(c.steps) && c.steps[k].part == st.part {
		s.at(s.now()+rtt, func() { s.step(c, k) })
		return
	}
	if !s.endRound(c, st.part) {
		return
	}
	if k >= len(c.steps) {
		c.done = true
		return
	}
	s.at(s.now()+s.gap(c, st.part, c.steps[k].part), func() { s.step(c, k) })
}

// endRound is c at the end of a round of part over the nodes, counting
// the yeses. It reports whether c goes on with its job.
func (s *schedule) endRound(c *client, part string) bool {
	elapsed := s.now() - c.roundStart
	q, n := s.quorum(), len(s.nodes)
	got := fmt.Sprintf("%d of %d nodes said yes (it needs %d)", c.votes, n, q)
	switch part {
	case "acquire":
		validity := lock.Validity(ttl, elapsed)
		arith := fmt.Sprintf("its round took %s, so the validity is %d − %d − %d = %d ms (the TTL, less the time taken, less the drift allowance of %s)",
			sim.Dur(elapsed), ttl.Milliseconds(), elapsed.Milliseconds(), lock.Drift(ttl).Milliseconds(), validity.Milliseconds(), lock.DriftRule)
		if c.votes >= q && validity > 0 {
			c.validUntil = c.roundStart + ttl - lock.Drift(ttl)
			s.grants++
			s.tookOnNodes(c, fmt.Sprintf("%s asked every node: %s, and %s: %s holds the lock for %d ms.", sim.Capital(c.name), got, arith, c.name, validity.Milliseconds()), s.grants)
			return true
		}
		why := "not taken"
		if c.votes >= q {
			why = "not positive: not taken"
		}
		s.retryOnNodes(c, fmt.Sprintf("asked every node: %s, and %s; %s.", got, arith, why))
		return false
	case "extend":
		if c.votes >= q && s.now() < c.validUntil {
			c.validUntil = c.roundStart + ttl - lock.Drift(ttl)
			s.emit(Event{Event: sim.Event{Actor: c.name, Kind: sim.KindExtendOK,
				Text: fmt.Sprintf("%s renews its lock: %s, within its validity; it holds the lock for %d ms more.", sim.Capital(c.name), got, (c.validUntil - s.now()).Milliseconds())}})
			return true
		}
		why := got
		if c.votes >= q {
			why = fmt.Sprintf("%s, but its validity had run out %s before", got, sim.Dur(s.now()-c.validUntil))
		}
		c.holding, c.done = false, true
		s.emit(Event{Event: sim.Event{Actor: c.name, Kind: sim.KindExtendFail,
			Text: fmt.Sprintf("%s renews its lock: %s; it takes the lock as lost and stops its work.", sim.Capital(c.name), why)}})
		return false
	case "release":
		c.released = c.votes >= q
		return true
	}
	return true
}

// tookOnNodes is c learning that a quorum granted it the lock.
func (s *schedule) tookOnNodes(c *client, text string, grant int) {
	c.acquired++
	c.holding, c.grant = true, grant
	for _, o := range s.pending {
		if !o.done && o.c != c {
			o.done = true // another client took it: the crashed holder's lock is free
		}
	}
	if s.r.Fencing {
		if c.fence > 0 {
			text = fmt.Sprintf("%s Its fencing token is %d.", text, c.fence)
		} else {
			text += " But it has no fencing token: no reply held a positive integer."
		}
	}
	s.emit(Event{Event: sim.Event{Actor: c.name, Kind: sim.KindAcquireOK, Fence: c.fence, Text: text}})
	s.checkHolders(c)
}

// retryOnNodes is c's attempt that did not take the lock: it runs the
// release lines on every node, one line a round trip after the other,
// and then tries again after a random delay.
func (s *schedule) retryOnNodes(c *client, why string) {
	wait := retryMin + time.Duration(s.rng.Int64N(int64((retryMax-retryMin)/time.Millisecond)))*time.Millisecond
	s.emit(Event{Event: sim.Event{Actor: c.name, Kind: sim.KindAcquireFail,
		Text: fmt.Sprintf("%s %s It releases on every node, as a Redlock client does, and tries again %s after that.", sim.Capital(c.name), why, sim.Dur(wait))}})
	var undo []step
	for _, st := range c.steps {
		if st.part == "release" {
			undo = append(undo, st)
		}
	}
	s.at(s.now()+rtt, func() { s.undo(c, undo, 0, wait) })
}

// undo runs release step i of a failed attempt (not a step of the job:
// no fault strikes there), then the next, then the next attempt.
func (s *schedule) undo(c *client, steps []step, i int, wait time.Duration) {
	if c.crashed || c.done {
		return
	}
	if i >= len(steps) {
		s.at(s.now()+wait, func() { s.begin(c) })
		return
	}
	st := steps[i]
	s.noteOthersHolding(c)
	line := fillFor(s.r.Release[st.index], c.token)
	before, prev := s.keys[st.node()], s.owners[st.node()]
	reply, ok := s.exec(st, c.token)
	if !ok {
		return
	}
	eff := s.effect(c, st, reply, before, prev)
	// The effect's sentence, if the line touched another's lock, says
	// why the line ran too.
	eff.text = strings.Replace(eff.text, stepName(st)+":", stepName(st)+" to undo its failed attempt:", 1)
	text := fmt.Sprintf("%s runs %s to undo its failed attempt: %s.", sim.Capital(c.name), stepName(st), reply)
	if eff.deleted {
		text += " The key is deleted."
	}
	s.lineEvent(c, KindCommand, text, line, reply, eff)
	next := i + 1
	if d := s.ru.release; st.index < d.line && !goesOn(reply, c.token) {
		for next < len(steps) && steps[next].on == st.on {
			next++
		}
	}
	s.at(s.now()+rtt, func() { s.undo(c, steps, next, wait) })
}

// jumpedNodes is how many nodes the plan's clock jumps strike.
func (p plan) jumpedNodes() int {
	var seen []int
	for _, f := range p.faults {
		if (f.kind == faultJump || f.kind == faultJumpBack) && !slices.Contains(seen, f.node) {
			seen = append(seen, f.node)
		}
	}
	return len(seen)
}

// isNodeFault reports whether f strikes a node rather than a client.
func (f fault) isNodeFault() bool {
	return f.kind == faultRestart || f.kind == faultJump || f.kind == faultJumpBack
}

// singlesMulti lists every plan of one fault with the given number of
// clients on several nodes, in a fixed order. Faults strike at the start
// and the end of each round over the nodes, as on one node: node faults
// on the first and the last node (the nodes of a round are alike but for
// their order), pauses before it, a late reply to its last line, a crash
// after it. Within an acquire round, once the client has asked just
// enough nodes for the quorum and before it asks the next: a pause
// inside one-holder's margin, which leaves the other nodes to another
// client, and the node faults of the node just asked, which take away
// one of its yeses: Kleppmann's examples of a bare majority that a
// crash or a clock turns into two.
func singlesMulti(r Recipe, m Model, clients int) []plan {
	steps := jobOf(r)
	n, nodes := len(steps), r.nodeCount()
	last := map[string]int{"acquire": len(r.Acquire) - 1, "extend": len(r.Extend) - 1, "release": len(r.Release) - 1}
	pauses, delays := pauseClasses, delayClasses
	if !m.LongStalls {
		pauses, delays = shortPauseClasses, shortDelayClasses
	}
	var out []plan
	one := func(f fault) { out = append(out, plan{clients: clients, faults: []fault{f}}) }
	nodeFaults := func(c, step, node int, mid bool) {
		switch m.Restarts {
		case RestartsWithData:
			one(fault{kind: faultRestart, client: c, step: step, node: node, mid: mid, d: downWithData, persist: true})
		case RestartsEmptyDelayed:
			one(fault{kind: faultRestart, client: c, step: step, node: node, mid: mid, d: downDelayed})
		case RestartsEmpty:
			one(fault{kind: faultRestart, client: c, step: step, node: node, mid: mid, d: downQuick})
		}
		if m.ClockJumps != JumpsNone {
			one(fault{kind: faultJump, client: c, step: step, node: node, mid: mid, d: ttl})
		}
		if m.ClockJumps == JumpsBoth {
			one(fault{kind: faultJumpBack, client: c, step: step, node: node, mid: mid, d: ttl})
		}
	}
	for step, st := range steps {
		first := st.part == "write" || st.index == 0 && st.on == 1
		end := st.part != "write" && st.index == last[st.part] && st.on == nodes
		// After a majority, and after the recipe's own quorum if it
		// differs: so that recipes with different quorums share the
		// majority's schedules (see Compare).
		mid := st.part == "acquire" && st.index == 0 && (st.on == lock.Quorum(nodes)+1 || st.on == r.quorum()+1)
		for c := range clients {
			if first && (step > 0 || c > 0) {
				nodeFaults(c, step, 0, false)
				nodeFaults(c, step, nodes-1, false)
			}
			if mid {
				nodeFaults(c, step, st.on-2, true)
			}
			if first && step > 0 {
				for _, l := range pauses {
					one(fault{kind: faultPause, client: c, step: step, d: ttlTimes(l)})
				}
			}
			if mid {
				one(fault{kind: faultPause, client: c, step: step, mid: true, d: ttlTimes(shortPauseClasses[0])})
			}
			if end {
				for _, l := range delays {
					one(fault{kind: faultDelay, client: c, step: step, d: ttlTimes(l)})
				}
			}
			if (end || st.part == "write") && step < n-1 {
				one(fault{kind: faultCrash, client: c, step: step})
			}
		}
	}
	return out
}

// pairable reports whether two single faults make a systematic pair on
// several nodes: a fault within an acquire round with a node fault or
// another such fault, or the same node fault on two different nodes (two
// nodes that lose their data, two clocks that jump). Those are the pairs
// in which the nodes matter; the others run as they do on one node, and
// the random schedules try them. So the pairs do not grow with the
// nodes: singlesMulti's faults are as many on 3 nodes as on 5.
func pairable(a, b fault) bool {
	switch {
	case a.mid && b.mid:
		return true
	case a.mid || b.mid:
		return a.isNodeFault() || b.isNodeFault()
	}
	return a.isNodeFault() && a.kind == b.kind && a.node != b.node
}

// nodesSummary says how a recipe on several nodes was run, for a Report.
func nodesSummary(rep Report) string {
	q := fmt.Sprintf("a quorum of %d, a majority", rep.Quorum)
	if rep.Quorum < lock.Quorum(rep.Nodes) {
		q = fmt.Sprintf("a quorum of %d, fewer than a majority (%d)", rep.Quorum, lock.Quorum(rep.Nodes))
	} else if rep.Quorum > lock.Quorum(rep.Nodes) {
		q = fmt.Sprintf("a quorum of %d, more than a majority (%d)", rep.Quorum, lock.Quorum(rep.Nodes))
	}
	return fmt.Sprintf("Each client asked all %d Redis nodes in turn, as a Redlock client does, and took the lock on %s, while its validity (the TTL, less the time the round took, less %s) was positive.",
		rep.Nodes, q, lock.DriftRule)
}

// noteOnNodes qualifies a property's result on several nodes: one-holder
// is judged also when a minority of the nodes' clocks jumped.
func noteOnNodes(p Property, pr PropertyResult, rep Report, note string) string {
	if p != PropOneHolder || pr.Status == StatusNotJudged {
		return note
	}
	minority := rep.Nodes - lock.Quorum(rep.Nodes)
	return fmt.Sprintf("Judged in the %d schedules in which two clients took the lock, the clocks of at most %d of the %d nodes jumped (a majority is meant to outvote the rest: Kleppmann's case, where one node's clock jumps, is judged), and every client's work, pauses and late replies together stayed under %d ms, half the %d ms TTL.",
		pr.Explored, minority, rep.Nodes, rep.MarginMS, rep.TTLMS)
}
