package web

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"syscall"
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
	return newCappedServer(t, limits, ConnCaps{}, nil, handler)
}

// newCappedServer is newConnsServer with caps, on wrap(ln) if wrap is
// set.
func newCappedServer(t *testing.T, limits ConnLimits, caps ConnCaps, wrap func(net.Listener) net.Listener, handler http.Handler) *connsServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &connsServer{cs: NewConns(limits, caps), addr: ln.Addr().String(), states: make(chan http.ConnState, 64)}
	if wrap != nil {
		ln = wrap(ln)
	}
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
				go func() { done <- NewConns(testLimits, ConnCaps{}).Serve(srv, ln) }()
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

// dialFrom opens a connection from the loopback address ip (127.0.0.x:
// every one of them is the loopback on Linux), as a client of another
// address would.
func (s *connsServer) dialFrom(t *testing.T, ip string) (net.Conn, *bufio.Reader) {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", s.addr)
	if err != nil {
		t.Fatalf("dial from %s: %v", ip, err)
	}
	t.Cleanup(func() { c.Close() })
	return c, bufio.NewReader(c)
}

// idleFrom opens a connection from ip that has had one answer and is
// kept alive, idle.
func (s *connsServer) idleFrom(t *testing.T, ip string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, r := s.dialFrom(t, ip)
	s.await(t, http.StateNew)
	if st := connGet(t, c, r, "/"); st != "200 OK" {
		t.Fatalf("GET / from %s = %s", ip, st)
	}
	s.await(t, http.StateIdle)
	return c, r
}

