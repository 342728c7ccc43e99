package race

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/sim"
)

// acquirer is a lock.Locker or a lock.Redlock.
type acquirer interface {
	Acquire(ctx context.Context, key string, ttl time.Duration) (*lock.Lock, error)
}

// nodeTimeout is how long a client waits for one node's reply.
const nodeTimeout = 10 * time.Second

// client is one process that wants the lock.
type client struct {
	name    string
	acq     acquirer
	links   []link // its view of the nodes
	lk      *lock.Lock
	timeout time.Duration // lock.Options.NodeTimeout

	wanted     bool          // it has asked for the lock
	wantedAt   time.Duration // when it first asked
	got        bool          // it has been granted the lock at least once
	holding    bool          // it believes it holds the lock
	paused     bool          // frozen (a GC pause): neither work nor timers run
	pauseStart time.Duration // when the current pause began
	pauseEnd   time.Duration // when it ends
	pauseGen   int           // tells the current pause's end from an older one's
	stopped    bool          // it found out it lost the lock and gave up, or crashed
	crashed    bool          // its process died (a crash fault): it does nothing more
	renewDue   bool          // a renewal fell due while it was paused
	stopDue    bool          // its validity ran out while it was paused
	stuck      bool          // its work hangs (watchdog scenario)
	progressAt time.Duration // when its work last made progress
	renewedAt  time.Duration // when it last renewed
	renewals   int           // renewals so far
	stuckRenew int           // renewals when its work hung
	renew      renewMode     // how its watchdog renews
}

// target is the client's name in a fault: "client1".
func (c *client) target() string { return "client" + c.name[len("client "):] }

// addClient creates client number i. cut lists the nodes (1-based) it cannot
// reach. Its tokens come from a generator seeded by the run's seed, so the
// same seed gives the same tokens.
func (s *runner) addClient(i int, cut ...int) *client {
	c := &client{name: fmt.Sprintf("client %d", i), timeout: nodeTimeout}
	var seed [32]byte
	seed[0] = byte(i)
	binary.LittleEndian.PutUint64(seed[8:], s.p.Seed)
	opts := lock.Options{Clock: simClock{s}, Random: rand.NewChaCha8(seed), NodeTimeout: c.timeout}
	nodes := make([]redis.Scripter, len(s.nodes))
	for j, n := range s.nodes {
		l := link{n: n, s: s, c: c}
		for _, id := range cut {
			l.cut = l.cut || id == n.id
		}
		c.links = append(c.links, l)
		nodes[j] = l
	}
	switch {
	case s.redlock:
		c.acq = lock.NewRedlock(nodes, opts)
	case s.failover != nil:
		l := link{n: s.nodes[0], s: s, c: c, primary: true}
		c.links = []link{l}
		c.acq = lock.New(l, opts)
	default:
		c.acq = lock.New(nodes[0], opts)
	}
	s.clients = append(s.clients, c)
	return c
}

// nameToken records that token is c's, the first time it is seen.
func (s *runner) nameToken(token, name string) {
	s.namesMu.Lock()
	defer s.namesMu.Unlock()
	if _, ok := s.names[token]; !ok {
		s.names[token] = name
	}
}

// call runs one of c's calls to Redis and returns how long its replies
// were delayed and from which nodes (see Fault).
func (s *runner) call(f func()) (time.Duration, []int) {
	s.delays.end()
	f()
	return s.delays.end()
}

// later runs then at once, or, if a reply was delayed by d, emits a delay
// event now and runs then as a step of c's work once the reply arrives.
func (s *runner) later(c *client, d time.Duration, late []int, what string, then func()) {
	if d <= 0 {
		then()
		return
	}
	reply, from, is := "The reply", "Redis", "is"
	if len(s.nodes) > 1 {
		from = nodeList(late)
	}
	if len(late) > 1 {
		reply, is = "The replies", "are"
	}
	text := fmt.Sprintf("%s from %s to %s's %s %s delayed by %s (a slow network, say); %s waits, unaware.", reply, from, c.name, what, is, sim.Dur(d), c.name)
	if d >= c.timeout {
		text = fmt.Sprintf("%s from %s to %s's %s %s not back within its %s timeout; %s gives up on it, though the command did reach Redis.", reply, from, c.name, what, is, sim.Dur(c.timeout), c.name)
	}
	s.emit(Event{Actor: c.name, Kind: KindDelay, Text: text})
	s.atFor(c, s.now+d, then)
}

