package web

import (
	"container/heap"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Connection time limits. net/http's ReadHeaderTimeout, ReadTimeout,
// WriteTimeout and IdleTimeout each move a deadline of the connection's
// for every request: five timer changes and three clock reads a request,
// which cost a small page some 6% of its speed. Conns keeps the same kind
// of limits on a clock that ticks once a second instead: each connection
// notes its state as net/http reports it (http.Server.ConnState) and when
// the first byte of a request came, and a sweep once a second closes the
// connections that have overstayed. A limit then holds to within two
// seconds of its value, which is all a limit against slow clients needs.
//
// Conns also caps how many connections each client address holds
// (ConnCaps), counted as they are accepted and as net/http reports them
// idle, so that one address cannot take the file descriptors every
// other client needs.

// ConnLimits are how long a connection may take over each part of its
// life; a connection that takes longer is closed.
type ConnLimits struct {
	// Header bounds a request's headers, from their first byte (from the
	// connection's start, for its first request).
	Header time.Duration
	// Request bounds a request once its headers are in: reading its body,
	// handling it and writing the answer. A handler that sets a write
	// deadline of its own (an event stream does, for each event) is held
	// to that instead.
	Request time.Duration
	// Idle bounds a kept-alive connection waiting for its next request.
	Idle time.Duration
}

// ConnCaps bound how many connections the server holds, so that one
// client cannot take the file descriptors that every other client needs:
// a process out of descriptors accepts nobody, not even /healthz.
// Connections are counted by their peer's address, an IPv6 one by its
// /64, as the request limits count clients (addressGroup).
type ConnCaps struct {
	// PerAddress is the most connections one address may hold open; one
	// more is closed as soon as it is accepted. Zero is no cap.
	PerAddress int
	// IdlePerAddress is the most connections one address may hold idle
	// (kept alive between requests, or open without a request yet); a
	// connection that goes idle beyond it is closed. Zero is no cap.
	IdlePerAddress int
	// Max is how many connections fit in the descriptors the process
	// has, less those it needs for its files, workers and stores. From
	// Max on, a new connection makes room by closing an idle connection
	// of the address that holds the most, or is closed itself if it is
	// that address's. Zero is no ceiling; an accept that fails for want
	// of descriptors makes room all the same.
	Max int
	// Exempt are peers held to no per-address cap: the trusted proxies,
	// whose connections carry every client behind them. Their idle
	// connections still make room when descriptors run low.
	Exempt []netip.Prefix
}

// The default per-address connection caps. A browser opens at most six
// connections to a site and keeps one or two alive; a room of a few dozen
// learners behind one NAT fits in them. A larger room behind one address
// needs them raised, or a trusted proxy in front.
const (
	DefaultConnsPerAddress     = 256
	DefaultIdleConnsPerAddress = 64
)

// Conns holds the connections of a server to their ConnLimits and
// ConnCaps.
type Conns struct {
	limits ConnLimits
	caps   ConnCaps
	epoch  time.Time
	// now is the time of the last tick, in milliseconds since epoch.
	now atomic.Int64

	mu    sync.Mutex
	conns map[*timedConn]struct{}
	peers map[string]*peer // by address group, those with a connection open
	// busiest orders peers by open connections, the most first: the
	// address that gives up an idle connection when descriptors run low.
	busiest peerHeap

	// refused counts connections closed at accept (a cap), evicted idle
	// connections closed to make room for others.
	refused, evicted atomic.Int64
}

// NewConns returns a Conns with limits and caps; Serve puts it to work.
func NewConns(limits ConnLimits, caps ConnCaps) *Conns {
	return &Conns{limits: limits, caps: caps, epoch: time.Now(), conns: map[*timedConn]struct{}{}, peers: map[string]*peer{}}
}

// peer is one address group's connections.
type peer struct {
	key    string
	exempt bool
	open   int                     // connections open; under Conns.mu
	conns  map[*timedConn]struct{} // under Conns.mu
	index  int                     // in Conns.busiest; under Conns.mu
	// idle counts the connections that are idle (timedConn.idle).
	idle atomic.Int32
}

// Serve serves srv on ln as srv.Serve does, with the connections held to
// the limits: it sets srv.ConnState (calling the hook srv had after its
// own) and sweeps once a second until Serve returns. srv should set none
// of its own timeouts but MaxHeaderBytes; they would cost what Conns
// saves.
func (cs *Conns) Serve(srv *http.Server, ln net.Listener) error {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	return cs.serve(srv, ln, t.C)
}

// serve is Serve with the sweeps' times coming from ticks.
func (cs *Conns) serve(srv *http.Server, ln net.Listener, ticks <-chan time.Time) error {
	hook := srv.ConnState
	srv.ConnState = func(c net.Conn, st http.ConnState) {
		cs.connState(c, st)
		if hook != nil {
			hook(c, st)
		}
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case now := <-ticks:
				cs.sweep(now)
			}
		}
	}()
	return srv.Serve(&timedListener{Listener: ln, cs: cs})
}

// open reports how many connections are held to the limits.
func (cs *Conns) open() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return len(cs.conns)
}

