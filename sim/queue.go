package sim

import (
	"slices"
	"time"
)

// Queue is a simulation's virtual clock and the actions due on it, run in
// time order; actions due at the same time run in the order they were
// scheduled. It is not safe for concurrent use: a simulation runs on one
// goroutine.
type Queue struct {
	now   time.Duration
	seq   int
	first int // the next sequence number of an action scheduled First
	items []Action
}

// Action is something that happens at a virtual time. An action with an
// owner is a step of that owner's own work (a client's): Shift moves an
// owner's actions later, as a pause of the client does.
type Action struct {
	At    time.Duration
	Owner any
	Do    func()
	seq   int
}

// firstBase numbers the actions scheduled First, below all others.
const firstBase = -1 << 40

// Now is the virtual time: how long since the simulation started.
func (q *Queue) Now() time.Duration { return q.now }

// SetNow moves the virtual time to t. Callers move it forward only, as
// far as the next action at most (see Pop), to handle what falls due on
// the way, such as a key's expiry.
func (q *Queue) SetNow(t time.Duration) { q.now = t }

// At schedules f at virtual time t, or now if t has passed.
func (q *Queue) At(t time.Duration, f func()) { q.AtFor(nil, t, f) }

// AtFor schedules f at t as a step of owner's work.
func (q *Queue) AtFor(owner any, t time.Duration, f func()) {
	q.seq++
	q.items = append(q.items, Action{At: max(t, q.now), Owner: owner, Do: f, seq: q.seq})
}

// First schedules f at t before every action scheduled with At or AtFor
// for the same time, after those scheduled First before it: a fault a
// learner adds at a time strikes before the scenario's own step then.
func (q *Queue) First(t time.Duration, f func()) {
	if q.first == 0 {
		q.first = firstBase
	}
	q.first++
	q.items = append(q.items, Action{At: max(t, q.now), Do: f, seq: q.first})
}

// Shift moves owner's actions d later, after what is already scheduled
// for the times they move to, keeping their own order.
func (q *Queue) Shift(owner any, d time.Duration) {
	var mine []int
	for i, a := range q.items {
		if a.Owner == owner {
			mine = append(mine, i)
		}
	}
	slices.SortFunc(mine, func(i, j int) int { return q.items[i].seq - q.items[j].seq })
	for _, i := range mine {
		q.seq++
		q.items[i].At += d
		q.items[i].seq = q.seq
	}
}

// Drop removes owner's actions: the owner (a client that crashed) will
// never do them. It returns how many there were.
func (q *Queue) Drop(owner any) int {
	n := len(q.items)
	q.items = slices.DeleteFunc(q.items, func(a Action) bool { return a.Owner == owner && owner != nil })
	return n - len(q.items)
}

// Len is how many actions are scheduled.
func (q *Queue) Len() int { return len(q.items) }

// Pop removes and returns the earliest action, or false when none is
// left or the earliest is due after horizon (0: no horizon). It does not
// move the clock.
func (q *Queue) Pop(horizon time.Duration) (Action, bool) {
	if len(q.items) == 0 {
		return Action{}, false
	}
	i := 0
	for j, a := range q.items {
		if a.At < q.items[i].At || (a.At == q.items[i].At && a.seq < q.items[i].seq) {
			i = j
		}
	}
	a := q.items[i]
	if horizon > 0 && a.At > horizon {
		return Action{}, false
	}
	q.items = slices.Delete(q.items, i, i+1)
	return a, true
}
