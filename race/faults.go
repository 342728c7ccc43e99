package race

import (
	"fmt"
	"time"
)

// clockJump moves n's clock ahead by d. Its keys' TTLs count down against
// that clock, so a jump past a key's TTL expires it at once.
func (s *sim) clockJump(n *node, d time.Duration) {
	if d <= 0 {
		return
	}
	holder := s.holder(n)
	n.offset += d
	s.setNow(s.now)
	s.emit(Event{Actor: s.nodeActor(n), Kind: KindClockJump,
		Text: fmt.Sprintf("Node %d's clock jumps %s ahead (a bad time sync, say); Redis counts TTLs by that clock.", n.id, dur(d))})
	if holder != "" && s.holder(n) == "" {
		s.emit(Event{Actor: s.nodeActor(n), Kind: KindExpire, Subject: holder,
			Text: fmt.Sprintf("To node %d, %s's key is now past its TTL, so it expires at once.", n.id, holder)})
	}
}

// crash takes n down; without persistence its data is gone.
func (s *sim) crash(n *node) {
	holder := s.holder(n)
	n.up = false
	n.m.FlushAll()
	n.forgetScripts()
	text := fmt.Sprintf("Node %d crashes; it kept its data only in memory.", n.id)
	if holder != "" {
		text = fmt.Sprintf("Node %d crashes and, with no persistence, loses %s's key.", n.id, holder)
	}
	s.emit(Event{Actor: s.nodeActor(n), Kind: KindCrash, Subject: holder, Text: text})
}

// restart brings n back, empty.
func (s *sim) restart(n *node) {
	n.up = true
	text := fmt.Sprintf("Node %d restarts with an empty database: it has forgotten who held the lock.", n.id)
	if s.now >= s.p.TTL {
		text = fmt.Sprintf("Node %d restarts with an empty database, but only after a full TTL: every lock it had granted would have expired by now anyway.", n.id)
	}
	s.emit(Event{Actor: s.nodeActor(n), Kind: KindRestart, Text: text})
}
