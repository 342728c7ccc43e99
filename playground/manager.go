package playground

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/locklab/locklab/playground/script"
)

// Box is what the Manager needs of a sandbox. *Sandbox runs in process; a
// later Box can proxy to a sandbox in a worker process and keep its
// Snapshot to restore it.
type Box interface {
	Exec(ctx context.Context, client Client, line string) (Result, error)
	Advance(d time.Duration) (time.Time, error)
	Now() time.Time
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
	// Follow, when set, is where the Manager shares learners' sandboxes
	// with the other replicas of the server, so that a learner's sandbox
	// follows them from one replica to another; see SnapshotStore.
	Follow SnapshotStore
	// Logger gets the failures of Follow, as warnings; default none.
	Logger *slog.Logger
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
	dropped  map[string]dropped       // learners to tell about a reset
	scripts  *script.Cache            // compiled scripts, shared by all sandboxes
	closed   bool

	followWarn followWarn
}

type session struct {
	learner string
	// box is written under both Manager.mu and mu, so either lock is
	// enough to read it. Only follow.go replaces it, with Follow set.
	box      Box
	lastUsed time.Time

	// With Follow set, mu serializes the learner's calls and guards
	// what follows.
	mu      sync.Mutex
	version string // of the shared copy box matches; "" if none
	writes  uint64 // box.Writes() when box matched that copy
	unsaved bool   // a save failed: box has changes the copy lacks
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
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.Limits = opts.Limits.withDefaults()
	return &Manager{
		opts:     opts,
		sessions: map[string]*list.Element{},
		lru:      list.New(),
		dropped:  map[string]dropped{},
		scripts:  script.NewCache(0),
	}
}

// Exec runs a line typed by client in the learner's sandbox, creating the
// sandbox on first use. Errors are those of Sandbox.Exec, and ErrClosed.
func (m *Manager) Exec(ctx context.Context, learner string, client Client, line string) (Result, error) {
	if _, err := clientIndex(client); err != nil {
		return Result{}, err
	}
	for attempt := 0; ; attempt++ {
		s, notice, err := m.get(learner, true)
		if err != nil {
			return Result{}, err
		}
		var res Result
		moved, err := m.use(ctx, s, func(box Box) (err error) {
			res, err = box.Exec(ctx, client, line)
			return err
		})
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
// gives the learner a new one.
func (m *Manager) retry(err error, attempt int) bool {
	if !errors.Is(err, ErrClosed) || attempt >= 3 {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return !m.closed
}

// Reset gives the learner a fresh sandbox.
func (m *Manager) Reset(learner string) error {
	m.mu.Lock()
	old := m.removeLocked(learner)
	delete(m.dropped, learner)
	m.mu.Unlock()
	if old != nil {
		old.Close()
	}
	s, _, err := m.get(learner, true)
	if err != nil || m.opts.Follow == nil {
		return err
	}
	// The other replicas must drop their copies too.
	s.mu.Lock()
	defer s.mu.Unlock()
	m.push(context.Background(), s, true)
	return nil
}

// Advance moves the learner's sandbox clock forward by d and returns it.
func (m *Manager) Advance(learner string, d time.Duration) (time.Time, error) {
	for attempt := 0; ; attempt++ {
		s, _, err := m.get(learner, true)
		if err != nil {
			return time.Time{}, err
		}
		var now time.Time
		_, err = m.use(context.Background(), s, func(box Box) (err error) {
			now, err = box.Advance(d)
			return err
		})
		if m.retry(err, attempt) {
			continue
		}
		return now, err
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
// have none; but with Follow set, a learner who has a sandbox on another
// replica gets one here, which use then restores.
func (m *Manager) find(learner string) (*session, error) {
	s, _, err := m.get(learner, false)
	if err != nil || s != nil || m.opts.Follow == nil {
		return s, err
	}
	ver, err := m.opts.Follow.Version(context.Background(), learner, m.opts.IdleTimeout)
	if err != nil {
		m.followFailed("check the shared copy of a sandbox", err)
		return nil, nil
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
	now := m.opts.Now()
	var toClose []Box
	defer func() {
		for _, b := range toClose {
			b.Close()
		}
	}()
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
		toClose = append(toClose, m.removeLocked(oldest.learner))
		m.dropped[oldest.learner] = dropped{at: now, notice: "The playground was busy, so your sandbox was reset to make room for other learners."}
	}
	box, err := m.opts.NewBox(SandboxOptions{Now: m.opts.Now, Limits: m.opts.Limits, Scripts: m.scripts, Learner: learner})
	if err != nil {
		return nil, "", fmt.Errorf("new sandbox for %q: %w", learner, err)
	}
	s = &session{learner: learner, box: box, lastUsed: now, writes: box.Writes()}
	m.sessions[learner] = m.lru.PushFront(s)
	if d, ok := m.dropped[learner]; ok {
		notice = d.notice
		delete(m.dropped, learner)
	}
	return s, notice, nil
}

func (m *Manager) idleNotice() string {
	return fmt.Sprintf("Your sandbox was idle for %s and was reset.", humanDuration(m.opts.IdleTimeout))
}

func (m *Manager) removeLocked(learner string) Box {
	e, ok := m.sessions[learner]
	if !ok {
		return nil
	}
	delete(m.sessions, learner)
	m.lru.Remove(e)
	return e.Value.(*session).box
}

// Sweep drops the sandboxes idle for IdleTimeout at now, compacts those
// idle for CompactAfter, and forgets reset notices older than a day. The
// server calls it periodically; it returns how many sandboxes it dropped.
func (m *Manager) Sweep(now time.Time) int {
	var drop, compact []Box
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
	for _, b := range drop {
		b.Close()
	}
	for _, b := range compact {
		b.Compact()
	}
	return len(drop)
}

// Close drops every sandbox; later calls return ErrClosed.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	var boxes []Box
	for e := m.lru.Front(); e != nil; e = e.Next() {
		boxes = append(boxes, e.Value.(*session).box)
	}
	m.sessions = map[string]*list.Element{}
	m.lru.Init()
	m.mu.Unlock()
	for _, b := range boxes {
		b.Close()
	}
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
