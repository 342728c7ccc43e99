package web

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/locklab/locklab/internal/linelog"
	"github.com/locklab/locklab/internal/testenv"
	"github.com/locklab/locklab/limit"
	"github.com/locklab/locklab/playground"
)

// shortAndLong serves the request made by req both ways: the short way
// (ServeHTTP) and through Echo's middleware chain.
func shortAndLong(s *Server, req func() *http.Request) (short, long *httptest.ResponseRecorder) {
	short, long = httptest.NewRecorder(), httptest.NewRecorder()
	s.ServeHTTP(short, req())
	s.echo.ServeHTTP(long, req())
	return short, long
}

// execVolatile matches what differs from one answer to the next: the
// sandbox clock, CSRF tokens, a new learner's id and the cookies' dates.
var execVolatile = regexp.MustCompile(`"clock_ms":\d+|[A-Za-z]{32}|_echo_csrf_using_sec_fetch_site_|locklab_learner=[A-Za-z0-9_-]{22}|Expires=[^;]+|Max-Age=\d+`)

// comparableHeaders is h without Date, each header's lines sorted, with
// what volatile matches blanked.
func comparableHeaders(h http.Header, volatile *regexp.Regexp) map[string][]string {
	m := map[string][]string{}
	for k, v := range h {
		if k == "Date" {
			continue
		}
		var vs []string
		for _, x := range v {
			vs = append(vs, volatile.ReplaceAllString(x, "X"))
		}
		slices.Sort(vs)
		m[k] = vs
	}
	return m
}

