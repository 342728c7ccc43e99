package limit

import (
	"sync"
	"time"
)

// Streams counts the long-lived requests a server holds open, such as
// event streams, per learner, per address and in all, and admits a new one
// only while each count is under its cap. A stream holds a connection, a
// goroutine and the work of its checks for as long as the client keeps it,
// so a learner who opens a thousand of them costs the server a thousand
// times one; past the cap, the newest is refused and the streams already
// open, whoever holds them, are left alone.
//
// The counts are this process's own, not shared through the store: what
// a stream costs (a descriptor, memory, a goroutine) is the process's. A
// Streams holds an entry per learner and per address with a stream open,
// so at most 2×Total entries. It is safe for concurrent use.
type Streams struct {
	mu       sync.Mutex
	caps     StreamCaps
	learners map[string]int
	addrs    map[string]int
	total    int
}

// StreamCaps size a Streams. Zero fields take their defaults.
type StreamCaps struct {
	PerLearner int // streams one learner may hold; default DefaultStreamsPerLearner
	PerAddress int // streams one client address may hold; default DefaultStreamsPerAddress
	Total      int // streams in all; default DefaultStreams
}

// The default stream caps: a learner has one page with a stream open, a
// few with tabs; a few dozen learners share an address at a school or a
// company behind one NAT (more of them fall back to asking every few
// seconds, which the pages do when a stream is refused); a workshop has
// at most 500 participants.
const (
	DefaultStreamsPerLearner = 4
	DefaultStreamsPerAddress = 32
	DefaultStreams           = 1000
)

// streamWait is the Wait of a refused stream: streams last minutes, so
// there is no point in trying again at once; the page asks every few
// seconds in the meantime.
const streamWait = 30 * time.Second

// NewStreams returns a Streams with nothing open.
func NewStreams(caps StreamCaps) *Streams {
	if caps.PerLearner <= 0 {
		caps.PerLearner = DefaultStreamsPerLearner
	}
	if caps.PerAddress <= 0 {
		caps.PerAddress = DefaultStreamsPerAddress
	}
	if caps.Total <= 0 {
		caps.Total = DefaultStreams
	}
	return &Streams{caps: caps, learners: map[string]int{}, addrs: map[string]int{}}
}

// Caps returns the caps s holds streams to, with the defaults filled in.
func (s *Streams) Caps() StreamCaps { return s.caps }

// Open admits a stream of learner ("" for none: only the address and
// total caps apply) from addr. When the Decision allows it, the caller
// must call done once the stream has ended; done may be called more than
// once. A refusal names the cap ("streams_per_learner",
// "streams_per_address" or "streams") and counts nothing; its done does
// nothing.
func (s *Streams) Open(learner, addr string) (done func(), d Decision) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case learner != "" && s.learners[learner] >= s.caps.PerLearner:
		return func() {}, Decision{Limit: "streams_per_learner", Wait: streamWait}
	case s.addrs[addr] >= s.caps.PerAddress:
		return func() {}, Decision{Limit: "streams_per_address", Wait: streamWait}
	case s.total >= s.caps.Total:
		return func() {}, Decision{Limit: "streams", Wait: streamWait}
	}
	if learner != "" {
		s.learners[learner]++
	}
	s.addrs[addr]++
	s.total++
	var once sync.Once
	return func() { once.Do(func() { s.close(learner, addr) }) }, Decision{}
}

// close counts one stream of learner from addr less.
func (s *Streams) close(learner, addr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if learner != "" {
		decrement(s.learners, learner)
	}
	decrement(s.addrs, addr)
	s.total--
}

// Count reports how many streams are open: of learner, from addr, and in
// all.
func (s *Streams) Count(learner, addr string) (ofLearner, ofAddr, total int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.learners[learner], s.addrs[addr], s.total
}

// decrement counts key one less in m, dropping it at zero so that m holds
// only keys with something open.
func decrement(m map[string]int, key string) {
	if m[key] <= 1 {
		delete(m, key)
		return
	}
	m[key]--
}