// acquire makes one attempt; on success it calls then, on failure it
// schedules another attempt after a random delay.
func (s *runner) acquire(c *client, then func()) {
	if c.stopped {
		return
	}
	if !c.wanted {
		c.wanted, c.wantedAt = true, s.now
	}
	var free []int // nodes this attempt can win
	for _, l := range c.links {
		if l.check() == nil && s.holder(l.node()) == "" {
			free = append(free, l.node().id)
		}
	}
	holder := s.holder(c.links[0].node())
	start := s.now
	var lk *lock.Lock
	var err error
	d, late := s.call(func() { lk, err = c.acq.Acquire(s.ctx, lockKey, s.p.TTL) })
	s.replicate(c)
	retry := func(text string) {
		s.emit(Event{Actor: c.name, Kind: KindAcquireFail, Text: text})
		s.atFor(c, s.now+s.retryDelay(), func() { s.acquire(c, then) })
	}
	switch {
	case err == nil:
		s.later(c, d, late, "SET", func() {
			c.lk = lk
			s.names[lk.Token()] = c.name
			if s.failover != nil && s.p.Wait {
				s.waitReplica(c, then, func() { s.acquire(c, then) })
				return
			}
			s.granted(c, s.acquiredText(c, free, start), then)
		})
	case errors.Is(err, lock.ErrNotAcquired):
		s.later(c, d, late, "SET", func() {
			switch {
			case s.redlock && d > 0 && len(free) > len(s.nodes)/2:
				retry(fmt.Sprintf("%s set its key on %s, a majority, but the replies took %s: the TTL minus that time and the drift allowance leaves no validity, so it deletes its keys and will retry.",
					sim.Capital(c.name), nodeList(free), sim.Dur(d)))
			case s.redlock:
				retry(fmt.Sprintf("%s sets its key on only %s (%d of %d, no majority), so it deletes them again and will retry.",
					sim.Capital(c.name), nodeList(free), len(free), len(s.nodes)))
			default:
				retry(fmt.Sprintf("%s asks for the lock and gets nil: %s holds it.", sim.Capital(c.name), holder))
			}
		})
	case isUnreachable(err):
		s.later(c, d, late, "SET", func() {
			retry(fmt.Sprintf("%s cannot get an answer from Redis (%s), so it does not know whether it has the lock; it will retry.", sim.Capital(c.name), shortErr(err)))
		})
	default:
		s.fail(fmt.Errorf("%s acquire: %w", c.name, err))
	}
}

// granted makes c a holder, says so, and goes on with then.
func (s *runner) granted(c *client, text string, then func()) {
	c.holding, c.got = true, true
	c.progressAt, c.renewedAt = s.now, s.now
	s.lastGrant = c
	e := Event{Actor: c.name, Kind: KindAcquireOK, Text: text}
	if s.p.Fencing {
		e.Fence = c.lk.Fence()
	}
	s.emit(e)
	s.checkTwoHolders(c)
	then()
}

// isUnreachable reports an error of a node that is down or did not answer.
func isUnreachable(err error) bool {
	var down errDown
	return errors.As(err, &down) || errors.Is(err, context.DeadlineExceeded) || errorsContain(err, "i/o timeout")
}

func errorsContain(err error, sub string) bool {
	return err != nil && strings.Contains(err.Error(), sub)
}

// shortErr is the part of a node error a learner needs.
func shortErr(err error) string {
	var down errDown
	if errors.As(err, &down) {
		return "connection refused: it has crashed"
	}
	return "no reply in time"
}