// body is the answer's body, gunzipped if it is gzipped.
func body(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	if w.Header().Get("Content-Encoding") != "gzip" {
		return w.Body.String()
	}
	zr, err := gzip.NewReader(bytes.NewReader(w.Body.Bytes()))
	if err != nil {
		t.Fatalf("gzipped body: %v", err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gzipped body: %v", err)
	}
	return string(b)
}

// TestExecShortWayAnswersAsTheMiddlewareDoes sends the same exec request
// both ways, for every way a client proves it is not another site, for
// refused and oversized bodies and for a gzip-accepting browser, and
// wants the same status, headers and body, the clock, tokens and dates
// aside.
func TestExecShortWayAnswersAsTheMiddlewareDoes(t *testing.T) {
	s, err := New(testConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	const token = "BenchTokenAbcdefghijklmnopqrstuv"
	learner := "locklab_learner=shortwaylearner0123456"
	big := strings.Repeat("v", 3000)
	for _, tt := range []struct {
		name       string
		header     map[string]string
		body       string
		chunked    bool
		wantStatus int
		wantInBody string
	}{
		{"token", map[string]string{"X-CSRF-Token": token, "Cookie": learner + "; _csrf=" + token}, `{"line":"SET k v","client":"A"}`, false, 200, `"output":"OK"`},
		{"no learner yet", map[string]string{"X-CSRF-Token": token, "Cookie": "_csrf=" + token}, `{"line":"PING","client":"B"}`, false, 200, `"output":"PONG"`},
		{"browser", map[string]string{"Sec-Fetch-Site": "same-origin", "Cookie": learner}, `{"line":"GET k","client":"A"}`, false, 200, `"output":"\"v\""`},
		{"typed navigation", map[string]string{"Sec-Fetch-Site": "none", "Cookie": learner}, `{"line":"GET k","client":"A"}`, false, 200, `"v\"`},
		{"same site", map[string]string{"Sec-Fetch-Site": "same-site", "Cookie": learner}, `{"line":"SET k w","client":"A"}`, false, 403, "cross-site request blocked"},
		{"cross site", map[string]string{"Sec-Fetch-Site": "cross-site", "Cookie": learner}, `{"line":"SET k w","client":"A"}`, false, 403, "cross-site request blocked"},
		{"no token", map[string]string{"Cookie": learner}, `{"line":"SET k w","client":"A"}`, false, 400, "missing csrf token"},
		{"wrong token", map[string]string{"X-CSRF-Token": token, "Cookie": learner + "; _csrf=Otherxxxxxxxxxxxxxxxxxxxxxxxxxxx"}, `{"line":"SET k w","client":"A"}`, false, 403, "invalid csrf token"},
		{"planted token", map[string]string{"X-CSRF-Token": "planted", "Cookie": learner + "; _csrf=planted"}, `{"line":"SET k w","client":"A"}`, false, 403, "invalid csrf token"},
		{"gzip, large answer", map[string]string{"Sec-Fetch-Site": "same-origin", "Accept-Encoding": "gzip, deflate, br", "Cookie": learner}, `{"line":"SET big ` + big + `","client":"A"}`, false, 200, `"output":"OK"`},
		{"gzip, large answer read", map[string]string{"Sec-Fetch-Site": "same-origin", "Accept-Encoding": "gzip", "Cookie": learner}, `{"line":"GET big","client":"A"}`, false, 200, big},
		{"malformed", map[string]string{"Sec-Fetch-Site": "same-origin", "Cookie": learner}, `{"line":"SET k w","client":"A","line":"x"}`, false, 400, "malformed JSON body"},
		{"bad client", map[string]string{"Sec-Fetch-Site": "same-origin", "Cookie": learner}, `{"line":"SET k w","client":"C"}`, false, 400, `client must be`},
		{"not JSON", map[string]string{"Sec-Fetch-Site": "same-origin", "Cookie": learner, "Content-Type": "text/plain"}, `line=PING`, false, 415, "send JSON"},
		{"over the body limit", map[string]string{"Sec-Fetch-Site": "same-origin", "Cookie": learner}, `{"line":"` + strings.Repeat("x", 300<<10) + `"}`, false, 413, "Request Entity Too Large"},
		{"over the JSON limit, chunked", map[string]string{"Sec-Fetch-Site": "same-origin", "Cookie": learner}, `{"line":"` + strings.Repeat("x", 200<<10) + `"}`, true, 413, "larger than 192 KiB"},
		{"refused line", map[string]string{"Sec-Fetch-Site": "same-origin", "Cookie": learner}, `{"line":"SHUTDOWN","client":"A"}`, false, 200, `(error)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := func() *http.Request {
				var r *http.Request
				if tt.chunked {
					r = httptest.NewRequest(http.MethodPost, execPath, io.MultiReader(strings.NewReader(tt.body)))
					r.ContentLength = -1
				} else {
					r = httptest.NewRequest(http.MethodPost, execPath, strings.NewReader(tt.body))
				}
				r.Header.Set("Content-Type", "application/json")
				for k, v := range tt.header {
					r.Header.Set(k, v)
				}
				return r
			}
			if !execRoute(req()) {
				t.Fatal("execRoute = false; want the short way")
			}
			short, long := shortAndLong(s, req)
			if short.Code != tt.wantStatus || long.Code != tt.wantStatus {
				t.Errorf("status %d, through the middleware %d; want %d (%s)", short.Code, long.Code, tt.wantStatus, short.Body.String())
			}
			if a, b := comparableHeaders(short.Header(), execVolatile), comparableHeaders(long.Header(), execVolatile); !equalHeaders(a, b) {
				t.Errorf("headers\n%v\nthrough the middleware\n%v", a, b)
			}
			a, b := body(t, short), body(t, long)
			if !strings.Contains(a, tt.wantInBody) {
				t.Errorf("body %.200q; want %q in it", a, tt.wantInBody)
			}
			if execVolatile.ReplaceAllString(a, "X") != execVolatile.ReplaceAllString(b, "X") {
				t.Errorf("bodies differ:\n%.300s\nthrough the middleware\n%.300s", a, b)
			}
			if strings.HasPrefix(tt.name, "gzip") && len(a) > 1024 && short.Header().Get("Content-Encoding") != "gzip" {
				t.Errorf("a large answer to a gzip-accepting browser is %q, not gzipped", short.Header().Get("Content-Encoding"))
			}
		})
	}
}

// TestExecRouteOnlyForPlainPosts: anything but a POST of the exec path
// itself takes Echo's way.
func TestExecRouteOnlyForPlainPosts(t *testing.T) {
	for _, tt := range []struct {
		method, target string
		want           bool
	}{
		{"POST", "/api/playground/exec", true},
		{"GET", "/api/playground/exec", false},
		{"PUT", "/api/playground/exec", false},
		{"POST", "/api/playground/exec?_csrf=x", false},
		{"POST", "/api/playground/exec/", false},
		{"POST", "/api/playground/%65xec", false},
		{"POST", "/api/playground/reset", false},
		{"POST", "/playground/exec", false},
	} {
		if got := execRoute(httptest.NewRequest(tt.method, tt.target, nil)); got != tt.want {
			t.Errorf("execRoute(%s %s) = %v; want %v", tt.method, tt.target, got, tt.want)
		}
	}
}

// TestExecShortWayRateLimited: the write limit holds on the short way.
func TestExecShortWayRateLimited(t *testing.T) {
	cfg := testConfig(t)
	cfg.Limits = limit.Limits{Writes: limit.NewMemoryLimiter(1, 2)}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var codes []int
	for range 4 {
		r := httptest.NewRequest(http.MethodPost, execPath, strings.NewReader(`{"line":"PING","client":"A"}`))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Sec-Fetch-Site", "same-origin")
		r.Header.Set("Cookie", "locklab_learner=ratelimitedlearner0123")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		codes = append(codes, w.Code)
		if w.Code == http.StatusTooManyRequests && w.Header().Get("Retry-After") == "" {
			t.Error("a 429 without Retry-After")
		}
	}
	if !slices.Equal(codes, []int{200, 200, 429, 429}) {
		t.Errorf("statuses %v; want two answered, then 429s", codes)
	}
}

// panickingPlayground is a playground whose Exec panics, as a bug would.
type panickingPlayground struct{ Playground }

func (panickingPlayground) Exec(context.Context, string, playground.Client, string) (playground.Result, error) {
	panic("a bug in the playground")
}

// TestExecShortWayPanicIsA500: a panic on the short way is the same JSON
// 500 as through the middleware, logged with its stack each time, and
// the request is logged and counted under its route either way.
func TestExecShortWayPanicIsA500(t *testing.T) {
	cfg := testConfig(t)
	var logged, access testenv.SyncBuffer
	cfg.Logger = slog.New(slog.NewTextHandler(&logged, nil))
	cfg.AccessLog = slog.New(linelog.NewJSON(&access, nil))
	cfg.Playground = panickingPlayground{cfg.Playground}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	short, long := shortAndLong(s, func() *http.Request {
		r := httptest.NewRequest(http.MethodPost, execPath, strings.NewReader(`{"line":"PING","client":"A"}`))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Sec-Fetch-Site", "same-origin")
		return r
	})
	if short.Code != http.StatusInternalServerError || long.Code != http.StatusInternalServerError {
		t.Errorf("status %d, through the middleware %d; want 500 both", short.Code, long.Code)
	}
	if a, b := short.Body.String(), long.Body.String(); a != b || !strings.Contains(a, `"error"`) {
		t.Errorf("500 answers differ, or are not JSON errors:\n%s\n%s", a, b)
	}
	if n := strings.Count(logged.String(), "a bug in the playground"); n < 2 {
		t.Errorf("the panic was logged %d times; want once per request:\n%s", n, logged.String())
	}
	if n := strings.Count(logged.String(), "goroutine "); n < 2 {
		t.Errorf("%d stacks logged; want the panicking goroutine's with each panic:\n%s", n, logged.String())
	}
	if n := strings.Count(access.String(), `"uri":"/api/playground/exec"`); n != 2 {
		t.Errorf("%d access log lines for the exec path; want 2:\n%s", n, access.String())
	}
	w := httptest.NewRecorder()
	s.metrics.handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if want := `locklab_http_requests_total{method="POST",route="/api/playground/exec",status="500"} 2`; !strings.Contains(w.Body.String(), want) {
		t.Errorf("metrics lack %s", want)
	}
}
