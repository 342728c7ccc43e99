package web

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/limit"
)

// streamsServer is a workshop server with small stream caps that trusts
// the loopback as a proxy, so that a test's learners can come from
// addresses of their own (X-Forwarded-For).
func streamsServer(t *testing.T, caps limit.StreamCaps) (*Server, string, string) {
	t.Helper()
	cfg := testConfig(t)
	cfg.AdminToken = adminToken
	cfg.Streams = caps
	cfg.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.sseEvery, s.pollEvery = 50*time.Millisecond, 25*time.Millisecond
	base := newServerFor(t, s)
	teacher := newLearner(t, base)
	if code, _ := form(teacher, "/admin/login", url.Values{"token": {adminToken}}); code != 200 {
		t.Fatalf("sign-in = %d", code)
	}
	_, page := form(teacher, "/admin/workshops", url.Values{"title": {"Streams"}})
	code := between(page, `<strong class="join-code">`, "</strong>")
	if code == "" {
		t.Fatal("no join code on the dashboard")
	}
	return s, base, code
}

// joined is a learner who has joined the workshop code.
func joined(t *testing.T, base, code, nickname string) *learnerClient {
	t.Helper()
	l := newLearner(t, base)
	if st, _ := form(l, "/join", url.Values{"code": {code}, "nickname": {nickname}}); st != 200 {
		t.Fatalf("%s joins = %d", nickname, st)
	}
	return l
}

