package attack

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Long-lived connections under attack: a learner and an address opening
// event streams by the thousand, and one address holding more idle
// connections than the server has file descriptors.

// The servers' default stream caps (limit.DefaultStreamsPerLearner and
// limit.DefaultStreamsPerAddress).
const (
	streamsPerLearner = 4
	streamsPerAddress = 32
)

// streamOpener opens event streams and keeps those the server admits
// until close.
type streamOpener struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// held and refused (429 with Retry-After) count the streams opened;
	// other counts any other answer, first says what the first was.
	held, refused, other atomic.Int64
	mu                   sync.Mutex
	first                string
}

func newStreamOpener() *streamOpener {
	ctx, cancel := context.WithCancel(context.Background())
	return &streamOpener{ctx: ctx, cancel: cancel}
}

// open asks for b's event stream; a stream the server admits is read
// until close, as a page would.
func (o *streamOpener) open(b *browser) {
	// Ten seconds for the answer's headers; an admitted stream then lives
	// as long as o.
	ctx, cancel := context.WithCancel(o.ctx)
	timer := time.AfterFunc(10*time.Second, cancel)
	defer timer.Stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.srv.base+"/api/workshop/events", nil)
	if err != nil {
		cancel()
		o.fail(err.Error())
		return
	}
	if b.xff != "" {
		req.Header.Set("X-Forwarded-For", b.xff)
	}
	resp, err := b.c.Do(req)
	if err != nil {
		cancel()
		o.fail(err.Error())
		return
	}
	switch {
	case resp.StatusCode == http.StatusOK && resp.Header.Get("Content-Type") == "text/event-stream":
		if !timer.Stop() {
			o.fail("the stream's headers came after its timeout")
			resp.Body.Close()
			return
		}
		o.held.Add(1)
		o.wg.Go(func() {
			defer cancel()
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		})
		return
	case resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") != "":
		o.refused.Add(1)
	default:
		o.fail(fmt.Sprintf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type")))
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	cancel()
}

func (o *streamOpener) fail(what string) {
	o.other.Add(1)
	o.mu.Lock()
	if o.first == "" {
		o.first = what
	}
	o.mu.Unlock()
}

// close ends every stream held.
func (o *streamOpener) close() {
	o.cancel()
	o.wg.Wait()
}

// openMany opens n streams, by workers at once, for browsers: the i-th
// for browsers[i%len(browsers)].
func (o *streamOpener) openMany(browsers []*browser, n, workers int) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				o.open(browsers[i%len(browsers)])
			}
		})
	}
	wg.Wait()
}

// joinAs joins a fresh browser on s to the workshop code as nickname,
// from the address from (its own, so that the join limits of the
// address the streams come from are not what is measured).
func joinAs(t *testing.T, s *server, code, nickname, from string) *browser {
	t.Helper()
	b := newBrowser(s)
	b.xff = from
	if a := b.postForm("/join", url.Values{"code": {code}, "nickname": {nickname}}); a.status != http.StatusSeeOther {
		t.Fatalf("%s joins = %s", nickname, a)
	}
	return b
}

// rss is the resident memory of s with its workers now.
func (tg *target) rss(s *server) int64 {
	u, err := tg.mon.proc.TreeUsage(s.pid())
	if err != nil {
		return 0
	}
	return u.RSS
}

