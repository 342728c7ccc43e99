package race

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/sim"
)

// failover is the failover scenario's pair: a primary that the clients
// use and an asynchronous replica that copies its writes after a lag, and
// Sentinel, which promotes the replica when the primary has been down for
// downAfter.
type failover struct {
	primary, replica *node
	lag, downAfter   time.Duration
	last             snapshot // the primary's state at the last copy sent
	sent, copied     int      // copies sent and applied, in order
	waiters          []*waiter
	explained        bool // the narration has said what WAIT does not do
}

// snapshot is what the replica needs of the primary: the lock key with its
// deadline, and the fencing counter.
type snapshot struct {
	value    string
	deadline time.Duration // virtual time at which the key expires
	fence    string
}

// waiter is a client blocked in WAIT 1.
type waiter struct {
	c       *client
	primary *node         // the primary it sent its SET to
	copy    int           // the copy that carries its SET
	since   time.Duration // when it started waiting
	done    bool
	then    func() // the client's work, once the lock is its own
	again   func() // another attempt at the lock
}

// waitTimeout is the timeout the failover scenario's clients give WAIT.
func (s *runner) waitTimeout() time.Duration { return waitTimeout(s.p) }

// waitTimeout is the WAIT timeout of a failover run with p.
func waitTimeout(p Params) time.Duration { return (p.TTL / 2).Truncate(time.Millisecond) }

func (s *runner) role(n *node) string {
	switch {
	case s.failover == nil:
		return ""
	case n == s.failover.primary:
		return "primary"
	}
	return "replica"
}

// snap reads n's lock key and fencing counter.
func (s *runner) snap(n *node) snapshot {
	var sn snapshot
	if v, err := n.m.Get(lockKey); err == nil {
		sn.value = v
		sn.deadline = s.now + n.m.TTL(lockKey)
	}
	sn.fence, _ = n.m.Get(lockKey + ":fence")
	return sn
}

// replicate sends the replica what changed on the primary after a call by
// c; it arrives after the lag, unless the primary crashes first.
func (s *runner) replicate(c *client) {
	f := s.failover
	if f == nil || !f.primary.up {
		return
	}
	sn := s.snap(f.primary)
	if sn == f.last {
		return
	}
	f.last = sn
	f.sent++
	id, from, gen := f.sent, f.primary, f.primary.restarts
	apply := func() {
		if f.primary != from || !from.up || from.restarts != gen {
			return // the copy was lost with the primary
		}
		s.applyCopy(f.replica, sn, id)
	}
	if f.lag == 0 {
		apply()
		return
	}
	s.at(s.now+f.lag, apply)
}

// applyCopy writes sn to the replica r and wakes the clients waiting for
// it.
func (s *runner) applyCopy(r *node, sn snapshot, id int) {
	f := s.failover
	if !r.up {
		return
	}
	f.copied = id
	before := s.holder(r)
	switch {
	case sn.value == "" || sn.deadline <= s.now:
		r.m.Del(lockKey)
	default:
		_ = r.m.Set(lockKey, sn.value)
		r.m.SetTTL(lockKey, sn.deadline-s.now)
	}
	if sn.fence != "" {
		_ = r.m.Set(lockKey+":fence", sn.fence)
	}
	after := s.holder(r)
	var text string
	switch {
	case after != "" && after != before:
		text = fmt.Sprintf("Node %d, the replica, receives %s's key from the primary, %s after it was set.", r.id, after, sim.Dur(f.lag))
	case after == "" && before != "":
		text = fmt.Sprintf("Node %d, the replica, receives the deletion of %s's key from the primary.", r.id, before)
	}
	if text != "" {
		s.emit(Event{Actor: s.nodeActor(r), Kind: KindReplicate, Text: text})
	}
	s.wakeWaiters()
}

// wakeWaiters ends the WAIT of the clients whose write the replica has.
func (s *runner) wakeWaiters() {
	f := s.failover
	for _, w := range f.waiters {
		if !w.done && w.copy <= f.copied {
			w.done = true
			s.atFor(w.c, s.now, func() { s.waitDone(w, true) })
		}
	}
}