func (s *runner) acquiredText(c *client, won []int, start time.Duration) string {
	if !s.redlock {
		text := fmt.Sprintf("%s gets the lock: SET %s <its random token> NX PX %d answers OK", sim.Capital(c.name), lockKey, s.p.TTL.Milliseconds())
		if s.failover != nil {
			text += fmt.Sprintf(" from node %d, the primary", c.links[0].node().id)
		}
		if s.p.Fencing {
			text += fmt.Sprintf(", and INCR in the same script gives it fencing token %d", c.lk.Fence())
			for _, o := range s.clients {
				if o != c && o.holding && o.lk != nil && o.lk.Fence() == c.lk.Fence() {
					text += fmt.Sprintf(", the same as %s's: the counter's last increment was lost with the old primary", o.name)
					break
				}
			}
		}
		return text + "."
	}
	reach := ""
	if len(won) < len(s.nodes) {
		reach = " (it cannot reach the others)"
	}
	took := s.now - start
	drift := s.p.TTL - (s.vtime(c.lk.Until()) - start)
	return fmt.Sprintf("%s sets its key on %s%s: %d of %d is a majority, so it holds the lock for %s: the %s TTL minus the %s the attempt took, minus %s allowed for clock drift.",
		sim.Capital(c.name), nodeList(won), reach, len(won), len(s.nodes), sim.Dur(s.vtime(c.lk.Until())-s.now), sim.Dur(s.p.TTL), sim.Dur(took), sim.Dur(drift))
}

// write sends the client's write, with its fencing token, to the storage.
func (s *runner) write(c *client) {
	fence := c.lk.Fence()
	newer := ""
	if s.lastGrant != c {
		newer = s.lastGrant.name
	}
	before := s.store.Highest()
	ok := s.store.Write(fence)
	e := Event{Actor: "storage", Subject: c.name, Fence: fence, Stale: newer != ""}
	if !s.p.Fencing {
		e.Fence = 0
	}
	switch {
	case !ok && newer == "":
		e.Kind = KindWriteRejected
		e.Text = fmt.Sprintf("The storage rejects %s's write: token %d is lower than %d, though %s holds the lock now. The fencing counter went back when Redis lost it.", c.name, fence, s.store.Highest(), c.name)
	case !ok:
		e.Kind = KindWriteRejected
		e.Text = fmt.Sprintf("The storage rejects %s's write: token %d is lower than %d, which it has already seen.", c.name, fence, s.store.Highest())
	case newer == "":
		e.Kind = KindWriteAccepted
		e.Text = fmt.Sprintf("The storage accepts %s's write.", c.name)
		if s.p.Fencing {
			e.Text = fmt.Sprintf("The storage accepts %s's write with token %d.", c.name, fence)
		}
	default:
		e.Kind = KindWriteAccepted
		switch {
		case s.p.Fencing && fence > 0 && fence == before && s.failover != nil:
			e.Text = fmt.Sprintf("The storage accepts %s's write with token %d: %s wrote with %d too, so the storage cannot tell them apart. The counter was lost in the failover: it must live where a failover cannot lose it, such as a consensus store, for tokens to fence.", c.name, fence, newer, fence)
		case s.p.Fencing && fence > 0 && s.lastGrant.lk.Fence() < fence:
			e.Text = fmt.Sprintf("The storage accepts %s's write with token %d: %s holds the lock now, but with token %d, lower. The fencing counter was lost with Redis's data and counted again from 0, so the old token looks newest.", c.name, fence, newer, s.lastGrant.lk.Fence())
		case s.p.Fencing && fence > 0 && fence == before:
			e.Text = fmt.Sprintf("The storage accepts %s's write with token %d: %s has the same token, so the storage cannot tell them apart; the counter was lost and counted again.", c.name, fence, newer)
		case s.p.Fencing && fence > 0:
			e.Text = fmt.Sprintf("The storage accepts %s's write with token %d: the lock has passed to %s, but no newer token has reached the storage yet.", c.name, fence, newer)
		case s.p.Fencing:
			e.Text = fmt.Sprintf("The storage accepts %s's write, though the lock has passed to %s: Redlock hands out no fencing token, so there is nothing to check.", c.name, newer)
		default:
			e.Text = fmt.Sprintf("The storage accepts %s's write, though the lock has passed to %s: without a fencing check it cannot tell.", c.name, newer)
		}
	}
	s.emit(e)
	switch {
	case !ok && newer != "":
		s.outcome(OutcomeStaleWriteRejected, fmt.Sprintf("%s wrote after the lock had passed to %s, but its fencing token was too low and the storage rejected it.", sim.Capital(c.name), newer))
	case ok && newer != "":
		s.outcome(OutcomeStaleWriteAccepted, fmt.Sprintf("The storage accepted a write from %s after the lock had passed to %s.", c.name, newer))
	}
}

