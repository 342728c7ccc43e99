package web

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// TestTrailingSlashRedirectStaysOnSite sends paths that browsers could turn
// into another host, encoded in every way: none may be redirected anywhere
// but a plain path on this site, and the known tricks get a 404.
func TestTrailingSlashRedirectStaysOnSite(t *testing.T) {
	s, err := New(testConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		uri      string
		code     int
		location string // for redirects
	}{
		{"/topics/distributed-locks/", 301, "/topics/distributed-locks"},
		{"/topics/distributed-locks///", 301, "/topics/distributed-locks"},
		{"/race/?scenario=gc-pause&ttl=100", 301, "/race?scenario=gc-pause&ttl=100"},
		{"/topics/a%2Fb/", 301, "/topics/a%2Fb"},
		{"/%5Cevil.com/", 404, ""},
		{"/%5cevil.com/", 404, ""},
		{"/%255Cevil.com/", 404, ""},
		{"/%25255Cevil.com/", 404, ""},
		{"/%2525255Cevil.com/", 404, ""},
		{"/%09/evil.com/", 404, ""},
		{"/%0A/evil.com/", 404, ""},
		{"/%0D%0ALocation:%20http://evil.com/", 404, ""},
		{"/%0d%0a/evil.com/", 404, ""},
		{"/%00/evil.com/", 404, ""},
		{"/%7F/evil.com/", 404, ""},
		{"/%20/evil.com/", 404, ""},
		{"/%2F%2Fevil.com/", 404, ""},
		{"/%2f/evil.com/", 404, ""},
		{"/%252F%252Fevil.com/", 404, ""},
		{"//evil.com/", 404, ""},
		{"///evil.com/", 404, ""},
		{"/.//evil.com/", 404, ""},
		{"/./evil.com/", 404, ""},
		{"/../evil.com/", 404, ""},
		{"/topics/../evil.com/", 404, ""},
		{"/%2E%2E/evil.com/", 404, ""},
		{"/%2e/%2fevil.com/", 404, ""},
		{"/topics/x/./", 404, ""},
		{"/topics/x/../", 404, ""},
		{"/a\\b/", 404, ""},
		{"/evil.com%5C/", 404, ""},
		{"/%EF%BC%8Fevil.com/", 404, ""},  // fullwidth solidus
		{"/%E3%80%80/evil.com/", 404, ""}, // ideographic space
		{"/caf%C3%A9/", 404, ""},
		{"/%/", 404, ""},
		{"/topics/x/?next=%0D%0Aevil", 301, "/topics/x?next=%0D%0Aevil"},
		{"/topics/x/?\\evil", 404, ""},
		{"///", 404, ""},
	} {
		t.Run(tt.uri, func(t *testing.T) {
			req := httptest.NewRequest("GET", "http://example.test/", nil)
			req.RequestURI = tt.uri
			u, err := url.ParseRequestURI(tt.uri)
			if err != nil {
				// The server itself would refuse it with 400 before us.
				t.Skipf("not a request URI Go accepts: %v", err)
			}
			req.URL = u
			w := httptest.NewRecorder()
			s.ServeHTTP(w, req)
			loc := w.Header().Get("Location")
			if w.Code != tt.code || loc != tt.location {
				t.Errorf("GET %s = %d Location %q; want %d %q", tt.uri, w.Code, loc, tt.code, tt.location)
			}
			if loc != "" {
				checkLocalLocation(t, loc)
			}
		})
	}
}

// checkLocalLocation fails unless loc names a path on this site however a
// browser reads it.
func checkLocalLocation(t *testing.T, loc string) {
	t.Helper()
	p, _, _ := strings.Cut(loc, "?")
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.ContainsAny(p, "\\\t\r\n ") {
		t.Errorf("Location %q could leave the site", loc)
	}
	for range 3 {
		d, err := url.PathUnescape(p)
		if err != nil || strings.HasPrefix(d, "//") || strings.ContainsAny(d, "\\\t\r\n") {
			t.Errorf("Location %q could leave the site once decoded (%q)", loc, d)
			return
		}
		p = d
	}
}

// TestEndWorkshopRedirectEscapesCode checks that a code from the path is
// escaped, not pasted into Location, and an unknown one is a 404.
func TestEndWorkshopRedirectEscapesCode(t *testing.T) {
	cfg := testConfig(t)
	cfg.AdminToken = adminToken
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("POST", "/admin/workshops/%2F%2Fevil.com/end", nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	w := httptest.NewRecorder()
	s.ServeHTTP(w, req)
	if loc := w.Header().Get("Location"); loc != "" {
		checkLocalLocation(t, loc)
	}
	if w.Code != http.StatusNotFound {
		t.Errorf("ending an unknown workshop = %d; want 404", w.Code)
	}
}
