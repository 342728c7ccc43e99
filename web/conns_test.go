package web

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// connsServer serves handler on a loopback port held to limits by a Conns
// whose clock the test moves (sweepAt); the server's connection states
// arrive on states.
type connsServer struct {
	cs     *Conns
	addr   string
	states chan http.ConnState
}

func newConnsServer(t *testing.T, limits ConnLimits, handler http.Handler) *connsServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &connsServer{cs: NewConns(limits), addr: ln.Addr().String(), states: make(chan http.ConnState, 64)}
	srv := &http.Server{Handler: handler, ConnState: func(_ net.Conn, st http.ConnState) { s.states <- st }}
	done := make(chan error, 1)
	go func() { done <- s.cs.serve(srv, ln, nil) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
	})
	return s
}

// sweepAt sweeps as the tick d after the Conns' start would.
func (s *connsServer) sweepAt(d time.Duration) { s.cs.sweep(s.cs.epoch.Add(d)) }

// assertOpen fails unless want connections are held to the limits, when
// (what the test has just done) says.
func (s *connsServer) assertOpen(t *testing.T, want int, when string) {
	t.Helper()
	if n := s.cs.open(); n != want {
		t.Fatalf("%s: %d connections open; want %d", when, n, want)
	}
}

// await waits for the server to report the connection in state want.
func (s *connsServer) await(t *testing.T, want http.ConnState) {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case st := <-s.states:
			if st == want {
				return
			}
		case <-timeout:
			t.Fatalf("the connection never became %v", want)
		}
	}
}

// dial opens a connection and waits until the server has it.
func (s *connsServer) dial(t *testing.T) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	s.await(t, http.StateNew)
	return c
}

// connGet sends a GET of path on c and reads the answer's status line.
func connGet(t *testing.T, c net.Conn, r *bufio.Reader, path string) string {
	t.Helper()
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.Status
}

// assertClosed fails unless the server has closed c: a read ends
// (without an answer) rather than waiting.
func assertClosed(t *testing.T, c net.Conn, r *bufio.Reader) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, err := r.ReadByte()
	var ne net.Error
	if err == nil || errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the connection is still open (read %q, %v)", b, err)
	}
}

var testLimits = ConnLimits{Header: 10 * time.Second, Request: time.Minute, Idle: 2 * time.Minute}

func okHandler(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }

func TestConnsCloseANewConnectionWithoutHeaders(t *testing.T) {
	s := newConnsServer(t, testLimits, http.HandlerFunc(okHandler))
	c := s.dial(t)
	s.sweepAt(10 * time.Second)
	s.assertOpen(t, 1, "after 10 s without a byte")
	s.sweepAt(11 * time.Second)
	s.assertOpen(t, 0, "after 11 s without a byte")
	assertClosed(t, c, bufio.NewReader(c))
}

func TestConnsCloseAnIdleConnectionAfterIdle(t *testing.T) {
	s := newConnsServer(t, testLimits, http.HandlerFunc(okHandler))
	c := s.dial(t)
	r := bufio.NewReader(c)
	if st := connGet(t, c, r, "/"); st != "200 OK" {
		t.Fatalf("GET / = %s", st)
	}
	s.await(t, http.StateIdle)
	// Idle since the clock's 0: a new request's headers are not what is
	// timed, so ten seconds are nothing.
	s.sweepAt(2 * time.Minute)
	if st := connGet(t, c, r, "/"); st != "200 OK" {
		t.Fatalf("GET / after 2 min idle = %s", st)
	}
	s.await(t, http.StateIdle)
	s.sweepAt(4 * time.Minute) // idle since the sweep at 2 min
	s.assertOpen(t, 1, "after 2 min idle")
	s.sweepAt(4*time.Minute + time.Second)
	assertClosed(t, c, r)
}

func TestConnsCloseARequestWhoseHeadersTrickle(t *testing.T) {
	s := newConnsServer(t, testLimits, http.HandlerFunc(okHandler))
	c := s.dial(t)
	r := bufio.NewReader(c)
	connGet(t, c, r, "/")
	s.await(t, http.StateIdle)
	s.sweepAt(30 * time.Second) // idle, well within its limit
	io.WriteString(c, "GET / HTTP/1.1\r\nHo")
	// Wait until the server has read the first bytes of the request.
	deadline := time.Now().Add(5 * time.Second)
	for !s.begun() {
		if time.Now().After(deadline) {
			t.Fatal("the server never noted the request's first byte")
		}
		time.Sleep(time.Millisecond)
	}
	s.sweepAt(40 * time.Second)
	s.assertOpen(t, 1, "10 s into a request's headers")
	s.sweepAt(41 * time.Second)
	assertClosed(t, c, r)
}