// attackEventStreams: one joined learner asks for 1,000 event streams,
// then 60 learners of one address for two each, and all are held while
// the bystander PINGs. Before the caps, a learner held every one (a
// thousand streams took the server from 82 to 652 MB and the bystander's
// p99 to 7 s). Now a learner holds 4 and an address 32, the rest are
// refused with 429 and Retry-After, a learner at another address still
// gets theirs, and the server's memory grows no more than the idle
// control server's over the same time, give or take 50 MB.
func attackEventStreams(t *testing.T, tg *target) {
	s := tg.limited
	from := time.Now()
	rss0, ctl0 := tg.rss(s), tg.rss(tg.control)
	_, code := admin(t, s)

	mallory := joinAs(t, s, code, "Mallory", "198.51.100.70")
	crowd := make([]*browser, 60)
	for i := range crowd {
		crowd[i] = joinAs(t, s, code, fmt.Sprintf("Crowd %d", i), fmt.Sprintf("198.51.101.%d", i+1))
		crowd[i].xff = "198.51.100.71" // their streams all come from one address
	}
	ada := joinAs(t, s, code, "Ada", "203.0.113.71")

	one := newStreamOpener()
	defer one.close()
	one.openMany([]*browser{mallory}, 1000, 50)
	many := newStreamOpener()
	defer many.close()
	many.openMany(crowd, 2*len(crowd), 30)
	bystander := newStreamOpener()
	defer bystander.close()
	bystander.open(ada)

	// Hold them all for a while, as pages left open would.
	time.Sleep(10 * time.Second)
	to := time.Now()
	peak, ctlPeak := max(tg.mon.peakNow(s), tg.rss(s)), max(tg.mon.peakNow(tg.control), tg.rss(tg.control))
	grew, ctlGrew := peak-rss0, ctlPeak-ctl0
	t.Logf("one learner asked for 1,000 streams: %d held, %d refused with Retry-After, %d other (first: %s)", one.held.Load(), one.refused.Load(), one.other.Load(), one.first)
	t.Logf("60 learners of one address asked for 2 each: %d held, %d refused with Retry-After, %d other (first: %s)", many.held.Load(), many.refused.Load(), many.other.Load(), many.first)
	t.Logf("memory of the server and its workers: %d MB before, peak %d MB (+%d MB); the idle control server's: %d MB, peak %d MB (+%d MB)",
		rss0>>20, peak>>20, grew>>20, ctl0>>20, ctlPeak>>20, ctlGrew>>20)
	st := tg.mon.checkPings(t, s, from, to, "while streams are held and refused")
	t.Logf("the bystander's PING p99 %v (server-side; the control's %v)", st.p99, tg.mon.pingStats(tg.control, from, to).p99)

	if n := one.held.Load(); n != streamsPerLearner {
		t.Errorf("one learner holds %d streams; want %d", n, streamsPerLearner)
	}
	if n := one.refused.Load(); n != 1000-streamsPerLearner {
		t.Errorf("one learner was refused %d streams with 429 and Retry-After; want %d", n, 1000-streamsPerLearner)
	}
	if n := many.held.Load(); n != streamsPerAddress {
		t.Errorf("one address holds %d streams; want %d", n, streamsPerAddress)
	}
	if n := many.refused.Load(); n != int64(2*len(crowd)-streamsPerAddress) {
		t.Errorf("one address was refused %d streams with 429 and Retry-After; want %d", n, 2*len(crowd)-streamsPerAddress)
	}
	if one.other.Load()+many.other.Load() > 0 {
		t.Errorf("%d streams got neither a stream nor 429 with Retry-After; first: %s %s", one.other.Load()+many.other.Load(), one.first, many.first)
	}
	if bystander.held.Load() != 1 {
		t.Errorf("a learner at another address was refused a stream while others held theirs: %d held, %d refused, %s", bystander.held.Load(), bystander.refused.Load(), bystander.first)
	}
	if limit := ctlGrew + 50<<20; grew > limit {
		t.Errorf("the server's memory grew %d MB while streams were held; want at most %d MB (50 MB over the idle control server's growth)", grew>>20, limit>>20)
	}
}

// idleConnsFiles is the open files limit, hard and soft, of the server
// the idle-conns attack runs against.
const idleConnsFiles = 1024