// waitReplica is WAIT 1: c has the primary's OK and uses the lock only
// once the replica has it.
func (s *runner) waitReplica(c *client, then func(), again func()) {
	f := s.failover
	w := &waiter{c: c, primary: f.primary, copy: f.sent, since: s.now, then: then, again: again}
	s.emit(Event{Actor: c.name, Kind: KindWait, Text: fmt.Sprintf("%s's SET answers OK from the primary; it runs WAIT 1 %d and will use the lock only once a replica has it.", sim.Capital(c.name), s.waitTimeout().Milliseconds())})
	if f.copied >= w.copy {
		w.done = true
		s.waitDone(w, true)
		return
	}
	f.waiters = append(f.waiters, w)
	s.atFor(c, s.now+s.waitTimeout(), func() {
		if !w.done {
			w.done = true
			s.waitDone(w, false)
		}
	})
}

// waitDone ends a WAIT: ok if the replica has the key, else it timed out
// or the primary crashed.
func (s *runner) waitDone(w *waiter, ok bool) {
	c := w.c
	took := s.now - w.since
	switch {
	case ok:
		text := fmt.Sprintf("WAIT returns 1 after %s: the replica has %s's key, so %s now takes the lock as its own", sim.Dur(took), c.name, c.name)
		if s.p.Fencing {
			text += fmt.Sprintf(", with fencing token %d", c.lk.Fence())
		}
		text += "."
		if !s.failover.explained {
			s.failover.explained = true
			text += " That narrows the window; it does not close it: replication stays asynchronous, WAIT only reports how far it got, and a failover can still promote a replica without the key (WAIT does not make Redis strongly consistent)."
		}
		s.granted(c, text, w.then)
	case !w.primary.up || s.failover.primary != w.primary:
		s.emit(Event{Actor: c.name, Kind: KindWait, Text: fmt.Sprintf("%s's WAIT fails: the primary crashed before a replica had the key. %s cannot tell whether its lock survived, so it does not use it and will try again.", sim.Capital(c.name), sim.Capital(c.name))})
		s.atFor(c, s.now+s.retryDelay(), w.again)
	default:
		s.emit(Event{Actor: c.name, Kind: KindWait, Text: fmt.Sprintf("WAIT returns 0 after its %s timeout: no replica has %s's key yet, so %s does not use the lock; it releases it and will try again.", sim.Dur(took), c.name, c.name)})
		_, _ = s.call(func() { _ = c.lk.Release(s.ctx) })
		s.replicate(c)
		s.atFor(c, s.now+s.retryDelay(), w.again)
	}
}

// crashed reacts to n's crash: clients waiting on the primary get an
// error, and Sentinel promotes the replica once the primary has been down
// for downAfter.
func (s *runner) crashed(n *node) {
	f := s.failover
	if f == nil || n != f.primary {
		return
	}
	for _, w := range f.waiters {
		if !w.done {
			w.done = true
			s.atFor(w.c, s.now, func() { s.waitDone(w, false) })
		}
	}
	gen := n.restarts
	s.at(s.now+f.downAfter, func() {
		if n.up || n.restarts != gen || f.primary != n || !f.replica.up {
			return
		}
		f.primary, f.replica = f.replica, f.primary
		f.last = s.snap(f.primary)
		text := fmt.Sprintf("Sentinel has had no answer from the primary for %s and promotes node %d, the replica; clients now send their commands to it.", sim.Dur(f.downAfter), f.primary.id)
		if h := s.holder(f.primary); h != "" {
			text += fmt.Sprintf(" It has %s's key, copied before the crash.", h)
		} else if n.lost != "" {
			text += fmt.Sprintf(" It never received %s's key: the lock is free there.", n.lost)
		}
		s.emit(Event{Actor: s.nodeActor(f.primary), Kind: KindFailover, Text: text})
	})
}

// resync makes a restarted old primary a copy of the new primary, as a
// replica does with a full resynchronisation; it then has every write.
func (f *failover) resync(n *node) {
	f.copied = f.sent
	n.m.FlushAll()
	if v, err := f.primary.m.Get(lockKey); err == nil {
		_ = n.m.Set(lockKey, v)
		n.m.SetTTL(lockKey, f.primary.m.TTL(lockKey))
	}
	if v, err := f.primary.m.Get(lockKey + ":fence"); err == nil {
		_ = n.m.Set(lockKey+":fence", v)
	}
}
