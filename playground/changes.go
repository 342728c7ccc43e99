package playground

import (
	"slices"
	"sort"
	"strings"
	"time"
)

// Changes is what the commands run since the previous TakeChanges did to a
// sandbox: enough for a Mirror kept in another process to follow the
// sandbox, without copying all of it after every command.
type Changes struct {
	// ClockMS is the sandbox clock when the changes were taken, in Unix
	// milliseconds; the TTLs of Keys count from it.
	ClockMS int64
	// Offset is how far the learner has moved the sandbox clock.
	Offset time.Duration
	// Reset says that the sandbox was emptied (FLUSHDB, FLUSHALL, a
	// server replaced after an internal error): Keys then holds every key
	// it has now.
	Reset bool
	// Keys are the keys written, with their values now, sorted by name.
	Keys []KeyDump
	// Deleted are the keys written that no longer exist, sorted.
	Deleted []string
	// Scripts and Libraries, when ScriptsChanged, are the whole script
	// cache and every function library now.
	ScriptsChanged bool
	Scripts        []string
	Libraries      []string
	// OffsetChanged says that Advance moved the clock.
	OffsetChanged bool
}

// Changed reports whether c has anything for a Mirror to apply.
func (c Changes) Changed() bool {
	return c.Reset || len(c.Keys) > 0 || len(c.Deleted) > 0 || c.ScriptsChanged || c.OffsetChanged
}

// tracker notes what the commands of a sandbox changed, for TakeChanges.
type tracker struct {
	all         bool                // every key may have changed
	keys        map[string]struct{} // keys written
	scripts     bool                // a scripting command ran
	lastScripts []string            // the script cache last reported
	// lastLibraries are the function libraries last reported.
	lastLibraries []string
	lastOffset    time.Duration // the clock offset last reported
}

// noteChange records what the command that just ran may have changed. The
// commands a script sends pass here too, so an EVAL adds the keys its
// redis.calls wrote.
func (s *Sandbox) noteChange(name string, cmd command, argv []string) {
	if cmd.flags&flagWrite != 0 && len(s.previews) > 0 {
		// Movable keys are not all found by cmd.keys (SORT ... STORE).
		if name == "FLUSHDB" || name == "FLUSHALL" || cmd.flags&flagMovableKeys != 0 {
			s.previews = nil
		}
		for _, k := range cmd.keys(argv) {
			delete(s.previews, k)
		}
	}
	t := &s.track
	switch {
	case name == "FLUSHDB" || name == "FLUSHALL":
		t.all, t.keys = true, nil
	case strings.HasPrefix(name, "EVAL") || name == "SCRIPT" || name == "FUNCTION":
		t.scripts = true
	case cmd.flags&flagWrite == 0:
		return
	case !t.all:
		if t.keys == nil {
			t.keys = map[string]struct{}{}
		}
		for _, k := range cmd.keys(argv) {
			t.keys[k] = struct{}{}
		}
		// Past the key limit, a copy of everything is as cheap.
		if len(t.keys) > s.limits.MaxKeys {
			t.all, t.keys = true, nil
		}
	}
	s.writes++
}

// TakeChanges returns what changed since the previous call, or since the
// sandbox was started or restored, and starts noting afresh. It is cheap
// when little changed: it reads only the keys written. A caller that
// keeps a Mirror calls it after every command, under the same lock as the
// command, so that changes come out in the order they were made.
func (s *Sandbox) TakeChanges() (Changes, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return Changes{}, ErrClosed
	}
	// No tick: miniredis is where the command left it, and TTLs count
	// from there; a key that expired since is the Mirror's to drop.
	t := &s.track
	c := Changes{ClockMS: s.ticked.UnixMilli(), Offset: s.offset, Reset: t.all, OffsetChanged: s.offset != t.lastOffset}
	var keys []string
	if t.all {
		keys = s.m.Keys()
	} else {
		for k := range t.keys {
			keys = append(keys, k)
		}
		sort.Strings(keys)
	}
	for _, k := range keys {
		if !s.m.Exists(k) {
			c.Deleted = append(c.Deleted, k)
			continue
		}
		d, err := s.dump(k)
		if err != nil {
			return Changes{}, err
		}
		c.Keys = append(c.Keys, d)
	}
	if t.scripts {
		// The cache and the libraries keep their strings, so unchanged
		// ones compare pointer by pointer.
		scripts, libs := s.engine.Scripts(), s.engine.Libraries()
		if !slices.Equal(scripts, t.lastScripts) || !slices.Equal(libs, t.lastLibraries) {
			c.ScriptsChanged, c.Scripts, c.Libraries = true, scripts, libs
			t.lastScripts, t.lastLibraries = scripts, libs
		}
	}
	t.all, t.keys, t.scripts, t.lastOffset = false, nil, false, s.offset
	return c, nil
}

