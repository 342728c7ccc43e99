package limit

import (
	"context"
	"math"
	"sync"
	"time"
)

// FairQueue admits work that holds a scarce slot for seconds, such as the
// lock lab's checks, fairly between the addresses that want it: one
// address sending many requests waits its turn behind the others rather
// than in front of them.
//
//   - A learner has at most one request queued or running.
//   - An address has at most PerAddressRunning requests running and
//     PerAddress waiting, and the queue at most MaxWaiting in all: the
//     other slots stay for other addresses.
//   - When a slot frees, it goes to the waiting address that has held
//     slots for the least time lately (a decaying sum, halved every
//     UseHalfLife), each address's own requests in order, ties in the
//     order they came: an address that keeps the slots busy waits behind
//     one that used them little, and a newcomer is served next.
//   - A request that has waited MaxWait gives up.
//
// A refused request is told which limit refused it and how long to wait
// ("lab_running", "lab_queue_per_address", "lab_queue", "lab_wait"). A
// FairQueue is safe for concurrent use.
type FairQueue struct {
	mu       sync.Mutex
	free     int
	opts     FairQueueOptions
	learners map[string]bool       // learners with a request queued or running
	queues   map[string][]*waiting // waiting requests, per address, oldest first
	turn     []string              // addresses with waiting requests, in the order they came
	used     map[string]use        // how long each address held slots lately
	running  map[string]int        // requests running, per address
	waiting  int
	// onWait, if set, is told of each request that starts to wait
	// (tests wait for it rather than for time to pass).
	onWait func(learner string)
}

// FairQueueOptions size a FairQueue. Zero fields take their defaults.
type FairQueueOptions struct {
	Slots             int           // requests running at once; default 1
	PerAddressRunning int           // requests of one address running at once; default a quarter of Slots, at least 1
	PerAddress        int           // waiting requests per address; default 2
	MaxWaiting        int           // waiting requests in all; default 64
	MaxWait           time.Duration // longest wait for a slot; default 5 s
}

type waiting struct {
	learner, addr string
	granted       chan struct{} // closed when a slot is handed over
}

// NewFairQueue returns an empty queue with o.Slots free slots.
func NewFairQueue(o FairQueueOptions) *FairQueue {
	if o.Slots <= 0 {
		o.Slots = 1
	}
	if o.PerAddressRunning <= 0 {
		o.PerAddressRunning = max(o.Slots/4, 1)
	}
	if o.PerAddress <= 0 {
		o.PerAddress = 2
	}
	if o.MaxWaiting <= 0 {
		o.MaxWaiting = 64
	}
	if o.MaxWait <= 0 {
		o.MaxWait = 5 * time.Second
	}
	return &FairQueue{free: o.Slots, opts: o, learners: map[string]bool{}, queues: map[string][]*waiting{}, used: map[string]use{}, running: map[string]int{}}
}

// Enter waits for a slot for learner's request from addr. When the
// Decision allows it, the caller holds a slot and must call release once
// its work is done; otherwise release is a no-op and the Decision says
// which limit refused and how long to wait. A request whose ctx ends while
// it waits leaves the queue with ctx's error.
func (q *FairQueue) Enter(ctx context.Context, learner, addr string) (release func(), d Decision, err error) {
	none := func() {}
	q.mu.Lock()
	switch {
	case q.learners[learner]:
		q.mu.Unlock()
		return none, Decision{Limit: "lab_running", Wait: q.opts.MaxWait}, nil
	case q.free > 0 && q.waiting == 0 && q.running[addr] < q.opts.PerAddressRunning:
		q.free--
		q.running[addr]++
		q.learners[learner] = true
		q.mu.Unlock()
		return q.releaser(learner, addr), Decision{}, nil
	case len(q.queues[addr]) >= q.opts.PerAddress:
		q.mu.Unlock()
		return none, Decision{Limit: "lab_queue_per_address", Wait: q.opts.MaxWait}, nil
	case q.waiting >= q.opts.MaxWaiting:
		q.mu.Unlock()
		return none, Decision{Limit: "lab_queue", Wait: q.opts.MaxWait}, nil
	}
	w := &waiting{learner: learner, addr: addr, granted: make(chan struct{})}
	if len(q.queues[addr]) == 0 {
		q.turn = append(q.turn, addr)
	}
	q.queues[addr] = append(q.queues[addr], w)
	q.learners[learner] = true
	q.waiting++
	// A free slot that others could not take (their address is at its
	// running cap) may be this request's.
	q.handOver()
	onWait := q.onWait
	q.mu.Unlock()
	if onWait != nil {
		onWait(learner)
	}

	timer := time.NewTimer(q.opts.MaxWait)
	defer timer.Stop()
	select {
	case <-w.granted:
		return q.releaser(learner, addr), Decision{}, nil
	case <-timer.C:
		if q.leave(w) {
			return none, Decision{Limit: "lab_wait", Wait: q.opts.MaxWait}, nil
		}
	case <-ctx.Done():
		if q.leave(w) {
			return none, Decision{}, ctx.Err()
		}
	}
	// The slot was handed over as the wait ended: give it back.
	<-w.granted
	q.releaser(learner, addr)()
	if ctx.Err() != nil {
		return none, Decision{}, ctx.Err()
	}
	return none, Decision{Limit: "lab_wait", Wait: q.opts.MaxWait}, nil
}

