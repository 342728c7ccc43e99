package web

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// apiParam matches a route's path parameters (:id).
var apiParam = regexp.MustCompile(`:[a-z]+`)

// apiRequest sends method to path with a CSRF token the middleware
// accepts, so that a write method reaches the router.
func apiRequest(t *testing.T, base, method, path string) (*http.Response, string) {
	t.Helper()
	const token = "GoldenCsrfTokenAbcdefghijklmnopq"
	req, _ := http.NewRequest(method, base+path, strings.NewReader("{}"))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRF-Token", token)
	req.AddCookie(&http.Cookie{Name: "_csrf", Value: token})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// TestAPIWrongMethodIs405 checks that a known API path asked with a method
// it does not take answers 405 with Allow and a JSON error that names the
// methods it takes, and that an unknown path is still a 404 without Allow.
func TestAPIWrongMethodIs405(t *testing.T) {
	ts := newTestServer(t)
	for _, tc := range []struct {
		method, path string
		code         int
		allow        string
	}{
		{"GET", "/api/progress/code", 405, "POST"},
		{"GET", "/api/progress/carry", 405, "POST"},
		{"GET", "/api/playground/exec", 405, "POST"},
		{"GET", "/api/lab/check", 405, "POST"},
		{"GET", "/api/topics/distributed-locks/quiz/q1", 405, "POST"},
		{"HEAD", "/api/lab/check", 405, "POST"},
		{"POST", "/api/race/scenarios", 405, "GET, HEAD"},
		{"POST", "/api/playground/keys", 405, "GET, HEAD"},
		{"POST", "/api/topics/distributed-locks/quiz", 405, "GET, HEAD"},
		{"GET", "/api/no-such-endpoint", 404, ""},
		{"GET", "/api/progress", 404, ""},
		{"POST", "/api/no-such-endpoint", 404, ""},
	} {
		resp, body := apiRequest(t, ts.URL, tc.method, tc.path)
		if resp.StatusCode != tc.code {
			t.Errorf("%s %s = %d %s; want %d", tc.method, tc.path, resp.StatusCode, body, tc.code)
			continue
		}
		if got := resp.Header.Get("Allow"); got != tc.allow {
			t.Errorf("%s %s: Allow %q; want %q", tc.method, tc.path, got, tc.allow)
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s %s: Content-Type %q; want JSON", tc.method, tc.path, ct)
		}
		if tc.method == http.MethodHead {
			if body != "" {
				t.Errorf("HEAD %s sent a body: %q", tc.path, body)
			}
			continue
		}
		var e apiError
		if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error == "" {
			t.Errorf("%s %s: body %q is not an API error (%v)", tc.method, tc.path, body, err)
			continue
		}
		if tc.code == 405 && !strings.Contains(e.Error, strings.ReplaceAll(tc.allow, ", ", " or ")) {
			t.Errorf("%s %s: error %q does not say it takes %s", tc.method, tc.path, e.Error, tc.allow)
		}
	}
}

// TestEveryAPIRouteRefusesOtherMethodsWith405 walks the route table: each
// API route, asked with a method among GET and POST that it does not
// take, answers 405 with its own method in Allow, not the catch-all's 404.
func TestEveryAPIRouteRefusesOtherMethodsWith405(t *testing.T) {
	s := newAdminServer(t)
	base := newServerFor(t, s)
	methods := routeTable(s)
	for path := range methods {
		if !strings.HasPrefix(path, "/api/") || path == "/api/*" {
			delete(methods, path)
		}
	}
	if len(methods) < 15 {
		t.Fatalf("only %d API routes in the table: %v", len(methods), methods)
	}
	checked := 0
	for route, has := range methods {
		path := apiParam.ReplaceAllString(route, "x")
		for _, m := range []string{http.MethodGet, http.MethodPost} {
			if has[m] {
				continue
			}
			resp, body := apiRequest(t, base, m, path)
			if resp.StatusCode != http.StatusMethodNotAllowed {
				// Another route may serve the concrete path with m
				// (GET /api/race/:id takes /api/race/done).
				if other := s.apiMethods(path); !slices.Contains(other, m) {
					t.Errorf("%s %s (route %s) = %d %s; want 405", m, path, route, resp.StatusCode, body)
				}
				continue
			}
			checked++
			allow := strings.Split(resp.Header.Get("Allow"), ", ")
			for own := range has {
				if !slices.Contains(allow, own) {
					t.Errorf("%s %s: Allow %q lacks %s", m, path, allow, own)
				}
			}
		}
	}
	if checked < 10 {
		t.Errorf("only %d wrong-method requests answered 405", checked)
	}
}
