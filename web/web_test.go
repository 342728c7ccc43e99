package web

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/locklab/locklab/content"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// get fetches path from the test server without following redirects or
// asking for compression, and returns the response and its body.
func get(t *testing.T, base, path string) (*http.Response, string) {
	t.Helper()
	return fetch(t, http.MethodGet, base, path)
}

// fetch is get with another method (HEAD).
func fetch(t *testing.T, method, base, path string) (*http.Response, string) {
	t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest(method, base+path, nil)
	req.Header.Set("Accept-Encoding", "identity")
	// A fixed CSRF token keeps rendered pages (and golden files) stable.
	req.AddCookie(&http.Cookie{Name: "_csrf", Value: "GoldenCsrfTokenAbcdefghijklmnopq"})
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return resp, string(b)
}

// assetVersion matches the content hashes in asset URLs; golden files hold
// a placeholder, so a change to a style sheet or script does not churn them.
var assetVersion = regexp.MustCompile(`(site\.|\?v=)[0-9a-f]{12}`)

// sandboxClock matches the playground's clock, which reads the time now.
var sandboxClock = regexp.MustCompile(`data-ms="\d+">[^<]*<`)

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	got = assetVersion.ReplaceAllString(got, "${1}HASH")
	got = sandboxClock.ReplaceAllString(got, `data-ms="CLOCK">CLOCK<`)
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test ./web -update to create it)", err)
	}
	if got != string(want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		from := max(0, i-120)
		t.Errorf("%s differs from the golden file at byte %d; run go test ./web -run %s -update and review the diff.\ngot:  ...%s\nwant: ...%s",
			p, i, t.Name(), got[from:min(len(got), i+120)], want[from:min(len(want), i+120)])
	}
}

func TestLessonGolden(t *testing.T) {
	ts := newTestServer(t)
	resp, body := get(t, ts.URL, "/topics/distributed-locks")
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	golden(t, "lesson.golden.html", body)
}

func TestHomeGolden(t *testing.T) {
	ts := newTestServer(t)
	resp, body := get(t, ts.URL, "/")
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	golden(t, "home.golden.html", body)
}

// TestLessonHasEveryPart checks the parts of the seed card a learner must
// find on the lesson page.
func TestLessonHasEveryPart(t *testing.T) {
	ts := newTestServer(t)
	_, body := get(t, ts.URL, "/topics/distributed-locks")
	for _, want := range []string{
		`<a href="/">Redis path</a></li><li>Using it well</li><li><span aria-current="page">Topic 7 of 11</span>`,
		`<h1>Distributed locks and their caveats</h1>`,
		`Not started`,
		`<strong>Why it matters:</strong>`,
		`<h3>SET NX PX with a random token</h3>`, `<h3>The timeout is the danger</h3>`,
		`<h3>Efficiency or correctness</h3>`, `<h3>Redlock is contested</h3>`,
		`How it works</h2>`, `Check yourself</h2>`, `Go deeper</h2>`,
		`The single-instance lock`, `Redlock: one lock on five instances`, `The debate`, `Choosing`,
		`How to do distributed locking`, `Is Redlock safe?`, `Distributed locks with Redis`,
		`class="skip-link" href="#main"`, `<main id="main"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("lesson page lacks %q", want)
		}
	}
	if n := strings.Count(body, "data-redis-cli"); n < 3 {
		t.Errorf("lesson has %d redis-cli blocks; want at least 3", n)
	}
}

// TestNoOtherHosts checks that pages load nothing from another host: every
// stylesheet, script, icon and image is served from this server.
func TestNoOtherHosts(t *testing.T) {
	ts := newTestServer(t)
	attr := regexp.MustCompile(`<(link|script|img|source|iframe)\b[^>]*\b(?:src|href)="([^"]*)"`)
	for _, path := range []string{"/", "/topics/distributed-locks", "/missing"} {
		_, body := get(t, ts.URL, path)
		for _, m := range attr.FindAllStringSubmatch(body, -1) {
			if !strings.HasPrefix(m[2], "/") || strings.HasPrefix(m[2], "//") {
				t.Errorf("%s: <%s> loads %q from outside this server", path, m[1], m[2])
			}
		}
	}
	css := cssOf(t, ts.URL)
	if strings.Contains(css, "url(") || strings.Contains(css, "@import") {
		t.Errorf("the style sheet loads other resources")
	}
}

