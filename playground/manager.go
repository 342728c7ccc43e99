package playground

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/locklab/locklab/internal/faillog"
	"github.com/locklab/locklab/luaredis"
)

// Box is what the Manager needs of a sandbox. *Sandbox runs in process;
// the Boxes of package worker's Supervisor proxy to a sandbox in a worker
// process and keep a Mirror of it, to restore it if its worker dies.
type Box interface {
	// ExecWithin runs a line as Sandbox.ExecWithin does: writes that would
	// leave more than allow bytes of data are refused. size bounds the data
	// after the line; it is -1 if the sandbox could not tell, as when its
	// worker died, which leaves the sandbox as it was.
	ExecWithin(ctx context.Context, client Client, line string, allow int) (res Result, size int, err error)
	// Advance moves the sandbox clock and says which keys expired, in
	// one call: a sandbox in another process answers it in one round trip.
	Advance(d time.Duration) (Advanced, error)
	Now() time.Time
	// Keys lists the keys as the key inspector shows them. A sandbox in
	// another process answers from the copy it keeps, without asking it.
	Keys() ([]KeyInfo, error)
	Snapshot() (Snapshot, error)
	// Writes returns a count that grows whenever the sandbox's state
	// may have changed, as Sandbox.Writes does.
	Writes() uint64
	// Compact frees what an idle sandbox can rebuild later.
	Compact()
	Close()
}

// Options configure a Manager. Zero fields take their defaults.
type Options struct {
	// IdleTimeout is how long a sandbox lives without commands; default
	// 30 minutes.
	IdleTimeout time.Duration
	// CompactAfter is how long a sandbox idles before Sweep compacts it;
	// default 1 minute.
	CompactAfter time.Duration
	// MaxSandboxes caps the live sandboxes; at the cap, the longest idle
	// one is dropped to make room. Default 10,000.
	MaxSandboxes int
	// Now is the clock of idle times and of the sandbox clocks; default
	// time.Now.
	Now func() time.Time
	// Limits bound each sandbox.
	Limits Limits
	// NewBox starts a sandbox; default NewSandbox in process.
	NewBox func(SandboxOptions) (Box, error)
	// SandboxCopies, when set, is where the Manager shares learners'
	// sandboxes with the other replicas of the server, so that a
	// learner's sandbox follows them from one replica to another; see
	// SandboxCopies.
	SandboxCopies SandboxCopies
	// Logger gets the failures of SandboxCopies, as warnings; default none.
	Logger *slog.Logger

	// MaxDataBytes is the budget of data of all sandboxes together,
	// counted as Limits.MaxDataBytes counts one sandbox's. Before it is
	// reached, the least recently used idle sandboxes that hold data are
	// dropped to make room; when no idle ones are left, writes that would
	// pass it are refused with ErrLimit. Default MaxSandboxes sandboxes
	// at their limit, so no budget beyond that.
	MaxDataBytes int
	// ActiveFor is how long after a learner's last command their sandbox
	// counts as active: it is not dropped for the data budget while an
	// idle one holds data. Default 2 minutes.
	ActiveFor time.Duration
	// MaxPerAddress caps the live sandboxes of the learners at one client
	// address (see WithAddress); at the cap, the address's least recently
	// used sandbox is dropped for a new one. Default 50.
	MaxPerAddress int
}

// Manager keeps one sandbox per learner: created on first use, dropped
// after IdleTimeout or when the cap needs room. A learner whose sandbox was
// dropped is told so once, by Result.Notice on their next command. Its
// methods are safe for concurrent use; a learner's commands run one at a
// time, different learners' in parallel.
type Manager struct {
	opts Options

	mu       sync.Mutex
	sessions map[string]*list.Element // of *session
	lru      *list.List               // front: most recently used
	// withData has the sessions whose size is not 0, most recently used
	// first: where room for data is found.
	withData *list.List
	byAddr   map[string]*list.List // the sessions of each address, as lru
	data     int                   // the sizes of all sessions
	reserved int                   // the data the calls in flight may add
	dropped  map[string]dropped    // learners to tell about a reset
	scripts  *luaredis.Cache       // compiled scripts, shared by all sandboxes
	closed   bool

	// followWarns logs the failures of SandboxCopies, each kind at most
	// once a minute.
	followWarns *faillog.Log
}

