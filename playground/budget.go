package playground

import "time"

// The data budget of all sandboxes (Options.MaxDataBytes): each call is
// granted what its sandbox may add, the sizes the sandboxes report are
// added up, and idle sandboxes make room for active ones.

// grant reserves for a call to s the data it may add: enough to fill
// the sandbox to Limits.MaxDataBytes of data and ScriptCacheBytes of
// scripts if the budget has room, less if it
// has not or other calls hold some, none if it is full. To make room for
// a full sandbox, it first drops the least recently used idle sandboxes
// that hold data. It
// returns the allowance for the call and what it reserved, for settle;
// an allowance of -1 when s was dropped meanwhile.
func (m *Manager) grant(s *session) (allow, reserved int) {
	var toClose []*session
	defer func() { m.closeSessions(toClose) }()
	m.mu.Lock()
	defer m.mu.Unlock()
	s.running++
	if s.gone {
		return -1, 0 // dropped: the caller gets a new sandbox
	}
	want := max(m.opts.Limits.footprint()-s.size, 0)
	// Idle sandboxes are dropped to make room for data, not for scripts:
	// a line rarely loads any, and a full playground refuses them.
	// The clock is read only when room must be made: most calls fit.
	var now time.Time
	for m.data+max(m.opts.Limits.MaxDataBytes-s.size, 0) > m.opts.MaxDataBytes {
		if now.IsZero() {
			now = m.opts.Now()
		}
		victim := m.idleWithDataLocked(s, now)
		if victim == nil {
			break
		}
		toClose = append(toClose, m.dropLocked(victim, now, fullNotice))
	}
	// A call alone may take all the room there is; with others in
	// flight, an eighth of what they left and no more than a share of the
	// budget (see maxShare), so that none is starved while they cannot
	// all pass the budget together.
	free := max(m.opts.MaxDataBytes-m.data-m.reserved, 0)
	if m.reserved > 0 {
		free = min(free/8, m.maxShare())
	}
	reserved = min(want, free)
	s.reserved += reserved
	m.reserved += reserved
	return s.size + reserved, reserved
}

// maxShare is the most one call may reserve while others are in flight:
// a key at its largest, or a 512th of the budget if more. A line rarely
// grows a sandbox by more than one key can hold. Reserving a sandbox's
// whole allowance (4 MiB and its scripts) for each call, as before, gave
// the budget to the first few dozen in flight, and a busy server has
// hundreds: their writes were refused as if the playground were full
// while its sandboxes held two megabytes. With the default budget some
// 500 calls in flight each have room for a key, and some 540 for a
// kilobyte.
func (m *Manager) maxShare() int {
	return max(m.opts.MaxDataBytes/512, m.opts.Limits.MaxKeyBytes)
}

// idleWithDataLocked returns the least recently used session that holds
// data and is idle (no call in flight, none for ActiveFor), other than
// but; nil if there is none. The sessions are in order of use, so it stops
// at the first active one that has no call in flight.
func (m *Manager) idleWithDataLocked(but *session, now time.Time) *session {
	for e := m.withData.Back(); e != nil; e = e.Prev() {
		s := e.Value.(*session)
		switch {
		case s == but || s.running > 0:
			continue
		case now.Sub(s.lastUsed) < m.opts.ActiveFor:
			return nil
		}
		return s
	}
	return nil
}

// settle ends a call that grant reserved for: the reservation is
// released and the sandbox's size, if it reported one (size >= 0), is
// noted.
func (m *Manager) settle(s *session, reserved, size int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s.running--
	if s.gone {
		return // removeLocked released it all
	}
	s.reserved -= reserved
	m.reserved -= reserved
	if size >= 0 {
		m.setSizeLocked(s, size)
	}
}

func (m *Manager) setSizeLocked(s *session, size int) {
	m.data += size - s.size
	s.size = size
	switch {
	case size > 0 && s.dataElem == nil:
		s.dataElem = m.withData.PushFront(s)
	case size == 0 && s.dataElem != nil:
		m.withData.Remove(s.dataElem)
		s.dataElem = nil
	}
}

// DataBytes returns the data of all sandboxes, as they last reported it,
// and the data that the calls in flight may add to it.
func (m *Manager) DataBytes() (data, reserved int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.data, m.reserved
}
