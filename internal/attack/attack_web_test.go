package attack

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// attackOpenRedirect asks for paths that a trailing-slash redirect would
// turn into a link to another site: none may answer with such a Location,
// and each must be 404.
func attackOpenRedirect(t *testing.T, tg *target) {
	s := tg.open
	for _, tt := range []struct {
		path string
		// want404: the path is of the kinds that, as a trailing-slash
		// redirect, point browsers elsewhere (a backslash or a tab after
		// the first slash); the others must only not redirect off-site.
		want404 bool
	}{
		{"/%5Cevil.com/", true}, {"/%09/evil.com/", true}, {"/%5C%5Cevil.com/", true},
		{`/\evil.com/`, true}, {"/%5C/evil.com/", true}, {"/%09%09/evil.com/", true},
		{"/%5Cevil.com%2F%2E%2E/", true}, {"/%5C%09evil.com/", true}, {"/%09%5Cevil.com/", true},
		{"/%0A/evil.com/", false}, {"/%0D/evil.com/", false}, {"/%0D%0A/evil.com/", false},
		{"/%00/evil.com/", false}, {"/%2F/evil.com/", false}, {"/%2F%5Cevil.com/", false},
		{"//evil.com/", false}, {"///evil.com/", false}, {"/%2F%2Fevil.com/", false},
		{"/%E3%80%81/evil.com/", false},
	} {
		a := rawGet(s, tt.path)
		loc := a.header.Get("Location")
		t.Logf("GET %s = %d, Location %q", tt.path, a.status, loc)
		if a.err != nil {
			// A Location with a NUL byte, for one, is not even HTTP.
			t.Errorf("GET %s: %v", tt.path, a.err)
			continue
		}
		if why := unsafeLocation(loc); why != "" {
			t.Errorf("GET %s = %d with Location %q: %s", tt.path, a.status, loc, why)
		}
		if tt.want404 && a.status != http.StatusNotFound {
			t.Errorf("GET %s = %d (Location %q); want 404", tt.path, a.status, loc)
		}
	}
}