// sweep sets the clock to now and closes the connections that have
// overstayed their limits.
func (cs *Conns) sweep(now time.Time) {
	ms := now.Sub(cs.epoch).Milliseconds()
	cs.now.Store(ms)
	var late []*timedConn
	cs.mu.Lock()
	for c := range cs.conns {
		if c.overstayed(ms, cs.limits) {
			late = append(late, c)
		}
	}
	for _, c := range late {
		cs.drop(c)
	}
	cs.mu.Unlock()
	for _, c := range late {
		// The connection's goroutine in net/http sees its read or write
		// fail and ends it; its request's context is cancelled.
		c.Conn.Close()
	}
}

func (cs *Conns) connState(nc net.Conn, st http.ConnState) {
	c, ok := nc.(*timedConn)
	if !ok {
		return
	}
	switch st {
	case http.StateActive:
		c.begun.Store(0)
		c.state.Store(cs.now.Load()<<8 | int64(st))
		c.setIdle(false)
	case http.StateIdle:
		c.begun.Store(0)
		c.state.Store(cs.now.Load()<<8 | int64(st))
		if n := c.setIdle(true); n > int32(cs.caps.IdlePerAddress) && cs.caps.IdlePerAddress > 0 && !c.peer.exempt {
			// The address keeps enough idle already: this one, the
			// newest to go idle, is dropped. Its answer has been
			// written; the client opens another for its next request.
			cs.refused.Add(1)
			c.Close()
		}
	case http.StateHijacked, http.StateClosed:
		// No longer the server's to time: a hijacker times its own.
		cs.forget(c)
	}
}

func (cs *Conns) forget(c *timedConn) {
	cs.mu.Lock()
	cs.drop(c)
	cs.mu.Unlock()
}

// drop forgets c, if it is still held, with its share of its address's
// counts. cs.mu is held.
func (cs *Conns) drop(c *timedConn) {
	if _, ok := cs.conns[c]; !ok {
		return
	}
	delete(cs.conns, c)
	c.gone.Store(true)
	c.setIdle(false)
	p := c.peer
	delete(p.conns, c)
	p.open--
	if p.open == 0 {
		heap.Remove(&cs.busiest, p.index)
		delete(cs.peers, p.key)
		return
	}
	heap.Fix(&cs.busiest, p.index)
}

// admit holds nc to the limits and the caps, or refuses it (nil): its
// address holds as many connections as it may, or descriptors run low
// and its address holds the most. It returns the idle connection to close
// to make room, if any.
func (cs *Conns) admit(nc net.Conn) (c *timedConn, evict *timedConn) {
	key, ip := peerKey(nc.RemoteAddr())
	cs.mu.Lock()
	defer cs.mu.Unlock()
	p := cs.peers[key]
	if p == nil {
		p = &peer{key: key, exempt: cs.exempt(ip), conns: map[*timedConn]struct{}{}, index: -1}
	}
	if !p.exempt && cs.caps.PerAddress > 0 && p.open >= cs.caps.PerAddress {
		return nil, nil
	}
	if cs.caps.Max > 0 && len(cs.conns) >= cs.caps.Max && len(cs.busiest) > 0 {
		top := cs.busiest[0]
		if top == p && !p.exempt {
			return nil, nil
		}
		if evict = top.idleConn(cs.now.Load()); evict != nil {
			cs.drop(evict)
		}
		// Without an idle connection to close, the new one comes in
		// all the same: Max leaves descriptors in reserve, and an
		// accept that fails for want of them makes room (Accept).
	}
	if p.index < 0 {
		cs.peers[key] = p
		heap.Push(&cs.busiest, p)
	}
	c = &timedConn{Conn: nc, cs: cs, peer: p}
	c.state.Store(cs.now.Load()<<8 | int64(http.StateNew))
	c.setIdle(true)
	cs.conns[c] = struct{}{}
	p.conns[c] = struct{}{}
	p.open++
	heap.Fix(&cs.busiest, p.index)
	return c, evict
}

// makeRoom closes up to n idle connections of the address that holds
// the most, for when the process has run out of descriptors. It reports
// whether it closed any.
func (cs *Conns) makeRoom(n int) bool {
	var evict []*timedConn
	cs.mu.Lock()
	if len(cs.busiest) > 0 {
		top, now := cs.busiest[0], cs.now.Load()
		for len(evict) < n {
			c := top.idleConn(now)
			if c == nil {
				break
			}
			cs.drop(c)
			evict = append(evict, c)
		}
	}
	cs.mu.Unlock()
	for _, c := range evict {
		cs.evicted.Add(1)
		c.Conn.Close()
	}
	return len(evict) > 0
}