// leave takes w out of the queue, unless it was granted a slot already;
// it reports whether it did.
func (q *FairQueue) leave(w *waiting) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	select {
	case <-w.granted:
		return false
	default:
	}
	ws := q.queues[w.addr]
	for i, x := range ws {
		if x == w {
			q.queues[w.addr] = append(ws[:i:i], ws[i+1:]...)
			break
		}
	}
	if len(q.queues[w.addr]) == 0 {
		q.dropTurn(w.addr)
	}
	q.waiting--
	delete(q.learners, w.learner)
	return true
}

// dropTurn takes addr out of the round robin.
func (q *FairQueue) dropTurn(addr string) {
	delete(q.queues, addr)
	for i, a := range q.turn {
		if a == addr {
			q.turn = append(q.turn[:i:i], q.turn[i+1:]...)
			return
		}
	}
}

// releaser returns the function that frees learner's slot, once, and
// counts the time it held it against addr.
func (q *FairQueue) releaser(learner, addr string) func() {
	var once sync.Once
	start := time.Now()
	return func() {
		once.Do(func() {
			q.mu.Lock()
			defer q.mu.Unlock()
			delete(q.learners, learner)
			q.free++
			if q.running[addr]--; q.running[addr] <= 0 {
				delete(q.running, addr)
			}
			q.charge(addr, time.Since(start))
			q.handOver()
		})
	}
}

// handOver gives free slots to the oldest requests of the waiting
// addresses that used the slots least lately. The caller holds q.mu.
func (q *FairQueue) handOver() {
	now := time.Now()
	for q.free > 0 {
		next := -1
		for i, a := range q.turn {
			if q.running[a] >= q.opts.PerAddressRunning {
				continue
			}
			if next < 0 || q.used[a].at(now) < q.used[q.turn[next]].at(now) {
				next = i
			}
		}
		if next < 0 {
			return
		}
		addr := q.turn[next]
		ws := q.queues[addr]
		w := ws[0]
		q.queues[addr] = ws[1:]
		q.turn = append(q.turn[:next:next], q.turn[next+1:]...)
		if len(q.queues[addr]) > 0 {
			q.turn = append(q.turn, addr) // its next request waits its turn
		} else {
			delete(q.queues, addr)
		}
		q.waiting--
		q.free--
		q.running[addr]++
		close(w.granted)
	}
}

// UseHalfLife is how fast an address's use of the slots is forgotten.
const UseHalfLife = 10 * time.Second

// use is a decaying sum of the seconds an address held slots.
type use struct {
	seconds float64
	when    time.Time
}

// at is the sum as it stands at now.
func (u use) at(now time.Time) float64 {
	if u.seconds == 0 {
		return 0
	}
	return u.seconds * math.Exp2(-now.Sub(u.when).Seconds()/UseHalfLife.Seconds())
}

// charge adds d to addr's use. The map forgets the addresses whose use
// has faded once it holds more than a few thousand, so that its size has
// a ceiling. The caller holds q.mu.
func (q *FairQueue) charge(addr string, d time.Duration) {
	now := time.Now()
	if len(q.used) > 4096 {
		for a, u := range q.used {
			if u.at(now) < 0.01 {
				delete(q.used, a)
			}
		}
	}
	q.used[addr] = use{seconds: q.used[addr].at(now) + d.Seconds(), when: now}
}

// Waiting is how many requests wait for a slot.
func (q *FairQueue) Waiting() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.waiting
}
