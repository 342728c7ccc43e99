package playground

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// SandboxCopies keeps a copy of each learner's sandbox where every
// replica of the server can read it, so that the sandbox follows the
// learner when a load balancer sends their next request to another
// replica. The copies are opaque bytes with a version; a version changes
// with every Save and is never reused for a learner. A Manager with
// Options.SandboxCopies set runs a learner's command on its own sandbox,
// then, before the reply is given, saves the sandbox if the command
// changed it (Save, on condition that no other replica saved since) or
// else compares its version with the store's (Version); if another
// replica's copy is newer, it restores that copy (Load) and runs the
// command again on it (see Manager.use). A command that cannot reach the
// store is refused (ErrStoreDown) rather than answered from this replica
// alone, whose sandbox another replica may have moved past, or may move
// past unseen; the next command starts from the shared copy.
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
	// LoadNewer is Version and, if the version is neither "" nor have,
	// Load, in one step: the data is nil when the version is "" or have.
	// It keeps the copy for ttl more.
	LoadNewer(ctx context.Context, learner, have string, ttl time.Duration) (version string, data []byte, err error)
	// Save replaces the learner's copy with data, kept for ttl, and
	// returns its new version, but only if the copy's version is still
	// base ("": there is no copy); else it saves nothing and returns
	// saved false. The check and the write are one step for the store.
	Save(ctx context.Context, learner, base string, data []byte, ttl time.Duration) (version string, saved bool, err error)
}

// The first byte of a saved copy says how it is encoded, so that a
// replica can tell a copy written by another version of the program.
const (
	savedGob     = 1 // encoding/gob, as written before
	savedMsgpack = 2 // MessagePack, written now
)

// saved is a sandbox as SandboxCopies keeps it: the snapshot, and the
// Manager's clock when it was taken, from which a replica that restores
// it later counts how much the TTLs have run down since. Replicas' clocks
// are assumed to agree (NTP); a skew shifts the TTLs by as much.
type saved struct {
	SavedAtMS int64
	Snapshot  Snapshot
}

// encodeSaved encodes snap, taken at now, for SandboxCopies. It uses
// MessagePack, which keeps binary values as they are, where JSON would
// not, and costs a small copy a few microseconds, where gob spends most
// of its time describing the types again for every copy: a copy is saved
// after every write.
func encodeSaved(snap Snapshot, now time.Time) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte(savedMsgpack)
	if err := msgpack.NewEncoder(&buf).Encode(saved{SavedAtMS: now.UnixMilli(), Snapshot: snap}); err != nil {
		return nil, fmt.Errorf("encode sandbox copy: %w", err)
	}
	return buf.Bytes(), nil
}