func cssOf(t *testing.T, base string) string {
	t.Helper()
	_, page := get(t, base, "/")
	m := regexp.MustCompile(`<link rel="stylesheet" href="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no stylesheet link on /")
	}
	resp, css := get(t, base, m[1])
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/css") {
		t.Fatalf("GET %s = %d %s", m[1], resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if !strings.Contains(resp.Header.Get("Cache-Control"), "immutable") {
		t.Errorf("style sheet Cache-Control = %q; want immutable", resp.Header.Get("Cache-Control"))
	}
	return css
}

// TestLessonWeight keeps the lesson page light: what a learner downloads
// (HTML plus the one style sheet, gzipped as the server sends them) under
// 24 KB, and under 112 KB as the browser holds them. The lesson grew its
// sources' facts, runnable examples, the race's legend and settings, a
// form for every example command (so that each runs without JavaScript)
// and the five-node examples of Redlock, restarts, clocks and fencing,
// which repeat much and compress well; the bytes sent are what a slow
// connection pays for.
func TestLessonWeight(t *testing.T) {
	ts := newTestServer(t)
	_, page := get(t, ts.URL, "/topics/distributed-locks")
	css := cssOf(t, ts.URL)
	total := len(page) + len(css)
	zipped := gzipLen(t, page) + gzipLen(t, css)
	t.Logf("lesson %d bytes + css %d bytes = %d bytes, %d gzipped", len(page), len(css), total, zipped)
	if zipped >= 24*1024 {
		t.Errorf("lesson page with its CSS is %d bytes gzipped; the budget is 24 KB", zipped)
	}
	if total >= 112*1024 {
		t.Errorf("lesson page with its CSS is %d bytes; the budget is 112 KB", total)
	}
}

// gzipLen is the length of s gzipped at the level the server uses.
func gzipLen(t *testing.T, s string) int {
	t.Helper()
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, 5)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = zw.Write([]byte(s))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Len()
}

func TestGzip(t *testing.T) {
	ts := newTestServer(t)
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/topics/distributed-locks", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("Content-Encoding = %q; want gzip", resp.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(zr)
	if !strings.Contains(string(b), "Distributed locks and their caveats") {
		t.Error("gzipped lesson does not decode to the lesson")
	}
}

func TestStatusesAndErrors(t *testing.T) {
	ts := newTestServer(t)
	// A case checks the type and a part of the body, or, for a redirect,
	// where it points.
	for _, tt := range []struct {
		path, wantType, wantBody string
		wantStatus               int
		wantLocation             string
	}{
		{"/healthz", "text/plain", "ok", 200, ""},
		{"/", "text/html", "Distributed locks and their caveats", 200, ""},
		{"/topics/distributed-locks", "text/html", "Redlock", 200, ""},
		{"/topics/no-such-topic", "text/html", "Page not found", 404, ""},
		{"/no/such/page", "text/html", "Page not found", 404, ""},
		{"/static/missing.css", "text/html", "Page not found", 404, ""},
		{"/static/../go.mod", "text/html", "Page not found", 404, ""},
		{"/static/favicon.svg", "image/svg+xml", "<svg", 200, ""},
		{"/api/nope", "application/json", `{"error":"no API endpoint GET /api/nope"}`, 404, ""},
		{"/topics/distributed-locks/", "", "", 301, "/topics/distributed-locks"},
	} {
		t.Run(tt.path, func(t *testing.T) {
			resp, body := get(t, ts.URL, tt.path)
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("GET %s status = %d; want %d", tt.path, resp.StatusCode, tt.wantStatus)
			}
			if tt.wantLocation != "" {
				if loc := resp.Header.Get("Location"); loc != tt.wantLocation {
					t.Errorf("GET %s Location = %q; want %q", tt.path, loc, tt.wantLocation)
				}
				return
			}
			if tt.wantType == "" || tt.wantBody == "" {
				t.Fatalf("the case for %s checks neither the type nor the body", tt.path)
			}
			if !strings.HasPrefix(resp.Header.Get("Content-Type"), tt.wantType) {
				t.Errorf("GET %s Content-Type = %q; want %q", tt.path, resp.Header.Get("Content-Type"), tt.wantType)
			}
			if !strings.Contains(body, tt.wantBody) {
				t.Errorf("GET %s body = %.200q; want it to contain %q", tt.path, body, tt.wantBody)
			}
		})
	}
}

func TestNotFoundPageUsesSiteLayout(t *testing.T) {
	ts := newTestServer(t)
	_, body := get(t, ts.URL, "/missing")
	golden(t, "notfound.golden.html", body)
}

func TestSecurityHeaders(t *testing.T) {
	ts := newTestServer(t)
	resp, _ := get(t, ts.URL, "/")
	csp := resp.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("CSP = %q", csp)
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("CSP = %q; want no unsafe-* and frame-ancestors 'none'", csp)
	}
	for name, want := range map[string]string{
		"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY",
	} {
		if got := resp.Header.Get(name); got != want {
			t.Errorf("%s = %q; want %q", name, got, want)
		}
	}
}

// TestPanicsNeverShowAStack makes a handler panic and checks that the
// client sees the error page (or JSON), never a Go stack trace.
func TestPanicsNeverShowAStack(t *testing.T) {
	s, err := New(testConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	boom := func(echo.Context) error { panic("secret detail in a panic") }
	s.echo.GET("/boom", boom)
	s.echo.GET("/api/boom", boom)
	srv := newServerFor(t, s)
	for _, tt := range []struct{ path, want string }{
		{"/boom", "Something went wrong"},
		{"/api/boom", `"error"`},
	} {
		resp, body := get(t, srv, tt.path)
		if resp.StatusCode != 500 {
			t.Errorf("GET %s status = %d; want 500", tt.path, resp.StatusCode)
		}
		for _, leak := range []string{"goroutine", "secret detail", ".go:"} {
			if strings.Contains(body, leak) {
				t.Errorf("GET %s leaks %q: %.300s", tt.path, leak, body)
			}
		}
		if !strings.Contains(body, tt.want) {
			t.Errorf("GET %s body = %.200q; want %q", tt.path, body, tt.want)
		}
	}
	_, body := get(t, srv, "/api/boom")
	var e apiError
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error == "" {
		t.Errorf("API 500 body %q is not {\"error\": ...}: %v", body, err)
	}
}

// TestReloaderSeesEdits checks the -content mode: an edit on disk shows on
// the next request, and a broken edit is reported with the file's name.
func TestReloaderSeesEdits(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, content.Embedded()); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t)
	cfg.Content = content.Reloader{FS: os.DirFS(dir)}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := newServerFor(t, s)
	lessonFile := filepath.Join(dir, "lessons", "distributed-locks.md")
	src, _ := os.ReadFile(lessonFile)
	edited := strings.Replace(string(src), "title: Distributed locks and their caveats", "title: Locks, edited live", 1)
	if err := os.WriteFile(lessonFile, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, body := get(t, srv, "/topics/distributed-locks"); !strings.Contains(body, "<h1>Locks, edited live</h1>") {
		t.Errorf("edited title not served")
	}
	if err := os.WriteFile(lessonFile, []byte("no front matter"), 0o644); err != nil {
		t.Fatal(err)
	}
	resp, body := get(t, srv, "/topics/distributed-locks")
	if resp.StatusCode != 500 || !strings.Contains(body, "lessons/distributed-locks.md") {
		t.Errorf("broken content: status %d, body %.300q; want 500 naming the file", resp.StatusCode, body)
	}
}

// TestCSRF checks the cross-site request rules on a state-changing API.
func TestCSRF(t *testing.T) {
	ts := newTestServer(t)
	post := func(headers map[string]string, cookie string) (int, string) {
		req, _ := http.NewRequest("POST", ts.URL+"/api/topics/distributed-locks/quiz/gc-pause", strings.NewReader(`{"choice":"fencing"}`))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		if cookie != "" {
			req.AddCookie(&http.Cookie{Name: "_csrf", Value: cookie})
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	const right = "RightTokenAbcdefghijklmnopqrstuv" // the shape the site makes
	for _, tt := range []struct {
		name    string
		headers map[string]string
		cookie  string
		status  int
		want    string
	}{
		{"no token", nil, "", 400, "missing csrf token: send the value of the _csrf cookie in the X-CSRF-Token header"},
		{"wrong token", map[string]string{"X-CSRF-Token": "nope"}, right, 403, "invalid csrf token: send the value of the _csrf cookie in the X-CSRF-Token header"},
		{"double submit", map[string]string{"X-CSRF-Token": right}, right, 200, `"correct":true`},
		{"browser, same origin", map[string]string{"Sec-Fetch-Site": "same-origin"}, "", 200, `"correct":true`},
		{"browser, other site", map[string]string{"Sec-Fetch-Site": "cross-site", "X-CSRF-Token": right}, right, 403, "cross-site request blocked"},
		{"browser, sibling subdomain", map[string]string{"Sec-Fetch-Site": "same-site", "X-CSRF-Token": right}, right, 403, "cross-site request blocked"},
	} {
		code, body := post(tt.headers, tt.cookie)
		if code != tt.status || !strings.Contains(body, tt.want) {
			t.Errorf("%s: %d %s; want %d with %q", tt.name, code, body, tt.status, tt.want)
		}
	}
}

func TestMetrics(t *testing.T) {
	ts := newTestServer(t)
	l := newLearner(t, ts.URL)
	l.answer("gc-pause", "fencing")
	l.exec("A", "PING")
	get(t, ts.URL, "/no/such/page/12345")
	resp, body := get(t, ts.URL, "/metrics")
	if resp.StatusCode != 200 {
		t.Fatalf("GET /metrics = %d", resp.StatusCode)
	}
	for _, want := range []string{
		`locklab_http_requests_total{method="POST",route="/api/topics/:slug/quiz/:question",status="200"} 1`,
		`locklab_http_requests_total{method="GET",route="unmatched",status="404"} 1`,
		`locklab_http_request_duration_seconds_bucket{method="POST",route="/api/playground/exec"`,
		`locklab_quiz_answers_total{result="right",topic="distributed-locks"} 1`,
		`locklab_playground_commands_total{client="A"} 1`,
		`locklab_sandboxes_live 1`,
		`locklab_script_timeouts_total 0`,
		`go_goroutines`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(body, "12345") {
		t.Error("/metrics has a raw path as a label")
	}
}
