package store

import (
	"slices"
	"sync"
	"time"
)

// flagCache keeps learners' flags as the bolt file last gave them, and
// their progress parsed from them, so that a page view costs no read
// transaction and no parse. The file is this process's alone
// (bbolt locks it), so every write passes here: add and the sweep drop
// what they change. A read that raced a write is not kept: each write
// bumps gen, and a read keeps what it read only if gen did not move while
// it read.
type flagCache struct {
	mu      sync.Mutex
	gen     uint64
	entries map[string]cachedFlags
}

// cachedFlags is a learner's flags, the progress they say, and when the
// file says they were last seen.
type cachedFlags struct {
	flags    []string
	progress Progress
	seen     time.Time
}

// maxCachedLearners bounds the cache: at a few hundred bytes a learner,
// some 6 MB. When full it starts over.
const maxCachedLearners = 20_000

// get returns the learner's entry if it is kept and was seen within
// fresh of now (shared: callers only read its flags and progress), and the
// generation to keep a new read under.
func (fc *flagCache) get(learner string, now time.Time, fresh time.Duration) (cachedFlags, bool, uint64) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	e, ok := fc.entries[learner]
	if !ok || now.Sub(e.seen) > fresh {
		return cachedFlags{}, false, fc.gen
	}
	return e, true, fc.gen
}

// put keeps a read made at generation gen, unless a write came since, and
// returns the entry it made of it. The flags are parsed here, once, not on
// every page view.
func (fc *flagCache) put(learner string, gen uint64, flags []string, seen time.Time) cachedFlags {
	e := cachedFlags{flags: slices.Clip(flags), progress: parseFlags(flags), seen: seen}
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if gen != fc.gen {
		return e
	}
	if fc.entries == nil || len(fc.entries) >= maxCachedLearners {
		fc.entries = make(map[string]cachedFlags)
	}
	fc.entries[learner] = e
	return e
}

// forget drops a learner after a write to them.
func (fc *flagCache) forget(learner string) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.gen++
	delete(fc.entries, learner)
}

// forgetAll drops every learner, after a sweep.
func (fc *flagCache) forgetAll() {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.gen++
	fc.entries = nil
}