// startWithFiles starts bin as startServer does, with its open files
// limit, hard and soft, set to files: through a shell that lowers both
// before it runs the server, which may raise its soft limit no higher.
func startWithFiles(t *testing.T, bin, name string, files int, env map[string]string, args ...string) *server {
	t.Helper()
	sh := testLookPath(t, "sh")
	script := filepath.Join(t.TempDir(), "locklab-"+name)
	// The soft limit first: a hard limit below it is refused.
	body := fmt.Sprintf("#!%s\nulimit -S -n %d && ulimit -H -n %d || exit 1\nexec '%s' \"$@\"\n", sh, files, files, strings.ReplaceAll(bin, "'", `'\''`))
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return startServer(t, script, name, env, args...)
}

// testLookPath finds a program on PATH or fails the test.
func testLookPath(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found on PATH: %v", name, err)
	}
	return p
}

// idleHolder keeps n connections from the loopback address ip to s, each
// idle after one answer to GET /healthz, as a client holding keep-alive
// connections would (or, silent, without ever sending a byte); a
// connection the server closes is opened again a second later.
type idleHolder struct {
	silent bool
	stop   chan struct{}
	wg     sync.WaitGroup
	// dialed counts the connections opened; idle those idle after an
	// answer now; answered the answers; closed the connections the server
	// closed; tried the holders that have tried once.
	dialed, idle, answered, closed, tried atomic.Int64
	peakIdle                              atomic.Int64
}

func holdIdle(s *server, ip string, n int, silent bool) *idleHolder {
	h := &idleHolder{stop: make(chan struct{}), silent: silent}
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	for range n {
		h.wg.Go(func() {
			var once sync.Once
			tried := func() { once.Do(func() { h.tried.Add(1) }) }
			for {
				h.holdOne(d, s, tried)
				tried()
				select {
				case <-h.stop:
					return
				case <-time.After(time.Second): // a client that comes back
				}
			}
		})
	}
	return h
}

// holdOne opens one connection, asks for /healthz and holds it idle
// until the server closes it or the holder stops; it calls tried once
// the connection is idle or closed.
func (h *idleHolder) holdOne(d net.Dialer, s *server, tried func()) {
	c, err := d.Dial("tcp", s.addr)
	if err != nil {
		return
	}
	defer c.Close()
	h.dialed.Add(1)
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-h.stop:
			c.Close()
		case <-done:
		}
	}()
	r := bufio.NewReader(c)
	if h.silent {
		tried()
		_, _ = r.ReadByte()
		h.closed.Add(1)
		return
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: "+s.addr+"\r\n\r\n"); err != nil {
		h.closed.Add(1)
		return
	}
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		h.closed.Add(1)
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	h.answered.Add(1)
	_ = c.SetDeadline(time.Time{})
	n := h.idle.Add(1)
	for p := h.peakIdle.Load(); n > p && !h.peakIdle.CompareAndSwap(p, n); p = h.peakIdle.Load() {
	}
	tried()
	// Idle until the server closes it (its idle limit, a cap) or the end.
	_, _ = r.ReadByte()
	h.idle.Add(-1)
	h.closed.Add(1)
}

func (h *idleHolder) release() {
	close(h.stop)
	h.wg.Wait()
}

// newcomer asks s for path on a connection of its own, from the loopback
// address ip, as a learner arriving would.
func newcomer(s *server, ip, path string) answer {
	tr := &http.Transport{
		DialContext:       (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}).DialContext,
		DisableKeepAlives: true, DisableCompression: true,
	}
	defer tr.CloseIdleConnections()
	b := newBrowser(s)
	b.c.Transport = tr
	return b.do(http.MethodGet, path, "", nil, 30*time.Second, nil)
}

