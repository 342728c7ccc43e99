package workshop

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"
)

// Participants' activity is counted in memory and written in batches: a
// playground command, a race or an answer adds to the Service's counters
// for its workshop, and at most once every FlushEvery the workshop's
// batch goes to the back end, in parts of a few hundred counters, each
// one atomic step whose increments add to what is there (so replicas
// sharing a store each write their own and lose none of the others'). A
// learner is looked up as a member before anything is counted, in a cache
// of the workshop's members; a learner who has not joined costs a read
// and writes nothing. The statistics and the participants a Service reads
// include what it has not written yet, and a clean shutdown writes
// everything (Flush).

// DefaultFlushEvery is how often a workshop's batch is written unless
// Options.FlushEvery says otherwise.
const DefaultFlushEvery = 5 * time.Second

// Ceilings of what a Service keeps in memory. A workshop's batch holds at
// most maxPending counters and gates (one participant's counters are
// bounded by the course's questions, topics and challenges); at the
// ceiling it is written at once. At most maxLive workshops are kept;
// beyond them, events are written one at a time, as they come.
const (
	maxPending = 20_000
	maxLive    = 1_000
)

// idleAfter is how long a workshop nobody did anything in stays in
// memory, in flush intervals.
const idleAfter = 12

// Batch is a workshop's activity that a Service counted and has not
// written yet, by learner.
type Batch map[string]*MemberBatch

// MemberBatch is what one participant did since the last write: counters
// to add to (workshop counters and their own), the gated parts of their
// events (each gate member once), and the times of their first and last
// events.
type MemberBatch struct {
	Counts       map[string]int
	MemberCounts map[string]int
	// Gated are plans with a gate, by gate and gate member; their Counts
	// and MemberCounts are empty (those went to the maps above).
	Gated       map[string]Plan
	First, Last time.Time
}

// AfterEnd reports whether the participant's part of a batch came after
// the workshop ended at end (zero: it has not), and so must not count:
// events after the end never change a workshop's results.
func (mb *MemberBatch) AfterEnd(end time.Time) bool {
	return !end.IsZero() && mb.First.After(end)
}

// add counts one event's plan; it returns how many new names (counters
// and gates) the batch holds now.
func (mb *MemberBatch) add(p Plan, at time.Time) int {
	added := 0
	bump := func(m map[string]int, names []string) {
		for _, n := range names {
			if _, ok := m[n]; !ok {
				added++
			}
			m[n]++
		}
	}
	bump(mb.Counts, p.Counts)
	bump(mb.MemberCounts, p.MemberCounts)
	if p.Gate != GateNone {
		k := p.Gate + "\x00" + p.GateMember
		if _, ok := mb.Gated[k]; !ok {
			mb.Gated[k] = Plan{Gate: p.Gate, GateMember: p.GateMember, GateCounts: p.GateCounts, GateMemberCounts: p.GateMemberCounts}
			added++
		}
	}
	if mb.First.IsZero() || at.Before(mb.First) {
		mb.First = at
	}
	if at.After(mb.Last) {
		mb.Last = at
	}
	return added
}

func newMemberBatch() *MemberBatch {
	return &MemberBatch{Counts: map[string]int{}, MemberCounts: map[string]int{}, Gated: map[string]Plan{}}
}

// merge adds other (an older batch whose write failed) to b; it returns
// how many new names b holds now.
func (b Batch) merge(other Batch) int {
	added := 0
	for learner, o := range other {
		mb := b[learner]
		if mb == nil {
			mb = newMemberBatch()
			b[learner] = mb
		}
		for n, c := range o.Counts {
			if _, ok := mb.Counts[n]; !ok {
				added++
			}
			mb.Counts[n] += c
		}
		for n, c := range o.MemberCounts {
			if _, ok := mb.MemberCounts[n]; !ok {
				added++
			}
			mb.MemberCounts[n] += c
		}
		for k, p := range o.Gated {
			if _, ok := mb.Gated[k]; !ok {
				mb.Gated[k] = p
				added++
			}
		}
		if mb.First.IsZero() || o.First.Before(mb.First) {
			mb.First = o.First
		}
		mb.Last = later(mb.Last, o.Last)
	}
	return added
}

// gated reports whether any participant's part has a gate, whose counts
// only the back end can tell.
func (b Batch) gated() bool {
	for _, mb := range b {
		if len(mb.Gated) > 0 {
			return true
		}
	}
	return false
}