// begun reports whether the one connection has the first byte of a
// request.
func (s *connsServer) begun() bool {
	s.cs.mu.Lock()
	defer s.cs.mu.Unlock()
	for c := range s.cs.conns {
		return c.begun.Load() != 0
	}
	return false
}

func TestConnsCloseARequestThatTakesTooLong(t *testing.T) {
	entered, cancelled := make(chan struct{}), make(chan struct{})
	s := newConnsServer(t, testLimits, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			close(entered)
			<-r.Context().Done()
			close(cancelled)
			return
		}
		okHandler(w, r)
	}))
	c := s.dial(t)
	r := bufio.NewReader(c)
	io.WriteString(c, "POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
	<-entered
	s.sweepAt(time.Minute)
	s.assertOpen(t, 1, "a minute into a request")
	s.sweepAt(time.Minute + time.Second)
	assertClosed(t, c, r)
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the request's context was not cancelled when its connection was closed")
	}
}

func TestConnsLeaveAStreamWithItsOwnDeadline(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	s := newConnsServer(t, testLimits, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		rc.SetWriteDeadline(time.Now().Add(time.Hour))
		io.WriteString(w, "event: a\n\n")
		rc.Flush()
		close(entered)
		<-release
		io.WriteString(w, "event: b\n\n")
	}))
	c := s.dial(t)
	r := bufio.NewReader(c)
	io.WriteString(c, "GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
	<-entered
	s.sweepAt(time.Hour)
	s.assertOpen(t, 1, "an hour into a stream with its own deadline")
	close(release)
	res, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(res.Body)
	if err != nil || !strings.Contains(string(body), "event: b") {
		t.Fatalf("stream = %q, %v; want both events", body, err)
	}
	// The next request on the connection is held to the limits again.
	s.await(t, http.StateIdle)
	s.sweepAt(3 * time.Hour)
	assertClosed(t, c, r)
}

func TestConnsForgetClosedConnections(t *testing.T) {
	s := newConnsServer(t, testLimits, http.HandlerFunc(okHandler))
	for range 3 {
		c := s.dial(t)
		r := bufio.NewReader(c)
		connGet(t, c, r, "/")
		c.Close()
		s.await(t, http.StateClosed)
	}
	s.assertOpen(t, 0, "after three closed")
}

// BenchmarkConnLimits serves a small page over loopback, with keep-alive,
// from a server that keeps its time limits with net/http's timeouts
// ("timeouts": ReadHeaderTimeout, ReadTimeout, WriteTimeout and
// IdleTimeout), with Conns ("conns"), and with none ("none"), the
// yardstick: what the limits cost is the difference. The clients write
// their requests and read the answers on raw connections, so that little
// of the time is theirs.
func BenchmarkConnLimits(b *testing.B) {
	page := []byte(strings.Repeat("<p>Distributed locks and their caveats.</p>\n", 64))
	length := strconv.Itoa(len(page))
	handler := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Length", length)
		w.Write(page)
	})
	request := []byte("GET / HTTP/1.1\r\nHost: bench\r\n\r\n")
	for _, mode := range []string{"none", "timeouts", "conns"} {
		b.Run(mode, func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			srv := &http.Server{Handler: handler}
			done := make(chan error, 1)
			switch mode {
			case "timeouts":
				l := testLimits
				srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout = l.Header, 30*time.Second, l.Request, l.Idle
				go func() { done <- srv.Serve(ln) }()
			case "conns":
				go func() { done <- NewConns(testLimits).Serve(srv, ln) }()
			default:
				go func() { done <- srv.Serve(ln) }()
			}
			defer func() { srv.Close(); <-done }()
			b.SetParallelism(4)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				c, err := net.Dial("tcp", ln.Addr().String())
				if err != nil {
					b.Error(err)
					return
				}
				defer c.Close()
				r := bufio.NewReader(c)
				for pb.Next() {
					if _, err := c.Write(request); err != nil {
						b.Error(err)
						return
					}
					// The headers, then the page's bytes.
					for {
						line, err := r.ReadSlice('\n')
						if err != nil {
							b.Error(err)
							return
						}
						if len(line) == 2 {
							break
						}
					}
					if _, err := r.Discard(len(page)); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
