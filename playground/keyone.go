package playground

import (
	"context"
	"fmt"
	"time"

	"github.com/locklab/locklab/resp"
)

// Key describes one key as Keys does, or reports false when there is no
// such key. It costs what reading that one key costs, whatever else the
// sandbox holds: a simulation that watches its lock key after every line
// calls it.
func (s *Sandbox) Key(name string) (KeyInfo, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return KeyInfo{}, false, ErrClosed
	}
	s.tick()
	if !s.m.Exists(name) {
		return KeyInfo{}, false, nil
	}
	ki := KeyInfo{Key: shorten(name, keyWidth), Type: s.m.Type(name), PTTLMS: -1}
	if when := s.expireAt(name); when >= 0 {
		ki.PTTLMS = max(when-s.nowMS(), 0)
	}
	ki.Value = shorten(s.render(name, ki.Type), valueWidth)
	return ki, true, nil
}

// JumpBack moves the sandbox clock back by d, as an operator or a time
// sync may move a server's clock. Redis keeps each expiry as a Unix time,
// so every key with a TTL lives d longer by the new clock; the sandbox
// does the same.
func (s *Sandbox) JumpBack(d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if d <= 0 || d > s.limits.MaxAdvance {
		return fmt.Errorf("move sandbox clock back by %v: %w", d, ErrBadAdvance)
	}
	s.tick()
	for _, k := range s.m.Keys() {
		if _, far := s.far[k]; far {
			continue // its expiry is kept as a Unix time already
		}
		if ttl := s.m.TTL(k); ttl > 0 {
			s.m.SetTTL(k, ttl+d)
		}
	}
	s.offset -= d
	s.writes++
	s.tick()
	return nil
}

// Do runs one command, given as its arguments, under the playground's
// rules and limits, and returns Redis's reply itself rather than what
// redis-cli would print: for a client library (a simulation drives the
// lock package through it), which reads replies, not text. A refusal is
// its (error) reply and the *RefusedError.
func (s *Sandbox) Do(ctx context.Context, client Client, argv []string) (resp.Value, error) {
	c, err := s.connOf(client)
	if err != nil {
		return resp.Value{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return resp.Value{}, ErrClosed
	}
	if len(argv) == 0 {
		return resp.Err("ERR empty command"), nil
	}
	s.ctx, s.lineDeadline, s.scriptTime = ctx, s.runNow().Add(s.limits.Script.Timeout), 0
	defer func() { s.ctx, s.lineDeadline, s.scriptTime = nil, time.Time{}, 0 }()
	s.replyLeft, s.replyOver = s.limits.MaxReplyBuildBytes, false
	v, ref := s.runSafely(c, argv)
	if ref != nil {
		return v, ref
	}
	return v, nil
}

// Empty makes the sandbox as NewSandbox made it, on the same clock and
// options: no keys, no scripts, no clock offset, no connection state. It
// keeps what is costly to build again (the Lua state, miniredis), for a
// caller that runs many short simulations one after another.
func (s *Sandbox) Empty() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.m.FlushAll()
	s.engine.Forget()
	for _, c := range s.conns {
		c.multi, c.dirty, c.queue, c.queued = false, false, nil, 0
	}
	s.dispatch(s.conns[0], "UNWATCH")
	s.dispatch(s.conns[1], "UNWATCH")
	clear(s.far)
	clear(s.previews)
	s.offset = 0
	s.writes++
	s.tick()
	s.keysBound = 0
	s.measure()
	return nil
}

// Load replaces the sandbox's state with snap's, as RestoreSandbox would
// start it, keeping the Lua state and miniredis (see Empty).
func (s *Sandbox) Load(snap Snapshot) error {
	if err := s.Empty(); err != nil {
		return err
	}
	return s.restore(snap)
}

// Peek reads key k without running a command: its value if it is a
// string, its time to live in milliseconds (-1: none), and whether it
// exists. A simulation reads its lock key after every event.
func (s *Sandbox) Peek(k string) (value string, pttlMS int64, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", 0, false
	}
	s.tick()
	if !s.m.Exists(k) {
		return "", 0, false
	}
	pttlMS = -1
	if when := s.expireAt(k); when >= 0 {
		pttlMS = max(when-s.nowMS(), 0)
	}
	if s.m.Type(k) == "string" {
		value, _ = s.m.Get(k)
	}
	return value, pttlMS, true
}