// decodeSaved decodes a copy and returns its snapshot as of now: the TTLs
// shorter by the time since it was saved, the keys whose TTL ran out in
// that time left out. It reads copies in either encoding, so that
// replicas of the version before and this one can run side by side.
func decodeSaved(data []byte, now time.Time) (Snapshot, error) {
	var s saved
	var err error
	switch {
	case len(data) > 0 && data[0] == savedMsgpack:
		err = msgpack.Unmarshal(data[1:], &s)
	case len(data) > 0 && data[0] == savedGob:
		err = gob.NewDecoder(bytes.NewReader(data[1:])).Decode(&s)
	default:
		return Snapshot{}, errors.New("decode sandbox copy: unknown format")
	}
	if err != nil {
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
// does so under the session's lock, and makes sure f's work is that of a
// sandbox up to date with the shared copy, saved before use returns: a
// reply is never given for a change the other replicas cannot see, nor
// from a sandbox older than the copy another replica saved.
//
// It is optimistic, so that a command costs one round trip to the store
// when the learner stays on this replica. Once a call here has found
// another replica's newer copy, the next ones compare versions before f
// runs, until the copy is found current: a learner whose requests go to
// the replicas in turn then costs f once and one save a command, not f
// twice and a save thrown away. f runs on the sandbox as it is
// here. If f changed it, the sandbox is saved on condition that the copy
// is still the one the sandbox was brought up to date with, as a fencing
// token makes a storage refuse a late writer; if f changed nothing, the
// copy's version is checked instead. Either way, if another replica saved
// in between (the learner moved, or sent requests to two replicas at
// once), what f did here is thrown away, the sandbox is restored from the
// copy and f runs again on it (moved then reports that it was restored),
// up to maxConflicts times; then use returns ErrBusy. The other replica's
// change is kept and f's reply is that of a command run after it.
func (m *Manager) use(ctx context.Context, s *session, f func(Box) error) (moved bool, err error) {
	if m.opts.SandboxCopies == nil {
		return false, f(s.box)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// A caller that gave up while it waited for the sandbox (the client
	// went away, behind the learner's other requests) is not run: under
	// overload that queue is where the time goes, and a line no one will
	// see answered is work taken from learners still waiting.
	if err := ctx.Err(); err != nil {
		return false, err
	}
	for attempt := 0; ; attempt++ {
		// After a conflict, or a call that could not reach the store, the
		// sandbox is brought up to date with the copy before f runs.
		pulled := attempt > 0 || s.stale
		loaded := false // pulled already, with the versions compared
		if !pulled && s.moving {
			// The learner's requests go to other replicas too (a load
			// balancer sends them in turn): compare versions first, and
			// take a newer copy in the same round trip, so that f runs
			// once, on the newest copy, rather than here, to be thrown
			// away, and then again.
			ver, data, err := m.opts.SandboxCopies.LoadNewer(ctx, s.learner, s.version, m.opts.IdleTimeout)
			if err != nil {
				m.followFailed("check the shared copy of a sandbox", err)
				return moved, ErrStoreDown
			}
			s.moving = ver != "" && ver != s.version
			if s.moving {
				restored, err := m.restore(s, ver, data)
				if err != nil {
					return moved, err
				}
				moved, pulled, loaded = moved || restored, true, true
			}
		}
		if pulled && !loaded {
			restored, err := m.pull(ctx, s)
			if err != nil {
				return moved, err
			}
			moved = moved || restored
		}
		err = f(s.box)
		switch m.push(ctx, s, false) {
		case saveDone, saveFailed:
			s.moving = s.moving || attempt > 0
			return moved, err
		case saveUnreachable:
			return moved, ErrStoreDown
		case saveNothing:
			if pulled {
				s.moving = s.moving || attempt > 0
				return moved, err
			}
			ok, cerr := m.current(ctx, s)
			if cerr != nil {
				return moved, cerr
			}
			if ok {
				return moved, err
			}
		}
		if attempt+1 >= maxConflicts {
			return moved, ErrBusy
		}
	}
}

// maxConflicts is how many times use runs a call whose save found that
// another replica had saved first. A learner who moved costs one more;
// two requests at once from one learner may cost two.
const maxConflicts = 4

// saveResult is what push did.
type saveResult int

const (
	saveNothing     saveResult = iota // nothing to save
	saveDone                          // the copy now holds the sandbox
	saveFailed                        // the sandbox cannot be copied (too large): it lives on here
	saveUnreachable                   // the store failed: the sandbox is stale until restored
	saveConflict                      // another replica saved first: nothing saved
)

// current reports whether the session's sandbox is up to date with the
// shared copy; ErrStoreDown if the store cannot tell. It is called with
// s.mu held.
func (m *Manager) current(ctx context.Context, s *session) (bool, error) {
	ver, err := m.opts.SandboxCopies.Version(ctx, s.learner, m.opts.IdleTimeout)
	if err != nil {
		m.followFailed("check the shared copy of a sandbox", err)
		return false, ErrStoreDown
	}
	return ver == "" || ver == s.version, nil
}

// pull replaces the session's sandbox with the learner's saved copy if
// that copy is not the one the sandbox matches, or the sandbox is stale,
// and reports whether it did; ErrStoreDown if the store cannot be read.
// If there is no copy any more (it expired, or Redis lost it), the
// sandbox here is all there is: it is saved as a new copy next. A copy
// that cannot be restored here (too large, or in an unknown encoding) is
// logged and the sandbox here goes on. It is called with s.mu held.
func (m *Manager) pull(ctx context.Context, s *session) (bool, error) {
	ver, data, err := m.opts.SandboxCopies.Load(ctx, s.learner)
	if err != nil {
		m.followFailed("load the shared copy of a sandbox", err)
		return false, ErrStoreDown
	}
	return m.restore(s, ver, data)
}

// restore brings the session's sandbox up to date with the shared copy
// of version ver, which holds data, as pull does. It is called with s.mu
// held.
func (m *Manager) restore(s *session, ver string, data []byte) (bool, error) {
	stale := s.stale
	s.stale = false
	if ver == "" {
		s.version, s.unsaved = "", true
		return false, nil
	}
	if ver == s.version && !stale {
		return false, nil
	}
	if max := maxSavedBytes(m.opts.Limits); len(data) > max {
		m.followFailed("load the shared copy of a sandbox", fmt.Errorf("%d bytes, more than %d", len(data), max))
		return false, nil
	}
	snap, err := decodeSaved(data, m.opts.Now())
	if err != nil {
		m.followFailed("load the shared copy of a sandbox", err)
		return false, nil
	}
	box, err := m.opts.NewBox(SandboxOptions{Now: m.opts.Now, Limits: m.opts.Limits, Scripts: m.scripts, Learner: s.learner, Restore: &snap})
	if err != nil {
		m.followFailed("restore the shared copy of a sandbox", err)
		return false, nil
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
		return false, nil
	}
	old.Close()
	s.version, s.writes, s.unsaved = ver, box.Writes(), false
	return true, nil
}

// push saves the session's sandbox if it may have changed since it was
// last saved or restored, or in any case if force is set, on condition
// that the shared copy is still the one it was brought up to date with.
// It is called with s.mu held.
func (m *Manager) push(ctx context.Context, s *session, force bool) saveResult {
	writes := s.box.Writes()
	if !force && !s.unsaved && writes == s.writes {
		return saveNothing
	}
	now := m.opts.Now()
	snap, err := s.box.Snapshot()
	if errors.Is(err, ErrClosed) {
		return saveFailed // the session is gone; so is what there was to save
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
		return saveFailed
	}
	// The learner's command has run: save even if they went away.
	ver, saved, err := m.opts.SandboxCopies.Save(context.WithoutCancel(ctx), s.learner, s.version, data, m.opts.IdleTimeout)
	switch {
	case err != nil:
		// The line's reply is not given: the next call restores the
		// copy, whether or not this save reached it.
		s.stale = true
		m.followFailed("save the shared copy of a sandbox", err)
		return saveUnreachable
	case !saved:
		// The next pull restores the other replica's copy.
		return saveConflict
	}
	s.version, s.writes, s.unsaved = ver, writes, false
	return saveDone
}

// followFailed logs a failure of the sandbox copies as a warning. A
// SandboxCopies that keeps failing, such as a Redis that is down, is
// logged once a minute per operation, with a count of the failures not
// logged.
func (m *Manager) followFailed(op string, err error) {
	m.followWarns.Warn("playground: "+op, "error", err)
}
