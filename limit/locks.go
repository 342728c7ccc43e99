package limit

import (
	"hash/maphash"
	"sync"
)

// Locks make checking a guess and counting it one step per key (a client
// address), so that an address cannot send guesses at once and have each
// pass a check that only one should, while other addresses go on: one
// lock for every key would make a room of learners joining at once wait
// in line for each other's round trips to the store. Keys share one of a
// fixed number of locks, chosen by a hash with a seed of this process, so
// the set never grows.
type Locks struct {
	seed    maphash.Seed
	stripes [lockStripes]sync.Mutex
}

// lockStripes is how many locks the keys share.
const lockStripes = 256

// NewLocks returns a set of locks per key.
func NewLocks() *Locks { return &Locks{seed: maphash.MakeSeed()} }

// Lock locks key's lock and returns the function that unlocks it.
func (l *Locks) Lock(key string) (unlock func()) {
	mu := &l.stripes[l.index(key)]
	mu.Lock()
	return mu.Unlock
}

// index is the position of key's lock.
func (l *Locks) index(key string) uint64 { return maphash.String(l.seed, key) % lockStripes }
