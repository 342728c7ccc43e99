package race

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/locklab/locklab/sim"
)

const (
	// lockKey is the key every scenario fights over.
	lockKey = "lock:report"
	// maxEvents stops runs whose parameters would make an unreadable
	// timeline, such as a 100 ms TTL renewed for ten minutes.
	maxEvents = 1000
)

// epoch is the virtual wall-clock time at which every run starts.
func epoch() time.Time { return time.Date(2024, 1, 1, 9, 0, 0, 0, time.UTC) }

// runner is one run: a virtual clock, the Redis nodes, the clients, the
// storage, and a queue of actions ordered by virtual time. It runs on one
// goroutine; only the lock package fans out to the nodes.
type runner struct {
	p       Params
	ctx     context.Context
	start   time.Time
	now     time.Duration // virtual time since start
	nodes   []*node
	redlock bool // actors are "redis node N" rather than "redis"
	clients []*client
	names   map[string]string // lock token -> client name
	namesMu sync.Mutex        // for nameToken, called from the lock package's goroutines
	store   sim.Storage
	rng     *rand.Rand // retry delays
	q       sim.Queue
	events  []Event
	err     error

	lastGrant *client       // the client most recently granted the lock
	found     sim.Findings  // the outcomes so far, in the order they happened
	horizon   time.Duration // if set, nothing is run after this time
	failover  *failover     // the failover scenario's primary and replica
	delays    delays        // armed delay faults
}

func newSim(p Params, nodes int) *runner {
	s := &runner{
		p:       p,
		ctx:     context.Background(),
		start:   epoch(),
		redlock: nodes > 1,
		names:   map[string]string{},
		store:   sim.Storage{Fencing: p.Fencing},
		rng:     rand.New(rand.NewPCG(p.Seed, 0x10c1ab)),
	}
	for i := range nodes {
		n, err := newNode(i+1, s.clock)
		if err != nil {
			s.fail(err)
			break
		}
		s.nodes = append(s.nodes, n)
	}
	return s
}

// clock is true time in the run: the nodes add their own offsets.
func (s *runner) clock() time.Time { return s.start.Add(s.now) }

func (s *runner) close() {
	for _, n := range s.nodes {
		n.close()
	}
}

// at schedules f at virtual time t (or now, if t has passed).
func (s *runner) at(t time.Duration, f func()) { s.atFor(nil, t, f) }

// atFor schedules f at t as a step of c's work: a pause of c moves it
// later by the length of the pause. Timers (renewals, the Redlock
// validity check) have no owner; they fall due on time and a paused
// client handles them when it runs again. A step scheduled while c is
// paused waits out the rest of the pause too.
func (s *runner) atFor(c *client, t time.Duration, f func()) {
	if c == nil {
		s.q.At(t, f)
		return
	}
	if c.paused {
		t += c.pauseEnd - s.now
	}
	s.q.AtFor(c, t, f)
}

// shift moves c's queued work d later, after what is already queued for
// the same times, keeping its own order.
func (s *runner) shift(c *client, d time.Duration) { s.q.Shift(c, d) }

// run executes the queued actions in time order until none are left.
func (s *runner) run() error {
	for s.err == nil {
		a, ok := s.q.Pop(s.horizon)
		if !ok {
			break
		}
		s.advance(a.At)
		a.Do()
		if len(s.events) > maxEvents {
			return fmt.Errorf("more than %d events; use a longer TTL or a shorter work time: %w", maxEvents, ErrBadParams)
		}
	}
	return s.err
}

// fail stops the run with err.
func (s *runner) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// setNow moves virtual time to t; the nodes' clocks follow it.
func (s *runner) setNow(t time.Duration) {
	s.now = t
	s.q.SetNow(t)
}

