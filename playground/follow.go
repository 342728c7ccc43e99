package playground

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"time"
)

// SandboxCopies keeps a copy of each learner's sandbox where every
// replica of the server can read it, so that the sandbox follows the
// learner when a load balancer sends their next request to another
// replica. The copies are opaque bytes with a version; a version changes
// with every Save and is never reused for a learner. A Manager with
// Options.SandboxCopies set uses it as follows: before it runs a
// learner's command, it compares the version of its own sandbox with the
// store's (Version, one cheap round trip) and, if they differ, restores
// the sandbox from the copy (Load); after a command that may have changed
// the sandbox, it saves it (Save). The store being down never fails a
// command: the sandbox then lives on in this replica alone.
//
// The keys, scripts and clock of a sandbox follow the learner; the
// connection state of its two clients (a MULTI in progress, WATCH) stays
// in the replica where it began, and is lost, as after a reconnect, when
// the sandbox is restored from another replica's copy.
type SandboxCopies interface {
	// Version returns the version of the learner's copy, "" if there is
	// none, and keeps the copy for ttl more, as the learner is active.
	Version(ctx context.Context, learner string, ttl time.Duration) (string, error)
	// Load returns the learner's copy and its version; "" if there is
	// none.
	Load(ctx context.Context, learner string) (version string, data []byte, err error)
	// Save replaces the learner's copy with data, kept for ttl, and
	// returns its new version.
	Save(ctx context.Context, learner string, data []byte, ttl time.Duration) (version string, err error)
}

// savedFormat is the first byte of a saved copy, so that a replica can
// tell a copy written by a later version of the program.
const savedFormat = 1

// saved is a sandbox as SandboxCopies keeps it: the snapshot, and the
// Manager's clock when it was taken, from which a replica that restores
// it later counts how much the TTLs have run down since. Replicas' clocks
// are assumed to agree (NTP); a skew shifts the TTLs by as much.
type saved struct {
	SavedAtMS int64
	Snapshot  Snapshot
}

// encodeSaved encodes snap, taken at now, for SandboxCopies. It uses
// gob, which keeps binary values as they are, where JSON would not.
func encodeSaved(snap Snapshot, now time.Time) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte(savedFormat)
	if err := gob.NewEncoder(&buf).Encode(saved{SavedAtMS: now.UnixMilli(), Snapshot: snap}); err != nil {
		return nil, fmt.Errorf("encode sandbox copy: %w", err)
	}
	return buf.Bytes(), nil
}

// decodeSaved decodes a copy and returns its snapshot as of now: the TTLs
// shorter by the time since it was saved, the keys whose TTL ran out in
// that time left out.
func decodeSaved(data []byte, now time.Time) (Snapshot, error) {
	if len(data) == 0 || data[0] != savedFormat {
		return Snapshot{}, errors.New("decode sandbox copy: unknown format")
	}
	var s saved
	if err := gob.NewDecoder(bytes.NewReader(data[1:])).Decode(&s); err != nil {
		return Snapshot{}, fmt.Errorf("decode sandbox copy: %w", err)
	}
	return s.Snapshot.aged(now.Sub(time.UnixMilli(s.SavedAtMS))), nil
}

// aged returns snap as it is d later: every TTL shorter by d, and the
// keys whose TTL runs out in that time left out.
func (snap Snapshot) aged(d time.Duration) Snapshot {
	ms := d.Milliseconds()
	if ms <= 0 {
		return snap
	}
	keys := make([]KeyDump, 0, len(snap.Keys))
	for _, k := range snap.Keys {
		if k.PTTLMS > 0 {
			if k.PTTLMS -= ms; k.PTTLMS <= 0 {
				continue
			}
		}
		keys = append(keys, k)
	}
	snap.Keys = keys
	if snap.Nodes != nil {
		nodes := *snap.Nodes
		nodes.Others = make([]NodeSnapshot, len(snap.Nodes.Others))
		for i, o := range snap.Nodes.Others {
			nodes.Others[i] = NodeSnapshot{Node: o.Node, Snapshot: o.Snapshot.aged(d)}
		}
		snap.Nodes = &nodes
	}
	return snap
}

// maxSavedBytes bounds a saved copy: all the data and scripts a sandbox
// may hold, with room for the encoding. A sandbox whose copy would be
// larger does not follow its learner.
func maxSavedBytes(l Limits) int {
	return l.MaxDataBytes + l.ScriptCacheBytes + MaxNodes*(64*l.MaxKeys+1<<20)
}

