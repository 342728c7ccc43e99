package race

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/lock"
)

// acquirer is a lock.Locker or a lock.Redlock.
type acquirer interface {
	Acquire(ctx context.Context, key string, ttl time.Duration) (*lock.Lock, error)
}

// client is one process that wants the lock.
type client struct {
	name  string
	acq   acquirer
	links []link // its view of the nodes
	lk    *lock.Lock

	holding  bool // it believes it holds the lock
	paused   bool
	stopped  bool // it found out it lost the lock and gave up
	renewDue bool // a renewal fell due while it was paused
}

// addClient creates client number i. cut lists the nodes (1-based) it cannot
// reach. Its tokens come from a generator seeded by the run's seed, so the
// same seed gives the same tokens.
func (s *sim) addClient(i int, cut ...int) *client {
	c := &client{name: fmt.Sprintf("client %d", i)}
	var seed [32]byte
	seed[0] = byte(i)
	binary.LittleEndian.PutUint64(seed[8:], s.p.Seed)
	opts := lock.Options{Clock: simClock{s}, Random: rand.NewChaCha8(seed), NodeTimeout: 10 * time.Second}
	nodes := make([]redis.Scripter, len(s.nodes))
	for j, n := range s.nodes {
		l := link{n: n}
		for _, id := range cut {
			l.cut = l.cut || id == n.id
		}
		c.links = append(c.links, l)
		nodes[j] = l
	}
	if s.redlock {
		c.acq = lock.NewRedlock(nodes, opts)
	} else {
		c.acq = lock.New(nodes[0], opts)
	}
	s.clients = append(s.clients, c)
	return c
}

// acquire makes one attempt; on success it calls then, on failure it
// schedules another attempt after a random delay.
func (s *sim) acquire(c *client, then func()) {
	var free []int // nodes this attempt can win
	for _, l := range c.links {
		if l.check() == nil && s.holder(l.n) == "" {
			free = append(free, l.n.id)
		}
	}
	holder := s.holder(s.nodes[0])
	lk, err := c.acq.Acquire(s.ctx, lockKey, s.p.TTL)
	switch {
	case err == nil:
		c.lk, c.holding = lk, true
		s.names[lk.Token()] = c.name
		s.lastGrant = c
		s.emit(Event{Actor: c.name, Kind: KindAcquireOK, Fence: lk.Fence(), Text: s.acquiredText(c, free)})
		s.checkTwoHolders(c)
		then()
	case errors.Is(err, lock.ErrNotAcquired):
		text := fmt.Sprintf("%s asks for the lock and gets nil: %s holds it.", capital(c.name), holder)
		if s.redlock {
			text = fmt.Sprintf("%s sets its key on only %s (%d of %d, no majority), so it deletes them again and will retry.",
				capital(c.name), nodeList(free), len(free), len(s.nodes))
		}
		s.emit(Event{Actor: c.name, Kind: KindAcquireFail, Text: text})
		s.at(s.now+s.retryDelay(), func() { s.acquire(c, then) })
	default:
		s.fail(fmt.Errorf("%s acquire: %w", c.name, err))
	}
}

func (s *sim) acquiredText(c *client, won []int) string {
	if !s.redlock {
		return fmt.Sprintf("%s gets the lock (SET NX PX %s) with fencing token %d.", capital(c.name), dur(s.p.TTL), c.lk.Fence())
	}
	reach := ""
	if len(won) < len(s.nodes) {
		reach = " (it cannot reach the others)"
	}
	return fmt.Sprintf("%s sets its key on %s%s: %d of %d is a majority, so it holds the lock for %s (the TTL minus an allowance for clock drift).",
		capital(c.name), nodeList(won), reach, len(won), len(s.nodes), dur(s.vtime(c.lk.Until())-s.now))
}

// write sends the client's write, with its fencing token, to the storage.
func (s *sim) write(c *client) {
	fence := c.lk.Fence()
	newer := ""
	if s.lastGrant != c {
		newer = s.lastGrant.name
	}
	ok := s.store.write(fence)
	e := Event{Actor: "storage", Subject: c.name, Fence: fence, Stale: newer != ""}
	switch {
	case !ok:
		e.Kind = KindWriteRejected
		e.Text = fmt.Sprintf("The storage rejects %s's write: token %d is lower than %d, which it has already seen.", c.name, fence, s.store.highest)
	case newer == "":
		e.Kind = KindWriteAccepted
		e.Text = fmt.Sprintf("The storage accepts %s's write.", c.name)
		if fence > 0 {
			e.Text = fmt.Sprintf("The storage accepts %s's write with token %d.", c.name, fence)
		}
	default:
		e.Kind = KindWriteAccepted
		switch {
		case s.p.Fencing && fence > 0:
			e.Text = fmt.Sprintf("The storage accepts %s's write with token %d: the lock has passed to %s, but no newer token has reached the storage yet.", c.name, fence, newer)
		default:
			e.Text = fmt.Sprintf("The storage accepts %s's write, though the lock has passed to %s: without a fencing check it cannot tell.", c.name, newer)
		}
	}
	s.emit(e)
	switch {
	case !ok:
		s.outcome(OutcomeStaleWriteRejected, fmt.Sprintf("%s wrote after the lock had passed to %s, but its fencing token was too low and the storage rejected it.", capital(c.name), newer))
	case newer != "":
		s.outcome(OutcomeStaleWriteAccepted, fmt.Sprintf("The storage accepted a write from %s after the lock had passed to %s.", c.name, newer))
	}
}

