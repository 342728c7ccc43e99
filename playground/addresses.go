package playground

import (
	"container/list"
	"context"
	"time"
)

// The cap of live sandboxes per client address (Options.MaxPerAddress):
// each address keeps its sessions in order of use, and a new one pushes
// out the address's own least recently used.

// setAddrLocked notes that s was just used from addr, dropping the
// address's least recently used sandbox if s is new to it and it is at
// its cap, and appends what it dropped to toClose. An empty addr
// changes nothing.
func (m *Manager) setAddrLocked(s *session, addr string, now time.Time, toClose []*session) []*session {
	if addr == "" {
		return toClose
	}
	if s.addr == addr {
		m.byAddr[addr].MoveToFront(s.addrElem)
		return toClose
	}
	m.unlinkAddrLocked(s)
	l := m.byAddr[addr]
	if l == nil {
		l = list.New()
		m.byAddr[addr] = l
	}
	for l.Len() >= m.opts.MaxPerAddress {
		toClose = append(toClose, m.dropLocked(l.Back().Value.(*session), now, addressNotice))
	}
	s.addr, s.addrElem = addr, l.PushFront(s)
	return toClose
}

func (m *Manager) unlinkAddrLocked(s *session) {
	if s.addrElem == nil {
		return
	}
	l := m.byAddr[s.addr]
	l.Remove(s.addrElem)
	if l.Len() == 0 {
		delete(m.byAddr, s.addr)
	}
	s.addr, s.addrElem = "", nil
}

// addressKey is the context key of WithAddress.
type addressKey struct{}

// WithAddress returns a context that tells Manager.Exec the learner's
// client address, so that a sandbox counts towards Options.MaxPerAddress.
// The web layer knows the address; the playground only compares it.
func WithAddress(ctx context.Context, addr string) context.Context {
	return context.WithValue(ctx, addressKey{}, addr)
}