// assertServes fails unless c answers a GET.
func assertServes(t *testing.T, c net.Conn, r *bufio.Reader, what string) {
	t.Helper()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	res, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("%s: no answer: %v", what, err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	c.SetDeadline(time.Time{})
}

// closedNow reports whether the server has closed c, waiting briefly for
// a close on its way.
func closedNow(c net.Conn, r *bufio.Reader) bool {
	c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	defer c.SetReadDeadline(time.Time{})
	_, err := r.Peek(1)
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

func TestConnsCapPerAddressAtAccept(t *testing.T) {
	s := newCappedServer(t, testLimits, ConnCaps{PerAddress: 2}, nil, http.HandlerFunc(okHandler))
	a1, r1 := s.idleFrom(t, "127.0.0.2")
	a2, _ := s.dialFrom(t, "127.0.0.2")
	s.await(t, http.StateNew)
	// The address's third is refused, the newest: closed at accept.
	a3, r3 := s.dialFrom(t, "127.0.0.2")
	io.WriteString(a3, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	assertClosed(t, a3, r3)
	if n := s.cs.refused.Load(); n != 1 {
		t.Errorf("%d connections refused; want 1", n)
	}
	// The address's first two, and another address, are served.
	assertServes(t, a1, r1, "the address's first connection")
	b, rb := s.dialFrom(t, "127.0.0.3")
	assertServes(t, b, rb, "another address's connection")
	s.assertOpen(t, 3, "two of one address and one of another")
	// One of the two closes: the address may open another.
	a2.Close()
	s.await(t, http.StateClosed)
	a4, r4 := s.dialFrom(t, "127.0.0.2")
	assertServes(t, a4, r4, "a connection after one of the address's closed")
}

func TestConnsExemptPeers(t *testing.T) {
	s := newCappedServer(t, testLimits, ConnCaps{PerAddress: 1, IdlePerAddress: 1, Exempt: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}}, nil, http.HandlerFunc(okHandler))
	var conns []net.Conn
	var readers []*bufio.Reader
	for range 3 {
		c, r := s.idleFrom(t, "127.0.0.2")
		conns, readers = append(conns, c), append(readers, r)
	}
	for i := range conns {
		assertServes(t, conns[i], readers[i], "a trusted proxy's connection")
	}
	s.assertOpen(t, 3, "three of a trusted proxy, over caps of one")
}

func TestConnsCapIdlePerAddress(t *testing.T) {
	s := newCappedServer(t, testLimits, ConnCaps{IdlePerAddress: 2}, nil, http.HandlerFunc(okHandler))
	a1, r1 := s.idleFrom(t, "127.0.0.2")
	a2, r2 := s.idleFrom(t, "127.0.0.2")
	// The third goes idle beyond the cap: it is dropped, once answered.
	a3, r3 := s.dialFrom(t, "127.0.0.2")
	s.await(t, http.StateNew)
	if st := connGet(t, a3, r3, "/"); st != "200 OK" {
		t.Fatalf("the third connection's GET = %s; want its answer before it is dropped", st)
	}
	assertClosed(t, a3, r3)
	assertServes(t, a1, r1, "the first idle connection")
	assertServes(t, a2, r2, "the second idle connection")
	// Another address has caps of its own.
	b1, rb1 := s.idleFrom(t, "127.0.0.3")
	b2, rb2 := s.idleFrom(t, "127.0.0.3")
	assertServes(t, b1, rb1, "another address's first")
	assertServes(t, b2, rb2, "another address's second")
}

func TestConnsMakeRoomFromTheBusiestAddress(t *testing.T) {
	s := newCappedServer(t, testLimits, ConnCaps{Max: 4}, nil, http.HandlerFunc(okHandler))
	type held struct {
		c net.Conn
		r *bufio.Reader
	}
	var busy []held
	for range 3 {
		c, r := s.idleFrom(t, "127.0.0.2")
		busy = append(busy, held{c, r})
	}
	o, ro := s.idleFrom(t, "127.0.0.3")
	// Full: a newcomer from another address gets in, and the busiest
	// address gives up one idle connection for it.
	n, rn := s.dialFrom(t, "127.0.0.4")
	assertServes(t, n, rn, "a newcomer when the connections are at Max")
	closed := 0
	for _, h := range busy {
		if closedNow(h.c, h.r) {
			closed++
		}
	}
	if closed != 1 {
		t.Errorf("%d of the busiest address's idle connections closed; want 1", closed)
	}
	assertServes(t, o, ro, "the other address's connection")
	// Full again, and the busiest address asks for one more: it is
	// refused itself rather than take someone else's.
	x, rx := s.dialFrom(t, "127.0.0.2")
	io.WriteString(x, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	assertClosed(t, x, rx)
	assertServes(t, n, rn, "the newcomer, after the busiest address asked for more")
	assertServes(t, o, ro, "the other address, after the busiest address asked for more")
}

// noFileListener fails its next Accept for want of descriptors when told
// to (fail), as a listener of a process at its limit does.
type noFileListener struct {
	net.Listener
	fail   chan struct{}
	failed chan struct{}
}

func (l *noFileListener) Accept() (net.Conn, error) {
	select {
	case <-l.fail:
		defer close(l.failed)
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept", syscall.EMFILE)}
	default:
		return l.Listener.Accept()
	}
}

func TestConnsMakeRoomWhenOutOfDescriptors(t *testing.T) {
	nf := &noFileListener{fail: make(chan struct{}, 1), failed: make(chan struct{})}
	s := newCappedServer(t, testLimits, ConnCaps{}, func(ln net.Listener) net.Listener { nf.Listener = ln; return nf }, http.HandlerFunc(okHandler))
	var busy []net.Conn
	var readers []*bufio.Reader
	for range 3 {
		c, r := s.idleFrom(t, "127.0.0.2")
		busy, readers = append(busy, c), append(readers, r)
	}
	o, ro := s.idleFrom(t, "127.0.0.3")
	// The next accept fails: it comes after the one the server waits in,
	// which a new connection ends.
	nf.fail <- struct{}{}
	n, rn := s.dialFrom(t, "127.0.0.4")
	assertServes(t, n, rn, "a newcomer")
	<-nf.failed
	closed := 0
	for i := range busy {
		if closedNow(busy[i], readers[i]) {
			closed++
		}
	}
	if want := min(roomOnNoFile, 3); closed == 0 || closed > want {
		t.Errorf("%d of the busiest address's idle connections closed when descriptors ran out; want 1 to %d", closed, want)
	}
	assertServes(t, o, ro, "the other address's connection")
	assertServes(t, n, rn, "the newcomer's")
	m, rm := s.dialFrom(t, "127.0.0.5")
	assertServes(t, m, rm, "a connection after the failed accept")
}

func TestConnsCountsAreReleased(t *testing.T) {
	s := newCappedServer(t, testLimits, ConnCaps{PerAddress: 2, IdlePerAddress: 2, Max: 10}, nil, http.HandlerFunc(okHandler))
	for _, ip := range []string{"127.0.0.2", "127.0.0.2", "127.0.0.3"} {
		c, _ := s.idleFrom(t, ip)
		c.Close()
		s.await(t, http.StateClosed)
	}
	s.cs.sweep(s.cs.epoch.Add(time.Hour)) // and a sweep that finds nothing
	s.cs.mu.Lock()
	defer s.cs.mu.Unlock()
	if len(s.cs.conns) != 0 || len(s.cs.peers) != 0 || len(s.cs.busiest) != 0 {
		t.Errorf("after every connection closed: %d connections, %d addresses, %d in the heap; want none", len(s.cs.conns), len(s.cs.peers), len(s.cs.busiest))
	}
}

func TestPeerKey(t *testing.T) {
	for _, tt := range []struct {
		addr string
		want string
	}{
		{"192.0.2.7:4000", "192.0.2.7"},
		{"[::ffff:192.0.2.7]:4000", "192.0.2.7"},
		{"[2001:db8:1:2::1]:4000", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:ffff:ffff:ffff:ffff]:4000", "2001:db8:1:2::/64"},
		{"[2001:db8:1:3::1]:4000", "2001:db8:1:3::/64"},
		{"[fe80::1%eth0]:4000", "fe80::/64"},
	} {
		ap := netip.MustParseAddrPort(tt.addr)
		got, _ := peerKey(net.TCPAddrFromAddrPort(ap))
		if got != tt.want {
			t.Errorf("peerKey(%s) = %q; want %q", tt.addr, got, tt.want)
		}
		if g := addressGroup(ap.Addr().String()); g != tt.want {
			t.Errorf("addressGroup(%s) = %q; want %q, as the connections are counted", ap.Addr(), g, tt.want)
		}
	}
}