// attackIdleConns: one address holds 1,100 idle keep-alive connections
// against a server whose open files limit is 1,024, hard and soft, and
// comes back for each one the server closes; four more addresses open 300
// connections each that never send a byte. Before the caps, the
// descriptors ran out and a newcomer's /healthz and lesson went
// unanswered. Now an address keeps 64 idle at most and 256 open, the rest
// are closed, the busiest address gives up a silent connection for each
// newcomer once the descriptors run low, and a newcomer from another
// address gets /healthz and the lesson within 2 s of what the idle control
// server takes.
func attackIdleConns(t *testing.T, tg *target) {
	s := startWithFiles(t, tg.control.cmd.Path, "files1024", idleConnsFiles, map[string]string{"LOCKLAB_ADMIN_TOKEN": adminToken}, "-sandbox-workers", "2")
	var limits struct {
		Soft, Hard, Connections int
	}
	if lines := s.log.grep(`"open files limit"`); len(lines) == 0 {
		t.Fatalf("the server logged no open files limit; log:\n%s", s.log.text())
	} else if err := json.Unmarshal([]byte(lines[0]), &limits); err != nil || limits.Soft != idleConnsFiles || limits.Hard != idleConnsFiles {
		t.Fatalf("the server's open files limit: %s; want soft and hard %d", lines[0], idleConnsFiles)
	}
	t.Logf("the server's open files limit: soft %d, hard %d, room for %d connections", limits.Soft, limits.Hard, limits.Connections)

	const attacker, arriving = "127.0.0.2", "127.0.0.3"
	h := holdIdle(s, attacker, 1100, false)
	defer h.release()
	// Then four more addresses open 300 connections each and send
	// nothing: more than the descriptors leave room for in all.
	var silent []*idleHolder
	for i := range 4 {
		sh := holdIdle(s, fmt.Sprintf("127.0.0.%d", 4+i), 300, true)
		defer sh.release()
		silent = append(silent, sh)
	}
	// Every holder has tried once: the descriptors are as taken as the
	// attackers can make them.
	deadline := time.Now().Add(60 * time.Second)
	tried := func() (n int64) {
		n = h.tried.Load()
		for _, sh := range silent {
			n += sh.tried.Load()
		}
		return n
	}
	for tried() < 1100+4*300 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond) // polling the attackers' own goroutines
	}
	time.Sleep(2 * time.Second)
	var worst, ctlWorst = map[string]answer{}, map[string]answer{}
	for round := range 5 {
		for _, path := range []string{"/healthz", "/topics/distributed-locks"} {
			a := newcomer(s, arriving, mark(path, fmt.Sprintf("newcomer-%d", round)))
			c := newcomer(tg.control, arriving, mark(path, fmt.Sprintf("newcomer-%d", round)))
			if a.err != nil || a.status != http.StatusOK {
				t.Errorf("a newcomer's GET %s (round %d) = %s; want 200", path, round, a)
			}
			if a.took > worst[path].took || worst[path].uri == "" {
				worst[path] = a
			}
			if c.took > ctlWorst[path].took || ctlWorst[path].uri == "" {
				ctlWorst[path] = c
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("the attacker opened %d connections, had %d answers, held at most %d idle at once (%d now), and %d were closed by the server",
		h.dialed.Load(), h.answered.Load(), h.peakIdle.Load(), h.idle.Load(), h.closed.Load())
	for i, sh := range silent {
		t.Logf("silent address %d opened %d connections, %d closed by the server", i+1, sh.dialed.Load(), sh.closed.Load())
	}
	for _, path := range []string{"/healthz", "/topics/distributed-locks"} {
		w, c := worst[path], ctlWorst[path]
		t.Logf("a newcomer's slowest GET %s: %s (on the idle control server: %s)", path, w, c)
		if limit := 2*time.Second + c.took; w.took > limit {
			t.Errorf("a newcomer's GET %s took %v; want it within %v (2 s over the idle control server's %v)", path, w.took.Round(time.Millisecond), limit.Round(time.Millisecond), c.took.Round(time.Millisecond))
		}
	}
	if p := h.peakIdle.Load(); p > 256 {
		t.Errorf("one address held %d connections idle at once; want at most 256 (the per-address cap)", p)
	}
}
