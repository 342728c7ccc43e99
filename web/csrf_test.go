package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestCSRFSecFetchSite checks which writes the Sec-Fetch-Site header lets
// through: only same-origin and none; same-site is refused even with a
// valid double-submit token, as a sibling subdomain can plant the cookie.
func TestCSRFSecFetchSite(t *testing.T) {
	s, err := New(testConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	const tok = "PlantedTokenAbcdefghijklmnopqrst" // the shape the site makes
	for _, tt := range []struct {
		site      string
		withToken bool
		want      int
	}{
		{"same-origin", false, 200},
		{"none", false, 200},
		{"same-site", false, 403},
		{"same-site", true, 403},
		{"cross-site", false, 403},
		{"cross-site", true, 403},
		{"", false, 400}, // no header, no token
		{"", true, 200},  // a script with the double-submit token
	} {
		req := httptest.NewRequest("POST", "/api/playground/reset", nil)
		if tt.site != "" {
			req.Header.Set("Sec-Fetch-Site", tt.site)
		}
		if tt.withToken {
			req.AddCookie(&http.Cookie{Name: "_csrf", Value: tok})
			req.Header.Set("X-CSRF-Token", tok)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code != tt.want {
			t.Errorf("POST with Sec-Fetch-Site %q, token %v = %d; want %d (%s)", tt.site, tt.withToken, w.Code, tt.want, strings.TrimSpace(w.Body.String()))
		}
	}
}

// TestTLSHeaders checks what -behind-tls changes: HSTS and the
// __Host-_csrf cookie, and neither without it.
func TestTLSHeaders(t *testing.T) {
	for _, tt := range []struct {
		secure     bool
		hsts       string
		cookieName string
	}{
		{false, "", "_csrf"},
		{true, "max-age=31536000; includeSubDomains", "__Host-_csrf"},
	} {
		cfg := testConfig(t)
		cfg.SecureCookies = tt.secure
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"/", "/healthz", "/nope", "/topics/distributed-locks/"} {
			w := httptest.NewRecorder()
			s.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
			if got := w.Header().Get("Strict-Transport-Security"); got != tt.hsts {
				t.Errorf("secure=%v GET %s: Strict-Transport-Security %q; want %q", tt.secure, path, got, tt.hsts)
			}
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		var ck *http.Cookie
		for _, c := range w.Result().Cookies() {
			if strings.HasSuffix(c.Name, "_csrf") {
				ck = c
			}
		}
		switch {
		case ck == nil:
			t.Errorf("secure=%v: no CSRF cookie in %v", tt.secure, w.Header()["Set-Cookie"])
		case ck.Name != tt.cookieName || ck.Secure != tt.secure || ck.Path != "/" || ck.Domain != "":
			t.Errorf("secure=%v: CSRF cookie %v; want %s, Secure=%v, Path=/, no Domain", tt.secure, ck, tt.cookieName, tt.secure)
		}
		// The token from that cookie is accepted under its name.
		req := httptest.NewRequest("POST", "/api/playground/reset", nil)
		req.AddCookie(&http.Cookie{Name: ck.Name, Value: ck.Value})
		req.Header.Set("X-CSRF-Token", ck.Value)
		w = httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code != 200 {
			t.Errorf("secure=%v: POST with the %s token = %d; want 200", tt.secure, ck.Name, w.Code)
		}
	}
}

// TestCSRFTokenShape checks that a CSRF cookie the site did not make is
// never reused: pages would carry it, and a sibling host can plant one.
// A read gets a fresh token instead; a write that echoes the planted
// value is refused.
func TestCSRFTokenShape(t *testing.T) {
	s, err := New(testConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, planted := range []string{"<b>x</b>", "short", "PlantedTokenAbcdefghijklmnopqrs1", strings.Repeat("a", 33)} {
		req := httptest.NewRequest("GET", "/", nil)
		req.AddCookie(&http.Cookie{Name: "_csrf", Value: planted})
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code != 200 || strings.Contains(w.Body.String(), planted) {
			t.Errorf("GET / with _csrf=%q: %d, page carries it %v; want 200 without it", planted, w.Code, strings.Contains(w.Body.String(), planted))
		}
		var fresh string
		for _, ck := range w.Result().Cookies() {
			if ck.Name == "_csrf" {
				fresh = ck.Value
			}
		}
		if !validCSRFToken(fresh) || !strings.Contains(w.Body.String(), fresh) {
			t.Errorf("GET / with _csrf=%q: new token %q, in the page %v; want a fresh one", planted, fresh, strings.Contains(w.Body.String(), fresh))
		}
		req = httptest.NewRequest("POST", "/api/playground/reset", nil)
		req.AddCookie(&http.Cookie{Name: "_csrf", Value: planted})
		req.Header.Set("X-CSRF-Token", planted)
		w = httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code != http.StatusForbidden {
			t.Errorf("POST echoing _csrf=%q: %d; want 403", planted, w.Code)
		}
	}
	// A token of the right shape is kept, and not set again.
	const tok = "KeptTokenAbcdefghijklmnopqrstuvw"
	req := httptest.NewRequest("GET", "/", nil)
	req.AddCookie(&http.Cookie{Name: "_csrf", Value: tok})
	w := httptest.NewRecorder()
	s.ServeHTTP(w, req)
	if !strings.Contains(w.Body.String(), tok) || strings.Contains(strings.Join(w.Header().Values("Set-Cookie"), ";"), "_csrf=") {
		t.Errorf("GET / with a good token: in page %v, Set-Cookie %q; want it in the page and no new cookie", strings.Contains(w.Body.String(), tok), w.Header().Values("Set-Cookie"))
	}
}