// release gives the lock back, with the script or with a plain DEL.
func (s *runner) release(c *client) {
	c.holding = false
	if s.p.Release == ReleaseDel && !s.redlock {
		s.releaseDel(c)
		return
	}
	before := s.holders()
	var err error
	d, late := s.call(func() { err = c.lk.Release(s.ctx) })
	s.replicate(c)
	if err != nil && !errors.Is(err, lock.ErrNotHeld) && !isUnreachable(err) {
		s.fail(fmt.Errorf("%s release: %w", c.name, err))
		return
	}
	e := Event{Actor: c.name, Kind: KindReleaseOK}
	if err != nil {
		e.Kind = KindReleaseNoop
	}
	main := c.links[0].node()
	switch {
	case s.redlock:
		e.Text = s.redlockReleaseText(c, before, err == nil)
	case err == nil:
		e.Text = fmt.Sprintf("%s releases the lock: the script sees its own token and deletes the key.", sim.Capital(c.name))
	case isUnreachable(err):
		e.Text = fmt.Sprintf("%s cannot reach Redis to release the lock (%s); its key, if any is left, expires with its TTL.", sim.Capital(c.name), shortErr(err))
	case before[main.id-1] == "" && s.failover != nil && main != s.nodes[0]:
		e.Text = fmt.Sprintf("%s's release script finds no key on node %d, the primary now: its key was lost in the failover.", sim.Capital(c.name), main.id)
	case before[main.id-1] == "":
		e.Text = fmt.Sprintf("%s's release script finds no key: its lock had already expired.", sim.Capital(c.name))
	default:
		e.Subject = before[main.id-1]
		e.Text = fmt.Sprintf("%s's release script finds %s's token in the key and leaves it alone.", sim.Capital(c.name), e.Subject)
	}
	s.later(c, d, late, "release", func() { s.emit(e) })
}

// redlockReleaseText says on which nodes c's release deleted its key, and
// who holds the others it can reach.
func (s *runner) redlockReleaseText(c *client, before []string, ok bool) string {
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
		return fmt.Sprintf("%s releases the lock; the script deletes its key on %s.", sim.Capital(c.name), nodeList(mine))
	case len(others) > 0:
		return fmt.Sprintf("%s releases; the script deletes its key on %s, but that is no majority: on %s the key is %s's now.",
			sim.Capital(c.name), nodeList(mine), nodeList(others), other)
	}
	return fmt.Sprintf("%s releases; the script deletes its key on %s, but that is no majority any more.", sim.Capital(c.name), nodeList(mine))
}

// releaseDel is the classic mistake: DEL without checking the token.
func (s *runner) releaseDel(c *client) {
	n := c.links[0].node()
	holder := s.holder(n)
	e := Event{Actor: c.name, Kind: KindReleaseOK}
	if err := c.links[0].check(); err != nil {
		e.Kind = KindReleaseNoop
		e.Text = fmt.Sprintf("%s cannot reach Redis to run DEL (%s).", sim.Capital(c.name), shortErr(err))
		s.emit(e)
		return
	}
	if v := n.do(s.ctx, "DEL", lockKey); v.IsError() {
		s.fail(fmt.Errorf("%s DEL: %s", c.name, v.Str))
		return
	}
	s.replicate(c)
	switch holder {
	case c.name:
		e.Text = fmt.Sprintf("%s releases with a plain DEL; the key was still its own.", sim.Capital(c.name))
	case "":
		e.Kind = KindReleaseNoop
		e.Text = fmt.Sprintf("%s runs DEL, but the key is already gone.", sim.Capital(c.name))
	default:
		e.Kind, e.Subject = KindDeleteOther, holder
		e.Text = fmt.Sprintf("%s runs a plain DEL and deletes %s's lock: DEL does not check whose key it is.", sim.Capital(c.name), holder)
	}
	s.emit(e)
	if e.Kind == KindDeleteOther {
		s.outcome(OutcomeForeignLockDeleted, fmt.Sprintf("%s deleted %s's lock with a plain DEL, so nothing kept the next client out while %s still worked.", sim.Capital(c.name), holder, holder))
	}
}