// addUngated adds what b counts, but its gates, to d, as its back end
// would once b is written: members who are no longer in d are skipped,
// and so is what came after the end.
func (d *Data) addUngated(b Batch) {
	if len(b) == 0 {
		return
	}
	for i := range d.Members {
		m := &d.Members[i]
		mb := b[m.Learner]
		if mb == nil || mb.AfterEnd(d.Workshop.EndedAt) {
			continue
		}
		for n, c := range mb.Counts {
			d.Counts[n] += c
		}
		if len(mb.MemberCounts) > 0 && m.Counts == nil {
			m.Counts = map[string]int{}
		}
		for n, c := range mb.MemberCounts {
			m.Counts[n] += c
		}
		m.LastActive = later(m.LastActive, mb.Last)
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// liveWorkshop is what a Service keeps in memory about a workshop with
// recent activity. flushMu lets one write (or one read that adds the
// batch to what the back end has) at a time; the other fields are
// guarded by Service.mu.
type liveWorkshop struct {
	flushMu sync.Mutex
	w       Workshop
	readAt  time.Time
	// members are learners found to be members, with when they were.
	members map[string]time.Time
	pending Batch
	names   int       // counters and gates in pending
	since   time.Time // when pending got its first event; zero when empty
	usedAt  time.Time
}

// live returns the workshop's entry, reading the workshop again if the
// entry is older than a flush interval; nil (and no error) when maxLive
// workshops are kept already.
func (s *Service) live(ctx context.Context, code string) (*liveWorkshop, error) {
	now := s.now()
	s.mu.Lock()
	lw := s.workshops[code]
	if lw != nil && now.Sub(lw.readAt) < s.flushEvery {
		lw.usedAt = now
		s.mu.Unlock()
		return lw, nil
	}
	s.mu.Unlock()
	w, err := s.b.Workshop(ctx, code)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	lw = s.workshops[code]
	if lw == nil {
		if len(s.workshops) >= maxLive {
			return nil, nil
		}
		lw = &liveWorkshop{members: map[string]time.Time{}, pending: Batch{}}
		s.workshops[code] = lw
	}
	lw.w, lw.readAt, lw.usedAt = w, now, now
	return lw, nil
}

// isMember looks learner up in the entry's members, or else in the back
// end, which is only read.
func (s *Service) isMember(ctx context.Context, code string, lw *liveWorkshop, learner string) (bool, error) {
	now := s.now()
	s.mu.Lock()
	at, ok := lw.members[learner]
	s.mu.Unlock()
	if ok && now.Sub(at) < s.flushEvery {
		return true, nil
	}
	member, err := s.b.IsMember(ctx, code, learner)
	if err != nil || !member {
		return false, err
	}
	s.mu.Lock()
	lw.members[learner] = now
	s.mu.Unlock()
	return true, nil
}

// count adds an event's plan to the workshop's batch, and writes the
// batch if it is due or at its ceiling.
func (s *Service) count(ctx context.Context, code string, lw *liveWorkshop, learner string, p Plan, at time.Time) error {
	now := s.now()
	s.mu.Lock()
	full := lw.names >= maxPending
	s.mu.Unlock()
	if full {
		// Write what is there first; if that fails, this event is
		// dropped rather than kept beyond the ceiling.
		if err := s.flush(ctx, code, lw); err != nil {
			return err
		}
	}
	s.mu.Lock()
	mb := lw.pending[learner]
	if mb == nil {
		mb = newMemberBatch()
		lw.pending[learner] = mb
	}
	lw.names += mb.add(p, at)
	if lw.since.IsZero() {
		lw.since = now
	}
	due := now.Sub(lw.since) >= s.flushEvery || lw.names >= maxPending
	s.mu.Unlock()
	if due {
		return s.flush(ctx, code, lw)
	}
	return nil
}

// flush writes the workshop's batch.
func (s *Service) flush(ctx context.Context, code string, lw *liveWorkshop) error {
	lw.flushMu.Lock()
	defer lw.flushMu.Unlock()
	return s.flushLocked(ctx, code, lw)
}

// flushLocked writes the workshop's batch, in parts; the caller holds
// lw.flushMu. The parts a write fails for, from the first that failed on,
// are put back, to be tried again, unless the workshop is gone; the parts
// written before it stay written, so nothing is counted twice.
func (s *Service) flushLocked(ctx context.Context, code string, lw *liveWorkshop) error {
	s.mu.Lock()
	b, since := lw.pending, lw.since
	if len(b) == 0 {
		s.mu.Unlock()
		return nil
	}
	lw.pending, lw.names, lw.since = Batch{}, 0, time.Time{}
	s.mu.Unlock()
	parts := b.parts(flushPart)
	for i, p := range parts {
		err := s.b.FlushWorkshop(ctx, code, p)
		if err == nil {
			continue
		}
		if errors.Is(err, ErrNotFound) {
			return err
		}
		left := Batch{}
		for _, p := range parts[i:] {
			maps.Copy(left, p)
		}
		s.mu.Lock()
		lw.names += lw.pending.merge(left)
		if lw.since.IsZero() || since.Before(lw.since) {
			lw.since = since
		}
		s.mu.Unlock()
		return err
	}
	return nil
}

// flushPart is about how many counters and gates one write holds: a batch
// is written in parts, so that a Redis, which runs one script at a time,
// is never held for more than a few milliseconds by one (a 1,000-learner
// workshop's batch of 5 s was one script of 15 to 60 ms, which every
// other request waited for) and other requests go between them.
const flushPart = 500

// parts splits b into batches of at most n names each, a learner's whole
// part in one (so one learner's part may be larger on its own).
func (b Batch) parts(n int) []Batch {
	var out []Batch
	cur, size := Batch{}, 0
	for learner, mb := range b {
		k := mb.names()
		if size > 0 && size+k > n {
			out = append(out, cur)
			cur, size = Batch{}, 0
		}
		cur[learner] = mb
		size += k
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// names is how many counters and gates mb holds.
func (mb *MemberBatch) names() int { return len(mb.Counts) + len(mb.MemberCounts) + len(mb.Gated) }

// Flush writes every workshop's batch now: on shutdown, so that nothing
// counted is lost.
func (s *Service) Flush(ctx context.Context) error {
	return s.flushWhere(ctx, func(*liveWorkshop, time.Time) bool { return true })
}

// FlushDue writes the batches that have waited a flush interval, and
// forgets workshops in which nothing happened for a while.
func (s *Service) FlushDue(ctx context.Context) error {
	return s.flushWhere(ctx, func(lw *liveWorkshop, now time.Time) bool {
		return !lw.since.IsZero() && now.Sub(lw.since) >= s.flushEvery
	})
}

func (s *Service) flushWhere(ctx context.Context, due func(*liveWorkshop, time.Time) bool) error {
	now := s.now()
	type job struct {
		code string
		lw   *liveWorkshop
	}
	var jobs []job
	s.mu.Lock()
	for code, lw := range s.workshops {
		switch {
		case len(lw.pending) > 0 && due(lw, now):
			jobs = append(jobs, job{code, lw})
		case len(lw.pending) == 0 && now.Sub(lw.usedAt) >= idleAfter*s.flushEvery:
			delete(s.workshops, code)
		default:
			for learner, at := range lw.members {
				if now.Sub(at) >= s.flushEvery {
					delete(lw.members, learner)
				}
			}
		}
	}
	s.mu.Unlock()
	var errs error
	for _, j := range jobs {
		if err := s.flush(ctx, j.code, j.lw); err != nil {
			errs = errors.Join(errs, fmt.Errorf("workshop: %s flush: %w", j.code, err))
		}
	}
	return errs
}

// Run writes due batches every half flush interval until ctx ends,
// reporting each failure to report. The caller then calls Flush, once
// no more events can come.
func (s *Service) Run(ctx context.Context, report func(error)) {
	t := time.NewTicker(max(s.flushEvery/2, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := s.FlushDue(ctx); err != nil && ctx.Err() == nil {
				report(err)
			}
		}
	}
}

// data is what the back end keeps about a workshop with this Service's
// batch added: a batch with gates is written first, as only the back end
// knows which gate members are new.
func (s *Service) data(ctx context.Context, code string) (Data, error) {
	s.mu.Lock()
	lw := s.workshops[code]
	s.mu.Unlock()
	if lw == nil {
		return s.b.WorkshopData(ctx, code)
	}
	lw.flushMu.Lock()
	defer lw.flushMu.Unlock()
	s.mu.Lock()
	gated := lw.pending.gated()
	s.mu.Unlock()
	if gated {
		if err := s.flushLocked(ctx, code, lw); err != nil {
			return Data{}, err
		}
	}
	d, err := s.b.WorkshopData(ctx, code)
	if err != nil {
		return Data{}, err
	}
	s.mu.Lock()
	d.addUngated(lw.pending)
	s.mu.Unlock()
	return d, nil
}

// forgetWorkshop makes the next event read the workshop again (after it
// ended, or was closed or opened).
func (s *Service) forgetWorkshop(code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if lw := s.workshops[code]; lw != nil {
		lw.readAt = time.Time{}
	}
}

// forgetMember drops a removed participant's membership, and what they
// did since their batch was written.
func (s *Service) forgetMember(code, learner string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lw := s.workshops[code]
	if lw == nil {
		return
	}
	delete(lw.members, learner)
	if mb := lw.pending[learner]; mb != nil {
		lw.names -= len(mb.Counts) + len(mb.MemberCounts) + len(mb.Gated)
		delete(lw.pending, learner)
	}
}
