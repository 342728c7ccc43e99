package attack

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// slack is how much longer than its deadline any answer may take: the
// suite gives up on a request then and counts it as late.
const slack = 500 * time.Millisecond

// ordinary is the deadline of a request that runs no script: it should
// take milliseconds, and a second is generous on a loaded machine.
const ordinary = time.Second

// transport is shared by every browser, so that the suite's own
// connections cost the server as little as a browser's keep-alive would.
var transport = &http.Transport{
	MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute,
	DisableCompression: true,
}

// marks numbers the requests the suite marks with ?m=..., so that each
// has a URI of its own in the server's log.
var marks atomic.Int64

// mark returns path with a query parameter m that names the request
// uniquely; the server's log line for it has this URI.
func mark(path, name string) string {
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return fmt.Sprintf("%s%sm=%s-%d", path, sep, name, marks.Add(1))
}

// browser is one learner's (or attacker's) browser: its own cookies, the
// CSRF token sent back as a script would, no redirects followed (the suite
// checks them). With xff set every request says it comes from that
// address, as a load balancer would; the servers trust 127.0.0.1.
type browser struct {
	srv *server
	jar *cookiejar.Jar
	c   *http.Client
	xff string

	// csrfMu makes requests sent at once share one CSRF cookie: each
	// fetching its own would leave some forms with another's token, which
	// the server refuses (403) before looking at them.
	csrfMu sync.Mutex
}

// untrustedTransport connects from 127.0.0.2: the servers trust only
// 127.0.0.1 as a proxy, so requests through it come from an ordinary
// client, whose Host and X-Forwarded-* headers nobody vouches for.
var untrustedTransport = &http.Transport{
	DialContext:         (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}, Timeout: 5 * time.Second}).DialContext,
	MaxIdleConnsPerHost: 16, IdleConnTimeout: time.Minute, DisableCompression: true,
}

// untrusted makes b's later requests come from an address the server does
// not trust as a proxy.
func (b *browser) untrusted() *browser {
	b.c.Transport = untrustedTransport
	return b
}

func newBrowser(srv *server) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{srv: srv, jar: jar, c: &http.Client{
		Transport: transport, Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// answer is what the server said to one request, and how long it took as
// the client saw it.
type answer struct {
	uri    string
	status int
	header http.Header
	body   []byte
	took   time.Duration
	err    error // no answer within the deadline plus slack, or none at all
}

func (a answer) String() string {
	if a.err != nil {
		return fmt.Sprintf("no answer after %v: %v", a.took.Round(time.Millisecond), a.err)
	}
	if ct := a.header.Get("Content-Type"); strings.HasPrefix(ct, "text/html") || len(a.body) == 0 {
		return fmt.Sprintf("%d in %v", a.status, a.took.Round(time.Millisecond))
	}
	return fmt.Sprintf("%d in %v: %.200q", a.status, a.took.Round(time.Millisecond), a.body)
}

// cookie returns the value of this browser's cookie name, or "".
func (b *browser) cookie(name string) string {
	u, _ := url.Parse(b.srv.base)
	for _, c := range b.jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// csrf returns the CSRF token, fetching the cookie first if needed.
func (b *browser) csrf() string {
	b.csrfMu.Lock()
	defer b.csrfMu.Unlock()
	if tok := b.cookie("_csrf"); tok != "" {
		return tok
	}
	b.do("GET", "/healthz", "", nil, ordinary, nil)
	return b.cookie("_csrf")
}

// do sends one request to path (with its query) and waits at most
// deadline plus slack for the whole answer. POSTs carry the CSRF token.
func (b *browser) do(method, path, contentType string, body []byte, deadline time.Duration, hdr http.Header) answer {
	a := answer{uri: path}
	var tok string
	if method != http.MethodGet && method != http.MethodHead {
		tok = b.csrf()
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadline+slack)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, b.srv.base+path, bytes.NewReader(body))
	if err != nil {
		a.err = err
		return a
	}
	for k, vs := range hdr {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if tok != "" {
		req.Header.Set("X-CSRF-Token", tok)
	}
	if b.xff != "" {
		req.Header.Set("X-Forwarded-For", b.xff)
	}
	client := b.c
	if h := hdr.Get("Host"); h != "" {
		// The jar matches cookies to the Host header, not the address:
		// this browser's cookies go along by hand.
		req.Host = h
		for _, ck := range b.jar.Cookies(req.URL) {
			req.AddCookie(ck)
		}
		client = &http.Client{Transport: b.c.Transport, CheckRedirect: b.c.CheckRedirect}
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err == nil {
		a.status, a.header = resp.StatusCode, resp.Header
		a.body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	a.took, a.err = time.Since(start), err
	if ctx.Err() != nil {
		a.err = fmt.Errorf("%s %s: %w", method, path, context.DeadlineExceeded)
	}
	return a
}

func (b *browser) get(path string) answer {
	return b.do(http.MethodGet, path, "", nil, ordinary, nil)
}

func (b *browser) postJSON(path string, v any, deadline time.Duration) answer {
	j, _ := json.Marshal(v)
	return b.do(http.MethodPost, path, "application/json", j, deadline, nil)
}

func (b *browser) postForm(path string, form url.Values) answer {
	form.Set("_csrf", b.csrf())
	return b.do(http.MethodPost, path, "application/x-www-form-urlencoded", []byte(form.Encode()), ordinary, nil)
}

// execReply is the answer of POST /api/playground/exec.
type execReply struct {
	Output string `json:"output"`
}

// exec runs a playground line as client A; the request is marked name.
func (b *browser) exec(name, line string, deadline time.Duration) (answer, string) {
	a := b.postJSON(mark("/api/playground/exec", name), map[string]string{"line": line, "client": "A"}, deadline)
	var r execReply
	_ = json.Unmarshal(a.body, &r)
	return a, r.Output
}

// rawGet sends a GET for target exactly as written (no cleaning or
// escaping by a client library) with extra header lines, and returns the
// status and headers of the answer.
func rawGet(srv *server, target string, extra ...string) (a answer) {
	a.uri = target
	start := time.Now()
	defer func() { a.took = time.Since(start) }()
	conn, err := net.DialTimeout("tcp", srv.addr, ordinary)
	if err != nil {
		a.err = err
		return a
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(ordinary + slack))
	var req strings.Builder
	fmt.Fprintf(&req, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n", target, srv.addr)
	for _, h := range extra {
		req.WriteString(h + "\r\n")
	}
	req.WriteString("\r\n")
	if _, err := io.WriteString(conn, req.String()); err != nil {
		a.err = err
		return a
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		a.err = err
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			a.err = fmt.Errorf("GET %.80s: %w", target, context.DeadlineExceeded)
		}
		return a
	}
	defer resp.Body.Close()
	a.status, a.header = resp.StatusCode, resp.Header
	a.body, _ = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return a
}