// advance moves virtual time to t, stopping at each moment a lock key
// expires on some node to record it.
func (s *runner) advance(t time.Duration) {
	for {
		next := t + 1
		var due []*node
		for _, n := range s.nodes {
			if !n.up || !n.m.Exists(lockKey) {
				continue
			}
			ttl := n.m.TTL(lockKey)
			if ttl <= 0 {
				continue
			}
			switch at := s.now + ttl; {
			case at < next:
				next, due = at, []*node{n}
			case at == next:
				due = append(due, n)
			}
		}
		if len(due) == 0 {
			break
		}
		holders := make([]string, len(due))
		for i, n := range due {
			holders[i] = s.holder(n)
		}
		s.setNow(next)
		for i, n := range due {
			s.expired(n, holders[i])
		}
	}
	s.setNow(t)
}

// expired records that holder's key on n ran out.
func (s *runner) expired(n *node, holder string) {
	c := s.client(holder)
	text := sim.KeyExpires("Redis", holder, c != nil && c.paused)
	if len(s.nodes) > 1 {
		text = fmt.Sprintf("On node %d, the TTL of %s's key runs out and the key is deleted.", n.id, holder)
	}
	s.emit(Event{Actor: s.nodeActor(n), Kind: KindExpire, Subject: holder, Text: text})
}

// retryDelay is how long a client waits after a failed attempt: random
// around a tenth of the TTL, in whole milliseconds.
func (s *runner) retryDelay() time.Duration {
	base := s.p.TTL.Milliseconds() / 10
	return time.Duration(base/2+s.rng.Int64N(base)) * time.Millisecond
}

// emit appends e, stamped with the time and the state after it.
func (s *runner) emit(e Event) {
	for _, n := range s.nodes {
		// What a node has granted decides whether forgetting it on a
		// restart matters.
		if !n.granted && n.up && n.m.Exists(lockKey) {
			n.granted = true
		}
	}
	e.AtMS = s.now.Milliseconds()
	e.Nodes = s.nodeStates()
	if s.p.Fencing {
		e.HighestToken = s.store.Highest()
	}
	for _, c := range s.clients {
		if c.holding {
			e.Holding = append(e.Holding, c.name)
		}
	}
	s.events = append(s.events, e)
}

// outcome ties o to the event just emitted, unless o already happened.
func (s *runner) outcome(o Outcome, text string) {
	i := len(s.events) - 1
	s.found.Add(o, i, s.events[i].AtMS, text)
}

func (s *runner) nodeStates() []NodeState {
	out := make([]NodeState, len(s.nodes))
	for i, n := range s.nodes {
		out[i] = NodeState{Node: n.id, Up: n.up, Holder: s.holder(n), ClockAheadMS: n.offset().Milliseconds(), Role: s.role(n)}
		if out[i].Holder != "" {
			out[i].TTLMS = n.m.TTL(lockKey).Milliseconds()
		}
	}
	return out
}

// holder returns the name of the client whose token is in the lock key on
// n, or "".
func (s *runner) holder(n *node) string {
	if !n.up {
		return ""
	}
	v, err := n.m.Get(lockKey)
	if err != nil {
		return ""
	}
	if name, ok := s.names[v]; ok {
		return name
	}
	return "someone else"
}

func (s *runner) nodeActor(n *node) string {
	if len(s.nodes) > 1 {
		return fmt.Sprintf("redis node %d", n.id)
	}
	return "redis"
}

// client returns the client called name, or nil.
func (s *runner) client(name string) *client {
	for _, c := range s.clients {
		if c.name == name {
			return c
		}
	}
	return nil
}

// vtime converts a time on the clients' clock to virtual time.
func (s *runner) vtime(t time.Time) time.Duration { return t.Sub(s.start) }

// simClock is the clients' view of virtual time, handed to the lock package.
// While a call waits for a delayed reply, the caller's clock reads the time
// at which the reply arrives.
type simClock struct{ s *runner }

func (c simClock) Now() time.Time { return c.s.start.Add(c.s.now + c.s.delays.extra()) }

// Sleep is never called: clients try once per action and the simulation
// schedules their retries.
func (c simClock) Sleep(context.Context, time.Duration) error {
	return fmt.Errorf("sleep: the simulation schedules retries itself")
}
