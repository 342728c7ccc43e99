package race

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/sim"
)

// pausePoint says where in its job a client freezes.
type pausePoint int

const (
	pauseMidWork       pausePoint = iota // halfway through the work, before the write
	pauseBeforeRelease                   // after the write, before the release
)

// renewMode is how a client renews its lock while it works.
type renewMode int

const (
	renewNone     renewMode = iota
	renewTimer              // extend every TTL/3 for as long as the process lives
	renewProgress           // the same, but only after progress, and at most maxRenewals times
)

// maxRenewals is the renewal limit of a progress-checking watchdog.
const maxRenewals = 5

// job is what a client does: take the lock (retrying), work, write to the
// storage, release. Options add a pause, renewal and a hang.
type job struct {
	work    time.Duration
	pause   time.Duration
	where   pausePoint
	renew   renewMode
	stuckAt time.Duration // > 0: the work hangs for good this long after it starts
}

// startJob schedules c's first attempt at virtual time t.
// A job that renews more often than the run may have events is refused
// before it runs, so that a request for an unreadable run costs nothing.
func (s *runner) startJob(c *client, t time.Duration, j job) {
	if every := s.renewEvery(); j.renew != renewNone && every > 0 && j.work/every > maxEvents {
		s.fail(fmt.Errorf("%s = %d renews a %d ms lock about %d times, more than the %d events a run may have; use a longer TTL or a shorter work time: %w",
			ParamWork, j.work.Milliseconds(), s.p.TTL.Milliseconds(), j.work/every, maxEvents, ErrBadParams))
		return
	}
	s.atFor(c, t, func() { s.acquire(c, func() { s.work(c, j) }) })
}

// work runs once c holds the lock. Its steps are c's own (atFor), so a
// pause moves them later.
func (s *runner) work(c *client, j job) {
	t0 := s.now
	if j.renew != renewNone {
		s.renewAt(c, j.renew, t0+s.renewEvery())
	}
	if s.redlock {
		// A Redlock client knows how long its lock is valid and stops
		// when that time is up, rather than work on without it.
		if until := s.vtime(c.lk.Until()); until < t0+j.work {
			s.at(until, func() {
				if c.paused {
					c.stopDue = true
					return
				}
				s.stop(c)
			})
		}
	}
	if j.stuckAt > 0 {
		s.atFor(c, t0+j.stuckAt, func() {
			c.stuck, c.progressAt, c.stuckRenew = true, s.now, c.renewals
			s.emit(Event{Actor: c.name, Kind: KindStuck, Text: fmt.Sprintf("%s's work hangs (a deadlock, or a call that never returns); its process is alive, so any timer thread it runs keeps running.", sim.Capital(c.name))})
		})
		return
	}
	if j.pause > 0 && j.where == pauseMidWork {
		s.atFor(c, t0+(j.work/2).Truncate(time.Millisecond), func() {
			if !c.stopped {
				s.pauseClient(c, j.pause)
			}
		})
	}
	s.atFor(c, t0+j.work, func() {
		if c.stopped {
			return
		}
		s.write(c)
		if j.pause > 0 && j.where == pauseBeforeRelease {
			s.atFor(c, s.now, func() { s.release(c) })
			s.pauseClient(c, j.pause)
			return
		}
		s.release(c)
	})
}

// renewEvery is the renewal period: a third of the TTL, in whole ms.
func (s *runner) renewEvery() time.Duration { return renewPeriod(s.p) }

// renewPeriod is the renewal period of a run with p.
func renewPeriod(p Params) time.Duration { return (p.TTL / 3).Truncate(time.Millisecond) }

// renewAt schedules a renewal; a paused client misses it and renews as
// soon as it runs again.
func (s *runner) renewAt(c *client, mode renewMode, t time.Duration) {
	c.renew = mode
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

// renew extends c's lock, if its renewal mode allows, and schedules the
// next renewal.
func (s *runner) renew(c *client) {
	if c.renew == renewProgress {
		var why string
		switch {
		case c.stuck && c.progressAt <= c.renewedAt:
			why = fmt.Sprintf("its work has made no progress since the last renewal %s ago", sim.Dur(s.now-c.renewedAt))
		case c.renewals >= maxRenewals:
			why = fmt.Sprintf("it has renewed %d times, its limit", maxRenewals)
		}
		if why != "" {
			c.holding = false
			s.emit(Event{Actor: c.name, Kind: KindRenewLimit,
				Text: fmt.Sprintf("%s's watchdog does not renew: %s. It marks the lock as lost and lets the TTL run out, so another client can have it.", sim.Capital(c.name), why)})
			return
		}
	}
	s.extend(c, func(ok bool) {
		if ok {
			s.renewAt(c, c.renew, s.now+s.renewEvery())
		}
	})
}

// stop ends a Redlock client's work when its validity is over.
func (s *runner) stop(c *client) {
	if c.stopped || !c.holding {
		return
	}
	c.holding, c.stopped = false, true
	s.emit(Event{Actor: c.name, Kind: KindStop,
		Text: fmt.Sprintf("%s's validity time is up before its work is done, so it stops without writing.", sim.Capital(c.name))})
}