// release gives the lock back, with the script or with a plain DEL.
func (s *sim) release(c *client) {
	c.holding = false
	if s.p.Release == ReleaseDel && !s.redlock {
		s.releaseDel(c)
		return
	}
	before := s.holders()
	err := c.lk.Release(s.ctx)
	if err != nil && !errors.Is(err, lock.ErrNotHeld) {
		s.fail(fmt.Errorf("%s release: %w", c.name, err))
		return
	}
	e := Event{Actor: c.name, Kind: KindReleaseOK}
	if err != nil {
		e.Kind = KindReleaseNoop
	}
	switch {
	case s.redlock:
		e.Text = s.redlockReleaseText(c, before, err == nil)
	case err == nil:
		e.Text = fmt.Sprintf("%s releases the lock: the script sees its own token and deletes the key.", capital(c.name))
	case before[0] == "":
		e.Text = fmt.Sprintf("%s's release script finds no key: its lock had already expired.", capital(c.name))
	default:
		e.Subject = before[0]
		e.Text = fmt.Sprintf("%s's release script finds %s's token in the key and leaves it alone.", capital(c.name), before[0])
	}
	s.emit(e)
}

// redlockReleaseText says on which nodes c's release deleted its key, and
// who holds the others it can reach.
func (s *sim) redlockReleaseText(c *client, before []string, ok bool) string {
	var mine, others []int
	other := ""
	for i, h := range before {
		switch {
		case c.links[i].check() != nil || h == "":
		case h == c.name:
			mine = append(mine, i+1)
		default:
			others, other = append(others, i+1), h
		}
	}
	switch {
	case ok:
		return fmt.Sprintf("%s releases the lock; the script deletes its key on %s.", capital(c.name), nodeList(mine))
	case len(others) > 0:
		return fmt.Sprintf("%s releases; the script deletes its key on %s, but that is no majority: on %s the key is %s's now.",
			capital(c.name), nodeList(mine), nodeList(others), other)
	}
	return fmt.Sprintf("%s releases; the script deletes its key on %s, but that is no majority any more.", capital(c.name), nodeList(mine))
}

// releaseDel is the classic mistake: DEL without checking the token.
func (s *sim) releaseDel(c *client) {
	n := s.nodes[0]
	holder := s.holder(n)
	if v := n.do(s.ctx, "DEL", lockKey); v.IsError() {
		s.fail(fmt.Errorf("%s DEL: %s", c.name, v.Str))
		return
	}
	e := Event{Actor: c.name, Kind: KindReleaseOK}
	switch holder {
	case c.name:
		e.Text = fmt.Sprintf("%s releases with a plain DEL; the key was still its own.", capital(c.name))
	case "":
		e.Kind = KindReleaseNoop
		e.Text = fmt.Sprintf("%s runs DEL, but the key is already gone.", capital(c.name))
	default:
		e.Kind, e.Subject = KindDeleteOther, holder
		e.Text = fmt.Sprintf("%s runs a plain DEL and deletes %s's lock: DEL does not check whose key it is.", capital(c.name), holder)
	}
	s.emit(e)
	if e.Kind == KindDeleteOther {
		s.outcome(OutcomeForeignLockDeleted, fmt.Sprintf("%s deleted %s's lock with a plain DEL, so nothing kept the next client out while %s still worked.", capital(c.name), holder, holder))
	}
}

// holders returns the holder of the lock key on each node.
func (s *sim) holders() []string {
	out := make([]string, len(s.nodes))
	for i, n := range s.nodes {
		out[i] = s.holder(n)
	}
	return out
}

// extend renews the lock; on failure the client stops.
func (s *sim) extend(c *client) bool {
	holder := s.holder(s.nodes[0])
	err := c.lk.Extend(s.ctx, s.p.TTL)
	switch {
	case err == nil:
		s.emit(Event{Actor: c.name, Kind: KindExtendOK, Text: fmt.Sprintf("%s extends its lock while it still holds it: the TTL is back to %s.", capital(c.name), dur(s.p.TTL))})
		return true
	case errors.Is(err, lock.ErrNotHeld):
		c.holding, c.stopped = false, true
			why := "the key is gone"
		if holder != "" {
			why = fmt.Sprintf("the key now holds %s's token", holder)
		}
		s.emit(Event{Actor: c.name, Kind: KindExtendFail, Subject: holder,
			Text: fmt.Sprintf("%s tries to extend its lock, but %s; it knows it lost the lock and stops.", capital(c.name), why)})
	default:
		s.fail(fmt.Errorf("%s extend: %w", c.name, err))
	}
	return false
}

func (s *sim) pauseStart(c *client, d time.Duration) {
	c.paused = true
	s.emit(Event{Actor: c.name, Kind: KindPauseStart,
		Text: fmt.Sprintf("%s freezes for %s (a garbage-collection pause, say) and cannot notice time passing.", capital(c.name), dur(d))})
}

func (s *sim) pauseEnd(c *client, d time.Duration) {
	c.paused = false
	s.emit(Event{Actor: c.name, Kind: KindPauseEnd,
		Text: fmt.Sprintf("%s runs again; to it, no time has passed, though %s went by.", capital(c.name), dur(d))})
}