// holders returns the holder of the lock key on each node.
func (s *runner) holders() []string {
	out := make([]string, len(s.nodes))
	for i, n := range s.nodes {
		out[i] = s.holder(n)
	}
	return out
}

// extend renews the lock and then calls next with whether it still holds
// it; on failure the client stops.
func (s *runner) extend(c *client, next func(ok bool)) {
	holder := s.holder(c.links[0].node())
	var err error
	d, late := s.call(func() { err = c.lk.Extend(s.ctx, s.p.TTL) })
	s.replicate(c)
	switch {
	case err == nil:
		c.renewals++
		c.renewedAt = s.now
		s.later(c, d, late, "extension", func() {
			s.emit(Event{Actor: c.name, Kind: KindExtendOK, Text: fmt.Sprintf("%s extends its lock while it still holds it: the TTL is back to %s.", sim.Capital(c.name), sim.Dur(s.p.TTL))})
			next(true)
		})
	case errors.Is(err, lock.ErrNotHeld) || isUnreachable(err):
		c.holding, c.stopped = false, true
		why := "the key is gone"
		switch {
		case isUnreachable(err):
			why = "it cannot reach Redis (" + shortErr(err) + "), so it cannot know it still holds the lock"
		case holder != "" && holder != c.name:
			why = fmt.Sprintf("the key now holds %s's token", holder)
		}
		s.emit(Event{Actor: c.name, Kind: KindExtendFail, Subject: holder,
			Text: fmt.Sprintf("%s tries to extend its lock, but %s; it knows it lost the lock and stops.", sim.Capital(c.name), why)})
		next(false)
	default:
		s.fail(fmt.Errorf("%s extend: %w", c.name, err))
	}
}

// pauseClient freezes c for d: its work moves d later; its timers fall due
// and wait for it. A pause while paused makes the pause last longer, if it
// ends later.
func (s *runner) pauseClient(c *client, d time.Duration) {
	if c.crashed {
		return
	}
	end := s.now + d
	if c.paused && end <= c.pauseEnd {
		s.emit(Event{Actor: c.name, Kind: KindPauseStart, Text: fmt.Sprintf("%s is already frozen until %s; this pause ends sooner and changes nothing.", sim.Capital(c.name), sim.Dur(c.pauseEnd))})
		return
	}
	c.pauseGen++
	gen := c.pauseGen
	// The end is scheduled before shift moves c's work, so that at the
	// same time it comes first.
	s.at(end, func() {
		if c.pauseGen == gen {
			s.resume(c)
		}
	})
	if c.paused {
		s.shift(c, end-c.pauseEnd)
		s.emit(Event{Actor: c.name, Kind: KindPauseStart,
			Text: fmt.Sprintf("%s's pause gets longer: it stays frozen %s more.", sim.Capital(c.name), sim.Dur(end-c.pauseEnd))})
	} else {
		s.shift(c, d)
		c.paused, c.pauseStart = true, s.now
		s.emit(Event{Actor: c.name, Kind: KindPauseStart, Text: sim.PauseStarts(c.name, d, "")})
	}
	c.pauseEnd = end
}

// resume ends c's pause and handles the timers that fell due during it.
func (s *runner) resume(c *client) {
	if c.crashed {
		return
	}
	c.paused = false
	d := s.now - c.pauseStart
	text := fmt.Sprintf("%s runs again, %s later, and carries on where it stopped. It could read its clock now, but a check would not settle it: another pause could come between the check and its write reaching the storage.", sim.Capital(c.name), sim.Dur(d))
	if !c.holding {
		text = fmt.Sprintf("%s runs again, %s later.", sim.Capital(c.name), sim.Dur(d))
	}
	s.emit(Event{Actor: c.name, Kind: KindPauseEnd, Text: text})
	if c.stopDue {
		c.stopDue = false
		s.stop(c)
	}
	if c.renewDue {
		c.renewDue = false
		s.renew(c)
	}
}
