package web

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
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

// Conns holds the connections of a server to their ConnLimits.
type Conns struct {
	limits ConnLimits
	epoch  time.Time
	// now is the time of the last tick, in milliseconds since epoch.
	now atomic.Int64

	mu    sync.Mutex
	conns map[*timedConn]struct{}
}

// NewConns returns a Conns with limits; Serve puts it to work.
func NewConns(limits ConnLimits) *Conns {
	return &Conns{limits: limits, epoch: time.Now(), conns: map[*timedConn]struct{}{}}
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
			delete(cs.conns, c)
		}
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
	case http.StateActive, http.StateIdle:
		c.begun.Store(0)
		c.state.Store(cs.now.Load()<<8 | int64(st))
	case http.StateHijacked, http.StateClosed:
		// No longer the server's to time: a hijacker times its own.
		cs.forget(c)
	}
}

func (cs *Conns) forget(c *timedConn) {
	cs.mu.Lock()
	delete(cs.conns, c)
	cs.mu.Unlock()
}

// timedListener hands out its connections as timedConns.
type timedListener struct {
	net.Listener
	cs *Conns
}

func (l *timedListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	c := &timedConn{Conn: nc, cs: l.cs}
	c.state.Store(l.cs.now.Load()<<8 | int64(http.StateNew))
	l.cs.mu.Lock()
	l.cs.conns[c] = struct{}{}
	l.cs.mu.Unlock()
	return c, nil
}

// timedConn is a connection with what the sweep needs to know of it.
type timedConn struct {
	net.Conn
	cs *Conns
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
