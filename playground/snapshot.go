package playground

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// Snapshot is the state of a sandbox that survives a move between
// processes: its keys with values and TTLs, its clock offset, its cached
// scripts and its function libraries. Connection state (MULTI, WATCH) is not kept; a client in a
// transaction loses it, as after a reconnect. It encodes as JSON.
type Snapshot struct {
	// Offset is how far the learner moved the clock ahead of real time.
	Offset  time.Duration `json:"offset"`
	Keys    []KeyDump     `json:"keys"`
	Scripts []string      `json:"scripts,omitempty"`
	// Libraries holds the code of each function library, as FUNCTION
	// LOAD was given it.
	Libraries []string `json:"libraries,omitempty"`
	// Nodes, in a Manager's snapshot of a learner who used more than
	// node 1, holds the other nodes and the storage service; the rest of
	// the Snapshot is node 1.
	Nodes *NodesSnapshot `json:"nodes,omitempty"`
}

// KeyDump is one key of a Snapshot. Exactly one of the value fields is set,
// by Type.
type KeyDump struct {
	Key    string             `json:"key"`
	Type   string             `json:"type"`
	PTTLMS int64              `json:"pttl_ms"` // -1 for no TTL
	String string             `json:"string,omitempty"`
	Hash   map[string]string  `json:"hash,omitempty"`
	List   []string           `json:"list,omitempty"`
	Set    []string           `json:"set,omitempty"`
	ZSet   map[string]float64 `json:"zset,omitempty"`
}

// Snapshot returns the sandbox's state.
func (s *Sandbox) Snapshot() (Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return Snapshot{}, ErrClosed
	}
	s.tick()
	snap := Snapshot{Offset: s.offset, Scripts: s.engine.Scripts(), Libraries: s.engine.Libraries()}
	for _, k := range s.m.Keys() {
		d, err := s.dump(k)
		if err != nil {
			return Snapshot{}, err
		}
		snap.Keys = append(snap.Keys, d)
	}
	return snap, nil
}

// dump returns key k with its value and TTL. A TTL is rounded up to the
// next millisecond, so that a key about to expire is not kept forever.
func (s *Sandbox) dump(k string) (KeyDump, error) {
	d := KeyDump{Key: k, Type: s.m.Type(k), PTTLMS: -1}
	if when := s.expireAt(k); when >= 0 {
		d.PTTLMS = max(when-s.nowMS(), 1)
	}
	var err error
	switch d.Type {
	case "string":
		d.String, err = s.m.Get(k)
	case "hash":
		var fields []string
		fields, err = s.m.HKeys(k)
		d.Hash = make(map[string]string, len(fields))
		for _, f := range fields {
			d.Hash[f] = s.m.HGet(k, f)
		}
	case "list":
		d.List, err = s.m.List(k)
	case "set":
		d.Set, err = s.m.Members(k)
		sort.Strings(d.Set)
	case "zset":
		d.ZSet, err = s.m.SortedSet(k)
	default:
		err = fmt.Errorf("type %q cannot be saved", d.Type)
	}
	if err != nil {
		return KeyDump{}, fmt.Errorf("snapshot key %q: %w", k, err)
	}
	return d, nil
}

// RestoreSandbox starts a sandbox with the state of snap.
func RestoreSandbox(snap Snapshot, opts SandboxOptions) (*Sandbox, error) {
	opts.Restore = &snap
	return NewSandbox(opts)
}

func (s *Sandbox) restore(snap Snapshot) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.offset = snap.Offset
	s.tick()
	for _, d := range snap.Keys {
		var err error
		switch d.Type {
		case "string":
			err = s.m.Set(d.Key, d.String)
		case "hash":
			for f, v := range d.Hash {
				s.m.HSet(d.Key, f, v)
			}
		case "list":
			_, err = s.m.Push(d.Key, d.List...)
		case "set":
			_, err = s.m.SetAdd(d.Key, d.Set...)
		case "zset":
			for m, score := range d.ZSet {
				if _, err = s.m.ZAdd(d.Key, score, m); err != nil {
					break
				}
			}
		default:
			err = fmt.Errorf("unknown type %q", d.Type)
		}
		if err != nil {
			return fmt.Errorf("restore key %q: %w", d.Key, err)
		}
		if d.PTTLMS > 0 {
			s.setExpireAt(d.Key, s.nowMS()+min(d.PTTLMS, math.MaxInt64-s.nowMS()))
		}
	}
	// Libraries and scripts are compiled again, each within the caps on
	// what a script compiles into and the sandbox within
	// ScriptCacheBytes, so a restore costs what they cost when they were
	// loaded. Libraries come first, as they are never forgotten to make
	// room. One the limits refuse now (a copy saved with larger limits)
	// is left out: FCALL answers that the function is not found, EVALSHA
	// NOSCRIPT, as after the cache forgot the script.
	for _, code := range snap.Libraries {
		_, _ = s.engine.LoadLibrary(code)
	}
	for _, src := range snap.Scripts {
		_, _ = s.engine.Load(src)
	}
	s.keysBound = len(snap.Keys)
	s.measure()
	// The caller has this state already: report only what changes next.
	s.track = tracker{lastScripts: s.engine.Scripts(), lastLibraries: s.engine.Libraries(), lastOffset: s.offset}
	return nil
}

// scriptSize is the source bytes of the snapshot's scripts and
// libraries: a lower bound of what the sandbox counts for them, until it
// reports its size.
func (snap Snapshot) scriptSize() int {
	n := 0
	if snap.Nodes != nil {
		for _, o := range snap.Nodes.Others {
			n += o.Snapshot.scriptSize()
		}
	}
	for _, src := range snap.Scripts {
		n += len(src)
	}
	for _, code := range snap.Libraries {
		n += len(code)
	}
	return n
}

// dataSize is the data of the snapshot's keys, as Sandbox.keySize counts
// a key's.
func (snap Snapshot) dataSize() int {
	n := 0
	if snap.Nodes != nil {
		n += len(snap.Nodes.Storage.Data)
		for _, o := range snap.Nodes.Others {
			n += o.Snapshot.dataSize()
		}
	}
	for _, d := range snap.Keys {
		n += len(d.Key) + len(d.String)
		for f, v := range d.Hash {
			n += len(f) + len(v) + elementOverhead
		}
		for _, e := range d.List {
			n += len(e) + elementOverhead
		}
		for _, e := range d.Set {
			n += len(e) + elementOverhead
		}
		for e := range d.ZSet {
			n += len(e) + 8 + elementOverhead
		}
	}
	return n
}