type session struct {
	learner string
	// box is written under both Manager.mu and mu, so either lock is
	// enough to read it. Only follow.go replaces it, with SandboxCopies
	// set.
	box      Box
	lastUsed time.Time

	// Under Manager.mu: the sandbox's data as it last reported it, the
	// data its calls in flight may add, how many calls are in flight, and
	// its client address; the elements are in Manager.withData and
	// Manager.byAddr. gone is set when the session is removed.
	size, reserved, running int
	addr                    string
	dataElem, addrElem      *list.Element
	gone                    bool

	// With SandboxCopies set, mu serializes the learner's calls and guards
	// what follows.
	mu      sync.Mutex
	version string // of the shared copy box matches; "" if none
	writes  uint64 // box.Writes() when box matched that copy
	unsaved bool   // there is no copy: box has what the store lacks
	stale   bool   // a call failed to reach the store: box may be ahead of the copy
	moving  bool   // the last call found another replica's newer copy (use)
}

type dropped struct {
	at     time.Time
	notice string
}

// NewManager returns a Manager with opts.
func NewManager(opts Options) *Manager {
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = 30 * time.Minute
	}
	if opts.CompactAfter <= 0 {
		opts.CompactAfter = time.Minute
	}
	if opts.MaxSandboxes <= 0 {
		opts.MaxSandboxes = 10_000
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.NewBox == nil {
		opts.NewBox = func(o SandboxOptions) (Box, error) { return NewSandbox(o) }
	}
	// A learner's sandbox is a set of nodes, each a box of NewBox's.
	scripts := luaredis.NewCache(0)
	opts.Limits = opts.Limits.withDefaults()
	cfg := &nodeConfig{newBox: opts.NewBox, now: opts.Now, limits: opts.Limits, scripts: scripts}
	opts.NewBox = func(o SandboxOptions) (Box, error) { return newNodeSet(cfg, o.Learner, o.Restore) }
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.ActiveFor <= 0 {
		opts.ActiveFor = 2 * time.Minute
	}
	if opts.MaxPerAddress <= 0 {
		opts.MaxPerAddress = 50
	}
	opts.Limits = opts.Limits.withDefaults()
	if opts.MaxDataBytes <= 0 {
		opts.MaxDataBytes = opts.MaxSandboxes * opts.Limits.MaxDataBytes
	}
	return &Manager{
		opts:     opts,
		sessions: map[string]*list.Element{},
		lru:      list.New(),
		withData: list.New(),
		byAddr:   map[string]*list.List{},
		dropped:  map[string]dropped{},
		scripts:  scripts,
		// The sandboxes' clock, so that a test's fake clock spaces the
		// warnings too.
		followWarns: faillog.New(opts.Logger, opts.Now),
	}
}

// Exec runs a line typed by client in the learner's sandbox, creating the
// sandbox on first use. Errors are those of Sandbox.Exec, and ErrClosed.
// The learner's client address, if ctx has one (WithAddress), counts
// their sandbox towards Options.MaxPerAddress.
func (m *Manager) Exec(ctx context.Context, learner string, client Client, line string) (Result, error) {
	if _, err := clientIndex(client); err != nil {
		return Result{}, err
	}
	addr, _ := ctx.Value(addressKey{}).(string)
	var notice string // kept across attempts: a notice is given once
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return Result{}, err // the caller gave up: see use
		}
		s, n, err := m.getFrom(learner, true, addr)
		if err != nil {
			return Result{}, err
		}
		if n != "" {
			notice = n
		}
		allow, reserved := m.grant(s)
		if allow < 0 {
			// Dropped since getFrom (the cap, Sweep): its box is about
			// to close, so the line goes to a new sandbox instead of
			// running with no room.
			m.settle(s, reserved, -1)
			if m.retry(ErrClosed, attempt) {
				continue
			}
			return Result{}, ErrClosed
		}
		var res Result
		size := -1
		// A line run again on another replica's newer copy (see use) is
		// charged for every run.
		var scripts, run time.Duration
		var stopped bool
		moved, err := m.use(ctx, s, func(box Box) (err error) {
			res, size, err = box.ExecWithin(ctx, client, line, allow)
			scripts, run, stopped = scripts+res.ScriptTime, run+res.RunTime, stopped || res.Stopped
			res.ScriptTime, res.RunTime, res.Stopped = scripts, run, stopped
			// In the same turn, so that with SandboxCopies it costs no
			// second look at the shared copy; an extra, without which
			// the reply stands.
			res.Keys, _ = box.Keys()
			return err
		})
		m.settle(s, reserved, size)
		if m.retry(err, attempt) {
			continue
		}
		// A sandbox dropped here but restored from another replica's
		// copy was not reset.
		if notice != "" && !moved {
			res.Notice = notice
		}
		return res, err
	}
}