// exempt reports whether a peer at ip is held to no per-address cap.
func (cs *Conns) exempt(ip netip.Addr) bool {
	for _, p := range cs.caps.Exempt {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// peerKey is the address group a connection's peer is counted by, and
// its address (invalid for a peer that is not TCP).
func peerKey(a net.Addr) (string, netip.Addr) {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return a.String(), netip.Addr{}
	}
	ip := ta.AddrPort().Addr().Unmap()
	return groupOf(ip), ip
}

// idleScan bounds how many of an address's connections are looked at for
// an idle one to close: the map's order is random, so an address whose
// connections are mostly idle gives one up at once, and one whose are
// all busy costs no more than this.
const idleScan = 64

// idleConn returns one of p's connections that has no request in
// flight, or nil, at now on the Conns' clock. Conns.mu is held.
func (p *peer) idleConn(now int64) *timedConn {
	seen := 0
	for c := range p.conns {
		if c.idleNow(now) {
			return c
		}
		if seen++; seen == idleScan {
			break
		}
	}
	return nil
}

// peerHeap orders peers by open connections, the most first.
type peerHeap []*peer

func (h peerHeap) Len() int           { return len(h) }
func (h peerHeap) Less(i, j int) bool { return h[i].open > h[j].open }
func (h peerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *peerHeap) Push(x any) {
	p := x.(*peer)
	p.index = len(*h)
	*h = append(*h, p)
}
func (h *peerHeap) Pop() any {
	old := *h
	p := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	p.index = -1
	return p
}

// roomOnNoFile is how many idle connections an accept that fails for want
// of descriptors closes: net/http waits a few milliseconds before it tries
// again, by when their descriptors are free.
const roomOnNoFile = 4

// timedListener hands out its connections as timedConns, and closes
// those that the caps refuse at once.
type timedListener struct {
	net.Listener
	cs *Conns
}

func (l *timedListener) Accept() (net.Conn, error) {
	for {
		nc, err := l.Listener.Accept()
		if err != nil {
			if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
				l.cs.makeRoom(roomOnNoFile)
			}
			return nil, err
		}
		c, evict := l.cs.admit(nc)
		if evict != nil {
			l.cs.evicted.Add(1)
			evict.Conn.Close()
		}
		if c == nil {
			l.cs.refused.Add(1)
			nc.Close()
			continue
		}
		return c, nil
	}
}

// timedConn is a connection with what the sweep and the caps need to
// know of it.
type timedConn struct {
	net.Conn
	cs   *Conns
	peer *peer
	// idle says that the connection is counted in peer.idle: open
	// without a request in flight. gone says that Conns has dropped it.
	idle, gone atomic.Bool
	// state is the connection's http.ConnState and since when, on the
	// Conns' clock: since<<8 | state.
	state atomic.Int64
	// begun is when the first byte of the next request came, plus one
	// (zero before it), while the connection is new or idle.
	begun atomic.Int64
	// own says that the handler set a write deadline of its own.
	own atomic.Bool
}

func (c *timedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && c.begun.Load() == 0 && http.ConnState(c.state.Load()&0xff) != http.StateActive {
		c.begun.Store(c.cs.now.Load() + 1)
	}
	return n, err
}

// SetWriteDeadline notes a deadline the handler sets (through
// http.ResponseController): the request is then held to it, not to
// ConnLimits.Request. net/http clears it after each request.
func (c *timedConn) SetWriteDeadline(t time.Time) error {
	c.own.Store(!t.IsZero())
	return c.Conn.SetWriteDeadline(t)
}

// CloseWrite half-closes the connection, as net/http does before it
// closes one whose request body it did not read.
func (c *timedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *timedConn) Close() error {
	c.cs.forget(c)
	return c.Conn.Close()
}

// setIdle counts the connection idle or not in its address's count, and
// returns that count.
func (c *timedConn) setIdle(idle bool) int32 {
	if !c.idle.CompareAndSwap(!idle, idle) {
		return c.peer.idle.Load()
	}
	if !idle {
		return c.peer.idle.Add(-1)
	}
	n := c.peer.idle.Add(1)
	if c.gone.Load() && c.idle.CompareAndSwap(true, false) {
		// Dropped meanwhile: drop saw it busy, so it is uncounted here.
		return c.peer.idle.Add(-1)
	}
	return n
}

// idleNow reports whether the connection has no request in flight, at
// now on the Conns' clock: it is kept alive between requests, or has
// been open for a tick of the clock without a byte of a request. A
// connection just made is left alone: its request is on its way.
func (c *timedConn) idleNow(now int64) bool {
	packed := c.state.Load()
	st, since := http.ConnState(packed&0xff), packed>>8
	if c.begun.Load() != 0 {
		return false
	}
	return st == http.StateIdle || st == http.StateNew && since < now
}

// overstayed reports whether the connection has been longer than limits
// allow in its state, at now (milliseconds on the Conns' clock).
func (c *timedConn) overstayed(now int64, limits ConnLimits) bool {
	packed := c.state.Load()
	st, since := http.ConnState(packed&0xff), packed>>8
	over := func(from int64, limit time.Duration) bool {
		return limit > 0 && now-from > limit.Milliseconds()
	}
	switch st {
	case http.StateNew:
		return over(since, limits.Header)
	case http.StateIdle:
		if begun := c.begun.Load(); begun != 0 {
			return over(begun-1, limits.Header)
		}
		return over(since, limits.Idle)
	case http.StateActive:
		return !c.own.Load() && over(since, limits.Request)
	}
	return false
}
