package store

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locklab/locklab/progress"
)

// flagCache keeps learners' flags as the bolt file last gave them, and
// their progress parsed from them, so that a page view costs no read
// transaction and no parse. The file is this process's alone
// (bbolt locks it), so every write passes here: add and the sweep drop
// what they change. A read that raced a write is not kept: each write
// bumps gen, and a read keeps what it read only if gen did not move while
// it read.
//
// Reads take no lock (every page a learner opens reads, on every core);
// put, forget and forgetAll hold mu, so that a put's check of gen and its
// store are one step to a write's bump of gen and its delete.
type flagCache struct {
	mu      sync.Mutex
	gen     atomic.Uint64
	entries atomic.Pointer[cacheEntries]
}

// cacheEntries is the kept learners, and how many (counted under mu).
type cacheEntries struct {
	m sync.Map // learner id → cachedFlags
	n int
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
// generation to keep a new read under. The generation is read first: a
// write after it makes a later put of this read refused.
func (fc *flagCache) get(learner string, now time.Time, fresh time.Duration) (cachedFlags, bool, uint64) {
	gen := fc.gen.Load()
	if es := fc.entries.Load(); es != nil {
		if v, ok := es.m.Load(learner); ok {
			if e := v.(cachedFlags); now.Sub(e.seen) <= fresh {
				return e, true, gen
			}
		}
	}
	return cachedFlags{}, false, gen
}

// put keeps a read made at generation gen, unless a write came since, and
// returns the entry it made of it. The flags are parsed here, once, not on
// every page view.
func (fc *flagCache) put(learner string, gen uint64, flags []string, seen time.Time) cachedFlags {
	e := cachedFlags{flags: slices.Clip(flags), progress: progress.Parse(flags), seen: seen}
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if gen != fc.gen.Load() {
		return e
	}
	es := fc.entries.Load()
	if es == nil || es.n >= maxCachedLearners {
		es = &cacheEntries{}
		fc.entries.Store(es)
	}
	if _, had := es.m.Swap(learner, e); !had {
		es.n++
	}
	return e
}

// forget drops a learner after a write to them.
func (fc *flagCache) forget(learner string) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.gen.Add(1)
	if es := fc.entries.Load(); es != nil {
		if _, had := es.m.LoadAndDelete(learner); had {
			es.n--
		}
	}
}

// forgetAll drops every learner, after a sweep.
func (fc *flagCache) forgetAll() {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.gen.Add(1)
	fc.entries.Store(nil)
}
