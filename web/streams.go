package web

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
)

// openStream admits an event stream of the request's learner from its
// client address under the stream caps (limit.Streams), or answers the
// refusal: 429 with Retry-After. A refused page falls back to asking
// every few seconds. The caller must call done when the stream ends.
func (s *Server) openStream(c echo.Context) (done func(), err error) {
	done, d := s.streams.Open(s.learnerID(c), clientAddress(c))
	if d.Allowed() {
		return done, nil
	}
	caps := s.streams.Caps()
	var msg string
	switch d.Limit {
	case "streams_per_learner":
		msg = fmt.Sprintf("you have %d live updates open already (one per open page); close a tab, or this page will ask for news every few seconds instead", caps.PerLearner)
	case "streams_per_address":
		msg = fmt.Sprintf("your address has %d live updates open already; this page will ask for news every few seconds instead", caps.PerAddress)
	default:
		msg = "the server has as many live updates open as it may; this page will ask for news every few seconds instead"
	}
	return done, s.refused(c, d, msg)
}

// The reconnection delay a closing stream gives its browser (the SSE
// retry field): spread between the two, so that a workshop's pages do not
// all come back to the other replicas in the same instant.
const (
	reconnectMin    = 500 * time.Millisecond
	reconnectSpread = 2 * time.Second
)

// closingWriteTimeout bounds the last write of a closing stream, and a
// write that was under way when the streams were closed: a client that
// stopped reading must not hold the server's shutdown.
const closingWriteTimeout = time.Second

// openStreams are the event streams being served, so that CloseStreams
// can end them: closing is closed once, and each stream's write deadline
// is cut short then, in case it is blocked writing to a slow client.
type openStreams struct {
	mu      sync.Mutex
	closing chan struct{}
	closed  bool
	writers map[*http.ResponseController]struct{}
}

func newOpenStreams() *openStreams {
	return &openStreams{closing: make(chan struct{}), writers: map[*http.ResponseController]struct{}{}}
}

// add counts a stream in; it reports false once the streams are closed,
// when the stream must end at once.
func (o *openStreams) add(rc *http.ResponseController) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return false
	}
	o.writers[rc] = struct{}{}
	return true
}

// extend gives the stream's next write until at, unless the streams are
// closed: the deadline CloseStreams set then stands.
func (o *openStreams) extend(rc *http.ResponseController, at time.Time) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return false
	}
	_ = rc.SetWriteDeadline(at)
	return true
}

// len is how many streams are being served.
func (o *openStreams) len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.writers)
}

func (o *openStreams) remove(rc *http.ResponseController) {
	o.mu.Lock()
	delete(o.writers, rc)
	o.mu.Unlock()
}

// CloseStreams ends every event stream, and any that opens later: each is
// sent a reconnection delay (an SSE retry field, a few hundred
// milliseconds to a few seconds) and closed, so its page's EventSource
// comes back by itself, behind a load balancer to another replica, while
// the page's script knows nothing changed. The binary calls it when it
// shuts down, after it stops accepting connections, so that
// http.Server.Shutdown does not wait for streams that never end of
// themselves.
func (s *Server) CloseStreams() {
	o := s.open
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	o.closed = true
	close(o.closing)
	at := time.Now().Add(closingWriteTimeout)
	for rc := range o.writers {
		_ = rc.SetWriteDeadline(at)
	}
}

// sayReconnect writes a closing stream's last words: when to come back.
func sayReconnect(w *echo.Response, rc *http.ResponseController) {
	_ = rc.SetWriteDeadline(time.Now().Add(closingWriteTimeout))
	wait := reconnectMin + rand.N(reconnectSpread)
	if _, err := fmt.Fprintf(w, "retry: %d\n\n", wait.Milliseconds()); err == nil {
		w.Flush()
	}
}