// unsafeLocation says why a browser could follow loc to another site, or
// "" if it cannot.
func unsafeLocation(loc string) string {
	if loc == "" {
		return ""
	}
	for _, r := range loc {
		if r < 0x20 || r == 0x7f {
			return "it holds a control character, which browsers drop"
		}
	}
	if strings.HasPrefix(loc, "//") || strings.HasPrefix(loc, `/\`) {
		return "browsers read it as another host"
	}
	if u, err := url.Parse(loc); err != nil || u.Host != "" || u.Scheme != "" {
		return "it names a host"
	}
	return ""
}

// admin signs in as the instructor on s and starts a workshop; it returns
// the browser and the workshop's code.
func admin(t *testing.T, s *server) (*browser, string) {
	t.Helper()
	b := newBrowser(s)
	if a := b.postForm("/admin/login", url.Values{"token": {adminToken}}); a.status != http.StatusSeeOther && a.status != http.StatusOK {
		t.Fatalf("admin sign-in = %s", a)
	}
	a := b.postForm("/admin/workshops", url.Values{"title": {"Attack"}})
	code, ok := strings.CutPrefix(a.header.Get("Location"), "/admin/workshops/")
	if !ok || code == "" {
		t.Fatalf("start a workshop = %s, Location %q", a, a.header.Get("Location"))
	}
	return b, code
}

// learner is a browser that has answered one question right, so that it
// has progress worth protecting.
func learner(t *testing.T, s *server) *browser {
	t.Helper()
	b := newBrowser(s)
	if a := b.postJSON("/api/topics/distributed-locks/quiz/gc-pause", map[string]string{"choice": "fencing"}, ordinary); a.status != 200 {
		t.Fatalf("answer a question = %s", a)
	}
	return b
}

// oldCarryCode is the code the /progress page shows before one-time
// codes (the learner id and its signature).
var oldCarryCode = regexp.MustCompile(`[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{12}`)

// carryAnswer is the answer of POST /api/progress/code.
type carryAnswer struct {
	Code      string          `json:"code"`
	Link      string          `json:"link"`
	ExpiresAt json.RawMessage `json:"expires_at"`
}

// newCarryCode asks for a one-time carry code for b's progress.
func newCarryCode(b *browser) (carryAnswer, answer) {
	a := b.postJSON("/api/progress/code", map[string]any{}, ordinary)
	var c carryAnswer
	_ = json.Unmarshal(a.body, &c)
	return c, a
}

// anyCarryCode returns a carry code for b: a one-time one, or else the
// one its /progress page shows.
func anyCarryCode(t *testing.T, b *browser) string {
	t.Helper()
	if c, _ := newCarryCode(b); c.Code != "" {
		return c.Code
	}
	if code := oldCarryCode.FindString(string(b.get("/progress").body)); code != "" {
		return code
	}
	t.Fatal("no carry code from POST /api/progress/code nor on /progress")
	return ""
}

// attackCacheControl: pages with a learner's or the instructor's data
// must not be kept by shared caches (or, for progress codes, by any).
func attackCacheControl(t *testing.T, tg *target) {
	s := tg.open
	adm, code := admin(t, s)
	l := learner(t, s)
	carry := anyCarryCode(t, l)
	for _, tt := range []struct {
		b        *browser
		path     string
		noStore  bool // else private will do
		whatPage string
	}{
		{l, "/progress", true, "the learner's carry code"},
		{l, "/carry/" + carry, true, "a carry link"},
		{adm, "/admin", true, "the instructor's workshop list"},
		{adm, "/admin/workshops/" + code, true, "a workshop dashboard"},
		{adm, "/admin/workshops/" + code + "/export.csv", true, "a participants export"},
		{adm, "/admin/workshops/" + code + "/export.csv?part=questions", true, "an answers export"},
		{l, "/topics/distributed-locks", false, "a lesson with the learner's quiz"},
		{l, "/playground", false, "the learner's playground"},
	} {
		a := tt.b.get(tt.path)
		cc := a.header.Get("Cache-Control")
		t.Logf("GET %s = %d, Cache-Control %q", tt.path, a.status, cc)
		if a.status != 200 {
			t.Errorf("GET %s = %s", tt.path, a)
			continue
		}
		switch {
		case tt.noStore && !strings.Contains(cc, "no-store"):
			t.Errorf("GET %s (%s): Cache-Control %q; want no-store", tt.path, tt.whatPage, cc)
		case !tt.noStore && !strings.Contains(cc, "no-store") && !strings.Contains(cc, "private"):
			t.Errorf("GET %s (%s): Cache-Control %q; want private or no-store", tt.path, tt.whatPage, cc)
		}
	}
	// For the report only: the learner's JSON.
	for _, path := range []string{"/api/topics/distributed-locks/quiz", "/api/playground/keys"} {
		t.Logf("GET %s: Cache-Control %q (not checked)", path, l.get(path).header.Get("Cache-Control"))
	}
}

// attackAdminGuessing tries 60 wrong instructor tokens from one address
// in each of three ways: after a few failures the server must answer 429
// with Retry-After.
func attackAdminGuessing(t *testing.T, tg *target) {
	s := tg.limited
	const tries, allowed = 60, 10
	for _, tt := range []struct {
		sub, name string
		try       func(b *browser, i int) answer
	}{
		{"admin", "GET /admin with a bearer token", func(b *browser, i int) answer {
			return b.do("GET", "/admin", "", nil, ordinary, http.Header{"Authorization": {fmt.Sprintf("Bearer wrong-token-%04d", i)}})
		}},
		{"dashboard", "GET /admin/workshops/XXXX with a bearer token", func(b *browser, i int) answer {
			return b.do("GET", "/admin/workshops/XXXX", "", nil, ordinary, http.Header{"Authorization": {fmt.Sprintf("Bearer wrong-token-%04d", i)}})
		}},
		{"login", "POST /admin/login", func(b *browser, i int) answer {
			return b.postForm("/admin/login", url.Values{"token": {fmt.Sprintf("wrong-token-%04d", i)}})
		}},
	} {
		t.Run(tt.sub, func(t *testing.T) {
			b := newBrowser(s)
			statuses := map[int]int{}
			answered, first429, noRetry := 0, 0, 0
			for i := range tries {
				a := tt.try(b, i)
				if a.err != nil {
					t.Fatalf("%s #%d: %v", tt.name, i+1, a.err)
				}
				statuses[a.status]++
				if a.status == http.StatusTooManyRequests {
					if first429 == 0 {
						first429 = i + 1
					}
					if a.header.Get("Retry-After") == "" {
						noRetry++
					}
				} else {
					answered++
				}
			}
			t.Logf("%s, %d wrong tokens: statuses %v, first 429 at try %d (0: none)", tt.name, tries, statuses, first429)
			if answered > allowed {
				t.Errorf("%s: %d of %d wrong tokens were answered (statuses %v); want 429 after at most %d", tt.name, answered, tries, statuses, allowed)
			}
			if noRetry > 0 {
				t.Errorf("%s: %d answers 429 without Retry-After", tt.name, noRetry)
			}
		})
	}
}

// attackUnknownWorkshop asks for workshops that do not exist: 404, never
// a server error.
func attackUnknownWorkshop(t *testing.T, tg *target) {
	s := tg.open
	bearer := http.Header{"Authorization": {"Bearer " + adminToken}}
	b := newBrowser(s)
	for _, tt := range []struct {
		path string
		hdr  http.Header
		or   int // another status that will do, for a code that cannot be one
	}{
		{"/join/NOPE99", nil, 0},
		{"/join/nope99", nil, 0},
		{"/join/" + strings.Repeat("Z", 200), nil, http.StatusBadRequest},
		{"/admin/workshops/NOPE99", bearer, 0},
		{"/admin/workshops/NOPE99/export.csv", bearer, 0},
		{"/admin/workshops/NOPE99/export.csv?part=questions", bearer, 0},
		{"/admin/workshops/NOPE99/events", bearer, 0},
	} {
		a := b.do("GET", tt.path, "", nil, ordinary, tt.hdr)
		if a.err != nil || (a.status != http.StatusNotFound && (tt.or == 0 || a.status != tt.or)) {
			t.Errorf("GET %.60s = %s; want 404", tt.path, a)
		}
	}
	if a := b.postForm("/join", url.Values{"code": {"NOPE99"}, "nickname": {"mallory"}}); a.err != nil || a.status >= 500 {
		t.Errorf("POST /join with an unknown code = %s; want no server error", a)
	}
}

// attackCarryCodes checks the one-time carry codes: a code moves
// progress to another browser without handing it the owner's session,
// works once, and never reaches the log.
func attackCarryCodes(t *testing.T, tg *target) {
	s := tg.open
	owner := learner(t, s)
	c, a := newCarryCode(owner)
	if a.status != 200 || c.Code == "" || c.Link == "" || len(c.ExpiresAt) == 0 || string(c.ExpiresAt) == "null" {
		t.Errorf(`POST /api/progress/code = %s; want 200 {"code", "link", "expires_at"}`, a)
	} else {
		t.Logf("POST /api/progress/code = %s", a)
		if u, err := url.Parse(c.Link); err != nil || !strings.Contains(c.Link, c.Code) || (u.Host != "" && u.Host != s.addr) {
			t.Errorf("link %q; want a link to %s that holds the code %q", c.Link, s.addr, c.Code)
		}
		adopt := func(code string) answer {
			return newBrowser(s).postJSON("/api/progress/carry", map[string]string{"code": code}, ordinary)
		}
		other := newBrowser(s)
		a := other.postJSON("/api/progress/carry", map[string]string{"code": c.Code}, ordinary)
		mine, theirs := owner.cookie("locklab_learner"), other.cookie("locklab_learner")
		switch {
		case a.status != 200:
			t.Errorf("adopt the code from another browser = %s; want 200", a)
		case theirs == "" || theirs == mine:
			t.Errorf("after adopting, the other browser's learner cookie is %q, the owner's %q; want a learner of its own", theirs, mine)
		}
		var quiz struct {
			Progress struct {
				Right int `json:"right"`
			} `json:"progress"`
		}
		if err := json.Unmarshal(other.get("/api/topics/distributed-locks/quiz").body, &quiz); err != nil || quiz.Progress.Right != 1 {
			t.Errorf("the adopting browser's progress: %d right (%v); want the owner's 1", quiz.Progress.Right, err)
		}
		if a := adopt(c.Code); a.status < 400 || a.status >= 500 {
			t.Errorf("a second use of the code = %s; want 4xx", a)
		}
		if a := adopt("NOPE-NOPE-NOPE"); a.status < 400 || a.status >= 500 {
			t.Errorf("an unknown code = %s; want 4xx", a)
		}
		if a := adopt(mine); a.status < 400 || a.status >= 500 {
			t.Errorf("the owner's learner id as a code = %s; want 4xx", a)
		}
	}
	// A fresh code (or, without the API, the one on the progress page,
	// which goes to the log the same way) in a link.
	code := anyCarryCode(t, owner)
	visitor := newBrowser(s)
	if a := visitor.get("/carry/" + code); a.err != nil {
		t.Errorf("GET /carry/CODE: %v", a.err)
	}
	// A later request's log line means the carry link's is written.
	fence := visitor.get(mark("/healthz", "fence"))
	if _, ok := s.log.serverLatency(fence.uri, 5*time.Second); !ok {
		t.Fatal("the server logged no line for GET /healthz")
	}
	if lines := s.log.grep(code); len(lines) > 0 {
		t.Errorf("the server log holds the carry code after GET /carry/CODE:\n%s", strings.Join(lines, "\n"))
	}
}

// attackHostHeader sends a Host (and X-Forwarded-Host) of another site
// from a client that is not a trusted proxy: links the server makes must
// not point there.
func attackHostHeader(t *testing.T, tg *target) {
	s := tg.open
	l := learner(t, s).untrusted()
	adm, code := admin(t, s)
	adm.untrusted()
	for _, hdr := range []http.Header{{"Host": {"evil.com"}}, {"X-Forwarded-Host": {"evil.com"}}} {
		for _, tt := range []struct {
			b          *browser
			method     string
			path, what string
		}{
			{l, "GET", "/progress", "the carry link"},
			{adm, "GET", "/admin/workshops/" + code, "the join link"},
			{l, "POST", "/api/progress/code", "the carry link"},
		} {
			var a answer
			if tt.method == "POST" {
				a = tt.b.do("POST", tt.path, "application/json", []byte("{}"), ordinary, hdr)
			} else {
				a = tt.b.do("GET", tt.path, "", nil, ordinary, hdr)
			}
			t.Logf("%s %s with %v: %d", tt.method, tt.path, hdr, a.status)
			if a.err != nil || a.status >= 500 {
				t.Errorf("%s %s with %v = %s", tt.method, tt.path, hdr, a)
			}
			if strings.Contains(string(a.body), "evil.com") {
				t.Errorf("%s %s with %v: %s points to evil.com", tt.method, tt.path, hdr, tt.what)
			}
		}
	}
}

// attackCrossSite posts from another site, as a page there could make a
// learner's browser do: without the CSRF token the server must refuse.
func attackCrossSite(t *testing.T, tg *target) {
	s := tg.open
	body := []byte(`{"line":"SET stolen 1","client":"A"}`)
	for _, tt := range []struct {
		name string
		hdr  http.Header
	}{
		{"cross-site fetch", http.Header{"Sec-Fetch-Site": {"cross-site"}, "Origin": {"https://evil.com"}}},
		{"same-site fetch", http.Header{"Sec-Fetch-Site": {"same-site"}, "Origin": {"https://sub.evil.com"}}},
		{"no fetch metadata", http.Header{"Origin": {"https://evil.com"}}},
	} {
		b := newBrowser(s)
		b.get("/playground") // the learner's cookies, as a browser would hold them
		c := &http.Client{Transport: transport, Jar: b.jar}
		req, _ := http.NewRequest("POST", s.base+"/api/playground/exec", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range tt.hdr {
			req.Header[k] = v
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		resp.Body.Close()
		t.Logf("%s without the token: %d", tt.name, resp.StatusCode)
		if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s without the CSRF token = %d; want 403", tt.name, resp.StatusCode)
		}
	}
}