// use runs f on the session's sandbox. With Options.SandboxCopies set, it
// does so under the session's lock: first it brings the sandbox up to date
// with the copy another replica saved, if there is a newer one (moved
// then reports that it did), and afterwards it saves the sandbox if f
// may have changed it: at once if urgent is set, else as saveSoon does.
func (m *Manager) use(ctx context.Context, s *session, urgent bool, f func(Box) error) (moved bool, err error) {
	if m.opts.SandboxCopies == nil {
		return false, f(s.box)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	moved = m.pull(ctx, s)
	err = f(s.box)
	if urgent {
		s.savedAt = time.Time{}
	}
	m.saveSoon(s)
	return moved, err
}

// saveSoon saves the session's sandbox if it may have changed: at once if
// its last save is SaveEvery old, else when it is, so that a learner
// typing fast costs one save a second, not one a command, and the last
// state is always saved. It is called with s.mu held.
//
// The trade-off: for up to SaveEvery after a command, the shared copy
// may lack its changes. A learner whose next command lands on another
// replica within that time finds their sandbox as it was before the
// unsaved commands; the deferred save then does not overwrite the copy
// the other replica saved since (see saveDue), so the sandbox stays
// consistent, one second back in time, rather than forking.
func (m *Manager) saveSoon(s *session) {
	if !s.unsaved && s.box.Writes() == s.writes {
		return
	}
	now := m.opts.Now()
	due := s.savedAt.Add(m.opts.SaveEvery)
	if !now.Before(due) {
		if s.later != nil {
			s.later()
			s.later = nil
		}
		m.push(context.Background(), s, false)
		s.savedAt = now
		return
	}
	if s.later == nil {
		s.later = m.opts.AfterFunc(due.Sub(now), func() { m.saveDue(s) })
	}
}

// saveDue is the deferred save of saveSoon.
func (m *Manager) saveDue(s *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.later == nil {
		return // saved or cancelled meanwhile
	}
	s.later = nil
	if !s.unsaved && s.box.Writes() == s.writes {
		return
	}
	// The learner may have moved on to another replica, which saved a
	// newer copy: theirs wins; the changes here are lost.
	ver, err := m.opts.SandboxCopies.Version(context.Background(), s.learner, m.opts.IdleTimeout)
	if err == nil && ver != s.version {
		s.writes, s.unsaved = s.box.Writes(), false
		return
	}
	m.push(context.Background(), s, false)
	s.savedAt = m.opts.Now()
}

// saveNow does at once the deferred save of a session, if one is due, as
// its sandbox is about to be closed.
func (m *Manager) saveNow(s *session) {
	if m.opts.SandboxCopies == nil {
		return
	}
	s.mu.Lock()
	pending := s.later != nil
	s.mu.Unlock()
	if pending {
		m.saveDue(s)
	}
}

// cancelSave drops the deferred save of a session, if any.
func (m *Manager) cancelSave(s *session) {
	if m.opts.SandboxCopies == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.later != nil {
		s.later()
		s.later = nil
	}
}

// pull replaces the session's sandbox with the learner's saved copy if
// that copy is not the one the sandbox matches, and reports whether it
// did. It is called with s.mu held.
func (m *Manager) pull(ctx context.Context, s *session) bool {
	ver, err := m.opts.SandboxCopies.Version(ctx, s.learner, m.opts.IdleTimeout)
	if err != nil {
		m.followFailed("check the shared copy of a sandbox", err)
		return false
	}
	if ver == "" || ver == s.version {
		return false
	}
	ver, data, err := m.opts.SandboxCopies.Load(ctx, s.learner)
	if err != nil {
		m.followFailed("load the shared copy of a sandbox", err)
		return false
	}
	if ver == "" || ver == s.version {
		return false
	}
	if max := maxSavedBytes(m.opts.Limits); len(data) > max {
		m.followFailed("load the shared copy of a sandbox", fmt.Errorf("%d bytes, more than %d", len(data), max))
		return false
	}
	snap, err := decodeSaved(data, m.opts.Now())
	if err != nil {
		m.followFailed("load the shared copy of a sandbox", err)
		return false
	}
	box, err := m.opts.NewBox(SandboxOptions{Now: m.opts.Now, Limits: m.opts.Limits, Scripts: m.scripts, Learner: s.learner, Restore: &snap})
	if err != nil {
		m.followFailed("restore the shared copy of a sandbox", err)
		return false
	}
	m.mu.Lock()
	e, ok := m.sessions[s.learner]
	current := ok && e.Value.(*session) == s
	old := s.box
	if current {
		s.box = box
		// Until its next command reports its size.
		m.setSizeLocked(s, snap.dataSize()+snap.scriptSize())
	}
	m.mu.Unlock()
	if !current {
		// Reset, Sweep or Close took the session meanwhile; the caller
		// finds its sandbox closed and tries again.
		box.Close()
		return false
	}
	old.Close()
	s.version, s.writes, s.unsaved = ver, box.Writes(), false
	return true
}

// push saves the session's sandbox if it may have changed since it was
// last saved or restored, or in any case if force is set. It is called
// with s.mu held.
func (m *Manager) push(ctx context.Context, s *session, force bool) {
	writes := s.box.Writes()
	if !force && !s.unsaved && writes == s.writes {
		return
	}
	now := m.opts.Now()
	snap, err := s.box.Snapshot()
	if errors.Is(err, ErrClosed) {
		return // the session is gone; so is what there was to save
	}
	var data []byte
	if err == nil {
		data, err = encodeSaved(snap, now)
	}
	if max := maxSavedBytes(m.opts.Limits); err == nil && len(data) > max {
		err = fmt.Errorf("%d bytes, more than %d", len(data), max)
	}
	if err != nil {
		// Not worth trying again until the sandbox changes.
		s.writes, s.unsaved = writes, false
		m.followFailed("save the shared copy of a sandbox", err)
		return
	}
	// The learner's command has run: save even if they went away.
	ver, err := m.opts.SandboxCopies.Save(context.WithoutCancel(ctx), s.learner, data, m.opts.IdleTimeout)
	if err != nil {
		s.writes, s.unsaved = writes, true
		m.followFailed("save the shared copy of a sandbox", err)
		return
	}
	s.version, s.writes, s.unsaved = ver, writes, false
}

// followFailed logs a failure of the sandbox copies as a warning: the
// command goes on with the sandbox of this replica. A SandboxCopies that
// keeps failing, such as a Redis that is down, is logged once a minute
// per operation, with a count of the failures not logged.
func (m *Manager) followFailed(op string, err error) {
	m.followWarns.Warn("playground: "+op+"; the sandbox is served from this replica", "error", err)
}