// retry reports whether a call should be made again: the sandbox was
// dropped by Sweep or the cap between get and the call, and the next get
// gives the learner a new one. At the cap, with more learners than
// sandboxes all busy, a new sandbox can be dropped again before it is
// used; maxRetries bounds the loop, far above what a busy server sees.
func (m *Manager) retry(err error, attempt int) bool {
	if !errors.Is(err, ErrClosed) || attempt >= maxRetries {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return !m.closed
}

// maxRetries is how many times a call is made again on a new sandbox.
const maxRetries = 8

// Reset gives the learner a fresh sandbox.
func (m *Manager) Reset(learner string) error {
	m.mu.Lock()
	old := m.removeLocked(learner)
	delete(m.dropped, learner)
	m.mu.Unlock()
	if old != nil {
		old.box.Close()
	}
	s, _, err := m.get(learner, true)
	if err != nil || m.opts.SandboxCopies == nil {
		return err
	}
	// The other replicas must drop their copies too: the fresh sandbox
	// replaces whatever copy there is now.
	s.mu.Lock()
	defer s.mu.Unlock()
	for range maxConflicts {
		ver, err := m.opts.SandboxCopies.Version(context.Background(), learner, m.opts.IdleTimeout)
		if err != nil {
			// The reset did not reach the other replicas: the learner's
			// next call starts from the copy they share, as before it.
			s.stale = true
			m.followFailed("check the shared copy of a sandbox", err)
			return ErrStoreDown
		}
		s.version = ver
		switch m.push(context.Background(), s, true) {
		case saveConflict:
			continue
		case saveUnreachable:
			return ErrStoreDown
		}
		return nil
	}
	return ErrBusy
}

// Advance moves the learner's sandbox clock forward by d and returns the
// clock after it with the keys that expired in it.
func (m *Manager) Advance(learner string, d time.Duration) (Advanced, error) {
	for attempt := 0; ; attempt++ {
		s, _, err := m.get(learner, true)
		if err != nil {
			return Advanced{}, err
		}
		var a Advanced
		_, err = m.use(context.Background(), s, func(box Box) (err error) {
			a, err = box.Advance(d)
			return err
		})
		if m.retry(err, attempt) {
			continue
		}
		return a, err
	}
}

// Keys lists the keys of the learner's sandbox; none if it has none yet.
func (m *Manager) Keys(learner string) ([]KeyInfo, error) {
	for attempt := 0; ; attempt++ {
		s, err := m.find(learner)
		if err != nil || s == nil {
			return []KeyInfo{}, err
		}
		var keys []KeyInfo
		_, err = m.use(context.Background(), s, func(box Box) (err error) {
			keys, err = box.Keys()
			return err
		})
		if m.retry(err, attempt) {
			continue
		}
		return keys, err
	}
}

// Clock returns the learner's sandbox clock, or the manager's clock if the
// learner has no sandbox yet.
func (m *Manager) Clock(learner string) (time.Time, error) {
	for attempt := 0; ; attempt++ {
		s, err := m.find(learner)
		if err != nil {
			return time.Time{}, err
		}
		if s == nil {
			return m.opts.Now(), nil
		}
		var now time.Time
		_, err = m.use(context.Background(), s, func(box Box) error {
			now = box.Now()
			return nil
		})
		if m.retry(err, attempt) {
			continue
		}
		return now, err
	}
}

// find returns the learner's session without creating one, nil if they
// have none; but with SandboxCopies set, a learner who has a sandbox on
// another replica gets one here, which use then restores.
func (m *Manager) find(learner string) (*session, error) {
	s, _, err := m.get(learner, false)
	if err != nil || s != nil || m.opts.SandboxCopies == nil {
		return s, err
	}
	ver, err := m.opts.SandboxCopies.Version(context.Background(), learner, m.opts.IdleTimeout)
	if err != nil {
		m.followFailed("check the shared copy of a sandbox", err)
		return nil, ErrStoreDown
	}
	if ver == "" {
		return nil, nil
	}
	s, _, err = m.get(learner, true)
	return s, err
}

// Len returns the number of live sandboxes.
func (m *Manager) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sessions)
}

// ScriptTimeouts returns how many scripts were stopped at their deadline.
func (m *Manager) ScriptTimeouts() int64 { return m.scripts.Timeouts() }

// get returns the learner's session, dropping it first if it has been
// idle too long, and creating one if create is set. notice is set once
// for a learner whose sandbox was dropped.
func (m *Manager) get(learner string, create bool) (s *session, notice string, err error) {
	return m.getFrom(learner, create, "")
}

// Notices of sandboxes dropped to make room.
const (
	busyNotice    = "The playground was busy, so your sandbox was reset to make room for other learners."
	fullNotice    = "The playground was full, so your sandbox, idle for a while, was reset to make room for other learners' data."
	addressNotice = "Many sandboxes were in use from your network address, so your sandbox, the least recently used of them, was reset to make room for a new one."
)

