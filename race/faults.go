package race

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/sim"
)

// nodeName is how narration names n: "Redis", "node 3".
func (s *runner) nodeName(n *node) string {
	if len(s.nodes) == 1 {
		return "Redis"
	}
	return fmt.Sprintf("node %d", n.id)
}

// clockJump moves n's clock ahead by d, or back for a negative d. Its
// keys' TTLs count down against that clock, so a jump ahead past a key's
// TTL expires it at once, and a jump back makes every key live longer.
func (s *runner) clockJump(n *node, d time.Duration) {
	if d == 0 {
		return
	}
	holder := s.holder(n)
	if err := n.sn.Jump(d); err != nil {
		s.fail(err)
		return
	}
	s.emit(Event{Actor: s.nodeActor(n), Kind: KindClockJump, Text: sim.ClockJumps(s.nodeName(n), d), Jump: sim.JumpShort(d)})
	if holder != "" && s.holder(n) == "" {
		s.emit(Event{Actor: s.nodeActor(n), Kind: KindExpire, Subject: holder,
			Text: fmt.Sprintf("To %s, %s's key is now past its TTL, so it expires at once, early by true time.", s.nodeName(n), holder)})
	}
}

// crash takes n down; without persistence its data is gone.
func (s *runner) crash(n *node, persist bool) {
	holder := s.holder(n)
	n.up, n.downAt, n.lost = false, s.now, holder
	n.restarts++
	if err := n.sn.Crash(persist); err != nil {
		s.fail(err)
		return
	}
	var text string
	switch {
	case persist && holder != "":
		text = fmt.Sprintf("%s crashes; it writes every command to its append-only file, so %s's key is on disk.", sim.Capital(s.nodeName(n)), holder)
	case persist:
		text = fmt.Sprintf("%s crashes; it writes every command to its append-only file.", sim.Capital(s.nodeName(n)))
	case holder != "":
		text = fmt.Sprintf("%s crashes and, with no persistence, loses %s's key.", sim.Capital(s.nodeName(n)), holder)
	default:
		text = fmt.Sprintf("%s crashes; it kept its data only in memory.", sim.Capital(s.nodeName(n)))
	}
	if s.failover != nil && n == s.failover.primary {
		text += " The replica has only what was copied to it so far."
	}
	s.emit(Event{Actor: s.nodeActor(n), Kind: KindCrash, Subject: holder, Text: text})
	s.crashed(n)
}

// restart brings n back, empty or with its data. The rule the narration
// checks: forgetting locks is harmless only if the node stayed down longer
// than the longest TTL it granted, since every lock it granted has expired
// by then.
func (s *runner) restart(n *node, persist bool) {
	down := s.now - n.downAt
	if err := n.sn.Restart(down); err != nil {
		s.fail(err)
		return
	}
	n.up = true
	name := sim.Capital(s.nodeName(n))
	var text string
	switch {
	case s.failover != nil && n != s.failover.primary:
		old := ""
		if n == s.nodes[0] {
			old = ", the old primary,"
		}
		text = fmt.Sprintf("%s%s restarts after %s and rejoins as a replica of node %d: it copies everything node %d has and drops what it had.", name, old, sim.Dur(down), s.failover.primary.id, s.failover.primary.id)
	case persist && s.holder(n) != "":
		text = fmt.Sprintf("%s restarts after %s with its data: %s's key is back, with the TTL it has left.", name, sim.Dur(down), s.holder(n))
	case persist:
		text = fmt.Sprintf("%s restarts after %s with its data; no lock key is left in it that had not expired.", name, sim.Dur(down))
	case !n.granted:
		text = fmt.Sprintf("%s restarts with an empty database after %s; it had granted no lock, so it forgot nothing that matters.", name, sim.Dur(down))
	case down > s.p.TTL:
		text = fmt.Sprintf("%s restarts with an empty database after %s down, longer than the longest TTL it granted (%s): every lock it granted has expired anyway.", name, sim.Dur(down), sim.Dur(s.p.TTL))
	case n.lost != "":
		text = fmt.Sprintf("%s restarts with an empty database after only %s, no longer than the %s TTL it granted: it has forgotten %s's key while that lock may still be valid.", name, sim.Dur(down), sim.Dur(s.p.TTL), n.lost)
	default:
		text = fmt.Sprintf("%s restarts with an empty database after only %s, no longer than the %s TTL it granted: any lock it granted that is still valid is forgotten.", name, sim.Dur(down), sim.Dur(s.p.TTL))
	}
	resync := s.failover != nil && n != s.failover.primary
	if resync {
		s.failover.resync(n)
	}
	s.emit(Event{Actor: s.nodeActor(n), Kind: KindRestart, Text: text})
	if resync {
		s.wakeWaiters()
	}
}

// crashClient is c's process dying: it never runs another step, and
// releases nothing; a lock it held stays until its TTL runs out.
func (s *runner) crashClient(c *client) {
	if c.crashed {
		return
	}
	c.crashed, c.stopped, c.holding, c.paused = true, true, false, false
	s.q.Drop(c)
	s.emit(Event{Actor: c.name, Kind: KindClientCrash, Text: sim.ClientCrashes(c.name)})
}
