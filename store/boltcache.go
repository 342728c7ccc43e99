package store

import (
	"slices"
	"sync"
	"time"
)

// flagCache keeps learners' flags as the bolt file last gave them, so that
// a page view costs no read transaction. The file is this process's alone
// (bbolt locks it), so every write passes here: add and the sweep drop
// what they change. A read that raced a write is not kept: each write
// bumps gen, and a read keeps what it read only if gen did not move while
// it read.
type flagCache struct {
	mu      sync.Mutex
	gen     uint64
	entries map[string]cachedFlags
}

// cachedFlags is a learner's flags and when the file says they were last
// seen.
type cachedFlags struct {
	flags []string
	seen  time.Time
}

// maxCachedLearners bounds the cache: at a few hundred bytes a learner,
// some 6 MB. When full it starts over.
const maxCachedLearners = 20_000

// get returns the learner's flags if they are kept and were seen within
// fresh of now (shared: callers only read them), and the generation to
// keep a new read under.
func (fc *flagCache) get(learner string, now time.Time, fresh time.Duration) ([]string, bool, uint64) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	e, ok := fc.entries[learner]
	if !ok || now.Sub(e.seen) > fresh {
		return nil, false, fc.gen
	}
	return e.flags, true, fc.gen
}

// put keeps a read made at generation gen, unless a write came since.
func (fc *flagCache) put(learner string, gen uint64, flags []string, seen time.Time) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if gen != fc.gen {
		return
	}
	if fc.entries == nil || len(fc.entries) >= maxCachedLearners {
		fc.entries = make(map[string]cachedFlags)
	}
	fc.entries[learner] = cachedFlags{flags: slices.Clone(flags), seen: seen}
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