// openEvents opens l's event stream from addr and returns the answer's
// status and, for a stream, a function that closes it; a refusal's body
// has been read into its error message.
func openEvents(t *testing.T, l *learnerClient, addr string) (int, http.Header, string, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", l.base+"/api/workshop/events", nil)
	req.Header.Set("X-Forwarded-For", addr)
	resp, err := (&http.Client{Jar: l.http.Jar}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode == http.StatusOK {
		return resp.StatusCode, resp.Header, "", func() { cancel(); resp.Body.Close() }
	}
	defer resp.Body.Close()
	var e apiError
	b, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(b, &e)
	return resp.StatusCode, resp.Header, e.Error, cancel
}

// awaitStreams waits until the server counts want streams open in all:
// a stream's handler sees its client go within a tick of its checks.
func awaitStreams(t *testing.T, s *Server, want int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, _, n := s.streams.Count("", ""); n == want {
			return
		} else if time.Now().After(deadline) {
			t.Fatalf("%d streams open; want %d", n, want)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestStreamCapsRefuseTheNewest(t *testing.T) {
	s, base, code := streamsServer(t, limit.StreamCaps{PerLearner: 2, PerAddress: 3, Total: 6})
	ann, bob, cy, dee, eve := joined(t, base, code, "ann"), joined(t, base, code, "bob"), joined(t, base, code, "cy"), joined(t, base, code, "dee"), joined(t, base, code, "eve")
	const home = "198.51.100.7"

	type step struct {
		what   string
		l      *learnerClient
		addr   string
		status int
		says   string // in a refusal's message
	}
	closers := map[string]func(){}
	run := func(steps []step) {
		t.Helper()
		for _, st := range steps {
			status, hdr, msg, closeIt := openEvents(t, st.l, st.addr)
			if status != st.status {
				t.Fatalf("%s: events = %d (%s); want %d", st.what, status, msg, st.status)
			}
			if status == http.StatusOK {
				closers[st.what] = closeIt
				continue
			}
			if ra := hdr.Get("Retry-After"); ra == "" || ra == "0" {
				t.Errorf("%s: Retry-After = %q; want a wait", st.what, ra)
			}
			if !strings.Contains(msg, st.says) {
				t.Errorf("%s: message %q; want it to say %q", st.what, msg, st.says)
			}
		}
	}
	run([]step{
		{"ann's first", ann, home, 200, ""},
		{"ann's second", ann, home, 200, ""},
		{"ann's third", ann, home, 429, "2 live updates open"},
		{"ann's third from elsewhere", ann, "2001:db8:1:2::5", 429, "2 live updates open"},
		{"bob's first", bob, home, 200, ""},
		{"cy's first, the address's fourth", cy, home, 429, "your address has 3"},
		{"cy's first, from elsewhere", cy, "2001:db8:1:2::5", 200, ""},
		{"dee's first", dee, "2001:db8:1:2::9", 200, ""},
		{"bob's second", bob, "2001:db8:1:2:ab::1", 200, ""},
		// Every address in a /64 is one address.
		{"eve's first, the /64's fourth", eve, "2001:db8:1:2:ffff::1", 429, "your address has 3"},
		{"eve's first, the seventh in all", eve, "2001:db8:1:3::1", 429, "the server has as many"},
	})
	// The streams that were refused took nothing: what was admitted is
	// still open and counted.
	if l, a, n := s.streams.Count(s.learnerIDOf(t, ann, base), home); l != 2 || a != 3 || n != 6 {
		t.Fatalf("counts = %d for ann, %d for her address, %d in all; want 2, 3, 6", l, a, n)
	}
	// A stream that ends frees its place, for its own learner.
	closers["ann's second"]()
	awaitStreams(t, s, 5)
	run([]step{
		{"eve's first, with room again", eve, "203.0.113.9", 200, ""},
		{"ann's second again, the seventh in all", ann, home, 429, "the server has as many"},
	})
	closers["bob's first"]()
	awaitStreams(t, s, 5)
	run([]step{{"ann's second, once more", ann, home, 200, ""}})
	for _, closeIt := range closers {
		closeIt()
	}
	awaitStreams(t, s, 0)
}

// learnerIDOf is l's learner id, from its cookie.
func (s *Server) learnerIDOf(t *testing.T, l *learnerClient, base string) string {
	t.Helper()
	u, _ := url.Parse(base)
	for _, c := range l.http.Jar.Cookies(u) {
		if c.Name == learnerCookie {
			return c.Value
		}
	}
	t.Fatal("the learner has no learner cookie")
	return ""
}

// TestCloseStreamsTellsPagesToReconnect closes the streams as the binary
// does when it shuts down: every open stream, and one opened afterwards,
// ends with a reconnection delay (the SSE retry field, which EventSource
// obeys by itself) and nothing else after its events.
func TestCloseStreamsTellsPagesToReconnect(t *testing.T) {
	s, base, code := streamsServer(t, limit.StreamCaps{})
	retry := regexp.MustCompile(`\nretry: (\d+)\n\n$`)
	open := func(l *learnerClient) (*bufio.Reader, io.Closer) {
		t.Helper()
		resp, err := (&http.Client{Jar: l.http.Jar}).Get(l.base + "/api/workshop/events")
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			t.Fatalf("events = %d; want 200", resp.StatusCode)
		}
		return bufio.NewReader(resp.Body), resp.Body
	}
	// finish reads the rest of a stream, which must end, with the delay.
	finish := func(name string, r *bufio.Reader, body io.Closer) {
		t.Helper()
		defer body.Close()
		rest, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("%s: reading the stream to its end: %v", name, err)
		}
		m := retry.FindStringSubmatch("\n" + string(rest))
		if m == nil {
			t.Fatalf("%s ends with %q; want a retry field", name, rest)
		}
		if ms, _ := strconv.Atoi(m[1]); ms < int(reconnectMin.Milliseconds()) || ms >= int((reconnectMin+reconnectSpread).Milliseconds()) {
			t.Errorf("%s: retry %d ms; want %v to %v", name, ms, reconnectMin, reconnectMin+reconnectSpread)
		}
	}
	var readers []*bufio.Reader
	var bodies []io.Closer
	for _, name := range []string{"ann", "bob"} {
		r, body := open(joined(t, base, code, name))
		// The first event says the stream is being served.
		if line, err := r.ReadString('\n'); err != nil || line != "event: state\n" {
			t.Fatalf("%s's first line = %q, %v; want the state event", name, line, err)
		}
		readers, bodies = append(readers, r), append(bodies, body)
	}
	s.CloseStreams()
	s.CloseStreams() // a second call changes nothing
	for i, name := range []string{"ann", "bob"} {
		finish(name, readers[i], bodies[i])
	}
	awaitStreams(t, s, 0)
	// A page that asks after the close is told the same at once.
	r, body := open(joined(t, base, code, "cy"))
	finish("cy's stream, opened after the close", r, body)
}
