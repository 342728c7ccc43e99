package race

import (
	"fmt"
	"time"
)

// pausePoint says where in its job a client freezes.
type pausePoint int

const (
	pauseMidWork       pausePoint = iota // halfway through the work, before the write
	pauseBeforeRelease                   // after the write, before the release
)

// job is what a client does: take the lock (retrying), work, write to the
// storage, release. Options add a pause and renewal.
type job struct {
	work  time.Duration
	pause time.Duration
	where pausePoint
	renew bool // extend every TTL/3 while working
}

// startJob schedules c's first attempt at virtual time t.
// A job that renews more often than the run may have events is refused
// before it runs, so that a request for an unreadable run costs nothing.
func (s *sim) startJob(c *client, t time.Duration, j job) {
	if every := s.renewEvery(); j.renew && every > 0 && j.work/every > maxEvents {
		s.fail(fmt.Errorf("%s = %d renews a %d ms lock about %d times, more than the %d events a run may have; use a longer TTL or a shorter work time: %w",
			ParamWork, j.work.Milliseconds(), s.p.TTL.Milliseconds(), j.work/every, maxEvents, ErrBadParams))
		return
	}
	s.at(t, func() { s.acquire(c, func() { s.work(c, j) }) })
}

// work runs once c holds the lock.
func (s *sim) work(c *client, j job) {
	t0 := s.now
	if j.renew {
		s.renewAt(c, t0+s.renewEvery())
	}
	if s.redlock {
		// A Redlock client knows how long its lock is valid and stops
		// when that time is up, rather than work on without it.
		if until := s.vtime(c.lk.Until()); until < t0+j.work {
			s.at(until, func() { s.stop(c) })
		}
	}
	writeAt := t0 + j.work
	if j.pause > 0 && j.where == pauseMidWork {
		mid := t0 + (j.work / 2).Truncate(time.Millisecond)
		s.at(mid, func() {
			if !c.stopped {
				s.pauseStart(c, j.pause)
			}
		})
		s.at(mid+j.pause, func() {
			if c.stopped {
				return
			}
			s.pauseEnd(c, j.pause)
			if c.renewDue {
				c.renewDue = false
				s.renew(c)
			}
		})
		writeAt += j.pause
	}
	s.at(writeAt, func() {
		if c.stopped {
			return
		}
		s.write(c)
		if j.pause > 0 && j.where == pauseBeforeRelease {
			s.pauseStart(c, j.pause)
			s.at(s.now+j.pause, func() {
				s.pauseEnd(c, j.pause)
				s.release(c)
			})
			return
		}
		s.release(c)
	})
}

// renewEvery is the renewal period: a third of the TTL, in whole ms.
func (s *sim) renewEvery() time.Duration { return (s.p.TTL / 3).Truncate(time.Millisecond) }

// renewAt schedules a renewal; a paused client misses it and renews as
// soon as it runs again.
func (s *sim) renewAt(c *client, t time.Duration) {
	s.at(t, func() {
		switch {
		case c.stopped || !c.holding:
		case c.paused:
			c.renewDue = true
		default:
			s.renew(c)
		}
	})
}

func (s *sim) renew(c *client) {
	if s.extend(c) {
		s.renewAt(c, s.now+s.renewEvery())
	}
}

// stop ends a Redlock client's work when its validity is over.
func (s *sim) stop(c *client) {
	if c.stopped || !c.holding {
		return
	}
	c.holding, c.stopped = false, true
	s.emit(Event{Actor: c.name, Kind: KindStop,
		Text: fmt.Sprintf("%s's validity time is up before its work is done, so it stops without writing.", capital(c.name))})
}