// A Mirror is a copy of a sandbox's state that follows its Changes, so that
// a process that does not run the sandbox can start it again elsewhere
// (Snapshot, then RestoreSandbox) as it was after the last change applied.
// TTLs are kept as times on the sandbox clock, so that a key expires in the
// copy when it would have in the sandbox. A Mirror is not safe for
// concurrent use.
type Mirror struct {
	offset    time.Duration
	keys      map[string]mirrored
	scripts   []string
	libraries []string
}

type mirrored struct {
	dump     KeyDump
	expireMS int64 // on the sandbox clock, Unix milliseconds; 0 for no TTL
	// preview is the value as the key inspector shows it, once Keys has
	// rendered it; "" before.
	preview string
}

// Apply brings m up to date with c. Changes must be applied in the order
// TakeChanges returned them.
func (m *Mirror) Apply(c Changes) {
	m.offset = c.Offset
	if c.Reset || m.keys == nil {
		m.keys = make(map[string]mirrored, len(c.Keys))
	}
	for _, d := range c.Keys {
		k := mirrored{dump: d}
		if d.PTTLMS > 0 {
			k.expireMS = c.ClockMS + d.PTTLMS
		}
		k.dump.PTTLMS = -1
		m.keys[d.Key] = k
	}
	for _, k := range c.Deleted {
		delete(m.keys, k)
	}
	if c.ScriptsChanged {
		m.scripts, m.libraries = c.Scripts, c.Libraries
	}
}

// Keys lists the keys of the sandbox as Sandbox.Keys would when its
// clock, before the learner's offset, reads now: sorted, without the keys
// whose TTL has run out, each value rendered once for as long as it stays
// the same. So a process that keeps a Mirror shows the key inspector
// without asking the sandbox.
func (m *Mirror) Keys(now time.Time) []KeyInfo {
	clock := now.Add(m.offset).UnixMilli()
	names := make([]string, 0, len(m.keys))
	for k, v := range m.keys {
		if v.expireMS == 0 || v.expireMS > clock {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	out := make([]KeyInfo, 0, len(names))
	for _, k := range names {
		v := m.keys[k]
		if v.preview == "" {
			v.preview = shorten(renderDump(v.dump), valueWidth)
			m.keys[k] = v
		}
		ki := KeyInfo{Key: shorten(k, keyWidth), Type: v.dump.Type, Value: v.preview, PTTLMS: -1}
		if v.expireMS != 0 {
			ki.PTTLMS = v.expireMS - clock
		}
		out = append(out, ki)
	}
	return out
}

// Offset returns how far the learner has moved the sandbox clock.
func (m *Mirror) Offset() time.Duration { return m.offset }

// Len returns the number of keys in m, expired ones included.
func (m *Mirror) Len() int { return len(m.keys) }

// Snapshot returns the state of the sandbox when its clock, before the
// learner's offset, reads now: keys whose TTL has run out are left out,
// and the others keep the time they have left.
func (m *Mirror) Snapshot(now time.Time) Snapshot {
	clock := now.Add(m.offset).UnixMilli()
	snap := Snapshot{Offset: m.offset, Scripts: m.scripts, Libraries: m.libraries, Keys: make([]KeyDump, 0, len(m.keys))}
	for _, k := range m.keys {
		d := k.dump
		if k.expireMS != 0 {
			if d.PTTLMS = k.expireMS - clock; d.PTTLMS <= 0 {
				continue
			}
		}
		snap.Keys = append(snap.Keys, d)
	}
	sort.Slice(snap.Keys, func(i, j int) bool { return snap.Keys[i].Key < snap.Keys[j].Key })
	return snap
}