// getFrom is get for a learner at client address addr, "" if unknown: a
// session created or used with an address counts towards its cap.
func (m *Manager) getFrom(learner string, create bool, addr string) (s *session, notice string, err error) {
	now := m.opts.Now()
	var toClose []*session
	defer func() { m.closeSessions(toClose) }()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, "", ErrClosed
	}
	if e, ok := m.sessions[learner]; ok {
		s := e.Value.(*session)
		if now.Sub(s.lastUsed) < m.opts.IdleTimeout {
			if create {
				s.lastUsed = now
				m.lru.MoveToFront(e)
				if s.dataElem != nil {
					m.withData.MoveToFront(s.dataElem)
				}
				toClose = m.setAddrLocked(s, addr, now, toClose)
			}
			return s, "", nil
		}
		toClose = append(toClose, m.removeLocked(learner))
		m.dropped[learner] = dropped{at: now, notice: m.idleNotice()}
	}
	if !create {
		return nil, "", nil
	}
	for len(m.sessions) >= m.opts.MaxSandboxes {
		oldest := m.lru.Back().Value.(*session)
		toClose = append(toClose, m.dropLocked(oldest, now, busyNotice))
	}
	box, err := m.opts.NewBox(SandboxOptions{Now: m.opts.Now, Limits: m.opts.Limits, Scripts: m.scripts, Learner: learner})
	if err != nil {
		return nil, "", fmt.Errorf("new sandbox for %q: %w", learner, err)
	}
	s = &session{learner: learner, box: box, lastUsed: now, writes: box.Writes()}
	m.sessions[learner] = m.lru.PushFront(s)
	toClose = m.setAddrLocked(s, addr, now, toClose)
	if d, ok := m.dropped[learner]; ok {
		notice = d.notice
		delete(m.dropped, learner)
	}
	return s, notice, nil
}

// dropLocked removes s to make room, to be closed by the caller, and
// keeps notice for its learner.
func (m *Manager) dropLocked(s *session, now time.Time, notice string) *session {
	m.dropped[s.learner] = dropped{at: now, notice: notice}
	return m.removeLocked(s.learner)
}

// closeSessions closes the boxes of removed sessions.
func (m *Manager) closeSessions(ss []*session) {
	for _, s := range ss {
		if s == nil {
			continue
		}
		s.box.Close()
	}
}

func (m *Manager) idleNotice() string {
	return fmt.Sprintf("Your sandbox was idle for %s and was reset.", humanDuration(m.opts.IdleTimeout))
}

// removeLocked removes the learner's session, if any, and returns it, for
// the caller to close with closeSessions once m.mu is released.
func (m *Manager) removeLocked(learner string) *session {
	e, ok := m.sessions[learner]
	if !ok {
		return nil
	}
	delete(m.sessions, learner)
	m.lru.Remove(e)
	s := e.Value.(*session)
	m.setSizeLocked(s, 0)
	m.reserved -= s.reserved
	s.reserved = 0
	m.unlinkAddrLocked(s)
	s.gone = true
	return s
}

// Sweep drops the sandboxes idle for IdleTimeout at now, compacts those
// idle for CompactAfter, and forgets reset notices older than a day. The
// server calls it periodically; it returns how many sandboxes it dropped.
func (m *Manager) Sweep(now time.Time) int {
	var drop []*session
	var compact []Box
	m.mu.Lock()
	for e := m.lru.Back(); e != nil; {
		s := e.Value.(*session)
		prev := e.Prev()
		idle := now.Sub(s.lastUsed)
		switch {
		case idle >= m.opts.IdleTimeout:
			drop = append(drop, m.removeLocked(s.learner))
			m.dropped[s.learner] = dropped{at: now, notice: m.idleNotice()}
		case idle >= m.opts.CompactAfter:
			compact = append(compact, s.box)
		}
		e = prev
	}
	for learner, d := range m.dropped {
		if now.Sub(d.at) > 24*time.Hour {
			delete(m.dropped, learner)
		}
	}
	// Notices are small, but bound them with the sandboxes.
	for learner := range m.dropped {
		if len(m.dropped) <= m.opts.MaxSandboxes {
			break
		}
		delete(m.dropped, learner)
	}
	m.mu.Unlock()
	m.closeSessions(drop)
	for _, b := range compact {
		b.Compact()
	}
	return len(drop)
}

// Close drops every sandbox; later calls return ErrClosed.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	var all []*session
	for e := m.lru.Front(); e != nil; e = e.Next() {
		all = append(all, e.Value.(*session))
	}
	for _, s := range all {
		m.removeLocked(s.learner)
	}
	m.mu.Unlock()
	m.closeSessions(all)
}

func humanDuration(d time.Duration) string {
	switch {
	case d%time.Hour == 0 && d >= time.Hour:
		return plural(int(d/time.Hour), "hour")
	case d%time.Minute == 0 && d >= time.Minute:
		return plural(int(d/time.Minute), "minute")
	}
	return d.String()
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}
