package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// headersOf sends a request as l and returns the answer's status and
// headers; the body is dropped.
func (l *learnerClient) headersOf(method, path string, body url.Values) (int, http.Header) {
	l.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, l.base+path, strings.NewReader(body.Encode()))
	if err != nil {
		l.t.Fatal(err)
	}
	if method != http.MethodGet {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-CSRF-Token", l.csrfToken())
	}
	resp, err := l.http.Do(req)
	if err != nil {
		l.t.Fatalf("%s %s: %v", method, path, err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header
}

// TestCacheHeaders checks that no cache may keep a page that shows a
// learner's or an instructor's state, while the content-hashed static
// files keep their long cache.
func TestCacheHeaders(t *testing.T) {
	base := newWorkshopServer(t)
	teacher := newLearner(t, base)
	form(teacher, "/admin/login", url.Values{"token": {adminToken}})
	_, page := form(teacher, "/admin/workshops", url.Values{"title": {"Cache"}})
	code := between(page, `<strong class="join-code">`, "</strong>")
	l := newLearner(t, base)
	l.answer("gc-pause", "fencing")
	_, home := l.do("GET", "/", "", "")
	css := between(home, `<link rel="stylesheet" href="`, `"`)
	if !strings.HasPrefix(css, "/static/") {
		t.Fatalf("no stylesheet link on the home page (%q)", css)
	}

	const noStore = "no-store, private"
	for _, tt := range []struct {
		who          *learnerClient
		method, path string
		cache        string
		varyCookie   bool
	}{
		{l, "GET", "/", noStore, true},
		{l, "GET", "/topics/distributed-locks", noStore, true},
		{l, "GET", "/topics/distributed-locks/", noStore, true}, // the redirect
		{l, "GET", "/race", noStore, true},
		{l, "GET", "/race?scenario=gc-pause&ttl=500", noStore, true},
		{l, "GET", "/race/present", noStore, true},
		{l, "GET", "/playground", noStore, true},
		{l, "GET", "/progress", noStore, true},
		{l, "GET", "/carry/not-a-code", noStore, true},
		{l, "POST", "/progress/carry", noStore, true},
		{l, "GET", "/join", noStore, true},
		{l, "GET", "/join/" + code, noStore, true},
		{l, "GET", "/api/topics/distributed-locks/quiz", noStore, true},
		{l, "GET", "/api/race/gc-pause", noStore, true},
		{l, "GET", "/api/race/scenarios", noStore, true},
		{l, "GET", "/api/playground/keys", noStore, true},
		{l, "POST", "/api/playground/reset", noStore, true},
		{l, "GET", "/api/nope", noStore, true},
		{l, "GET", "/nope", noStore, true},
		{l, "GET", "/healthz", noStore, true},
		{l, "GET", "/metrics", noStore, true},
		{l, "GET", "/admin", noStore, true},
		{teacher, "GET", "/admin", noStore, true},
		{teacher, "GET", "/admin/workshops/" + code, noStore, true},
		{teacher, "GET", "/admin/workshops/" + code + "/export.csv", noStore, true},
		{teacher, "GET", "/admin/workshops/" + code + "/export.csv?part=questions", noStore, true},
		{teacher, "GET", "/admin/workshops/NOPE42", noStore, true},
		{l, "GET", css, "public, max-age=31536000, immutable", false},
		{l, "GET", "/static/nope.js", "", false},
	} {
		status, h := tt.who.headersOf(tt.method, tt.path, nil)
		if got := h.Get("Cache-Control"); got != tt.cache {
			t.Errorf("%s %s (%d): Cache-Control %q; want %q", tt.method, tt.path, status, got, tt.cache)
		}
		vary := strings.Contains(strings.Join(h.Values("Vary"), ","), "Cookie")
		if vary != tt.varyCookie {
			t.Errorf("%s %s (%d): Vary %q; want Cookie in it: %v", tt.method, tt.path, status, h.Values("Vary"), tt.varyCookie)
		}
	}

	// The dashboard's event stream too.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/admin/workshops/"+code+"/events", nil)
	resp, err := teacher.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if got := resp.Header.Get("Cache-Control"); resp.StatusCode != 200 || got != noStore {
		t.Errorf("events = %d, Cache-Control %q; want 200 %q", resp.StatusCode, got, noStore)
	}
}
