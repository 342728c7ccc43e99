package web

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/locklab/locklab/content"
	"github.com/locklab/locklab/internal/linelog"
	"github.com/locklab/locklab/internal/testenv"
	"github.com/locklab/locklab/limit"
	"github.com/locklab/locklab/playground"
)

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

// assertDynamicHeaders fails unless w has what every dynamic answer
// has: kept out of caches, Vary naming Cookie once, and the security
// headers.
func assertDynamicHeaders(t *testing.T, w *httptest.ResponseRecorder) {
	t.Helper()
	h := w.Header()
	if got := h.Get("Cache-Control"); got != "no-store, private" {
		t.Errorf("Cache-Control %q; want no-store, private", got)
	}
	var cookie int
	for _, v := range h.Values("Vary") {
		for f := range strings.SplitSeq(v, ",") {
			if strings.TrimSpace(f) == "Cookie" {
				cookie++
			}
		}
	}
	if cookie != 1 {
		t.Errorf("Vary %q names Cookie %d times; want once", h.Values("Vary"), cookie)
	}
	for _, name := range []string{"Content-Security-Policy", "X-Content-Type-Options", "X-Frame-Options", "Referrer-Policy"} {
		if h.Get(name) == "" {
			t.Errorf("no %s", name)
		}
	}
}

// TestExecAnswers sends the exec API every way a client proves it is not
// another site, refused and oversized bodies and a gzip-accepting
// browser, and checks each answer's status, body and headers.
func TestExecAnswers(t *testing.T) {
	s, err := New(testConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	const token = "BenchTokenAbcdefghijklmnopqrstuv"
	learner := "locklab_learner=execanswerlearner01234"
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
			var r *http.Request
			if tt.chunked {
				r = httptest.NewRequest(http.MethodPost, "/api/playground/exec", io.MultiReader(strings.NewReader(tt.body)))
				r.ContentLength = -1
			} else {
				r = httptest.NewRequest(http.MethodPost, "/api/playground/exec", strings.NewReader(tt.body))
			}
			r.Header.Set("Content-Type", "application/json")
			for k, v := range tt.header {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			s.ServeHTTP(w, r)
			got := body(t, w)
			if w.Code != tt.wantStatus {
				t.Errorf("status %d; want %d (%.200s)", w.Code, tt.wantStatus, got)
			}
			if !strings.Contains(got, tt.wantInBody) {
				t.Errorf("body %.200q; want %q in it", got, tt.wantInBody)
			}
			if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type %q; want JSON", ct)
			}
			assertDynamicHeaders(t, w)
			if strings.HasPrefix(tt.name, "gzip") && len(got) > 1024 && w.Header().Get("Content-Encoding") != "gzip" {
				t.Errorf("a large answer to a gzip-accepting browser is %q, not gzipped", w.Header().Get("Content-Encoding"))
			}
		})
	}
}

// TestExecRateLimited: the write limit holds on the exec API, with
// Retry-After on its 429s.
func TestExecRateLimited(t *testing.T) {
	cfg := testConfig(t)
	cfg.Limits = limit.Limits{Writes: limit.NewMemoryLimiter(1, 2)}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var codes []int
	for range 4 {
		r := httptest.NewRequest(http.MethodPost, "/api/playground/exec", strings.NewReader(`{"line":"PING","client":"A"}`))
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

// TestExecPanicIsA500: a panic in the exec API is a JSON 500, logged with
// the stack of the goroutine that panicked, and the request is logged and
// counted under its route.
func TestExecPanicIsA500(t *testing.T) {
	cfg := testConfig(t)
	var logged, access testenv.SyncBuffer
	cfg.Logger = slog.New(slog.NewTextHandler(&logged, nil))
	cfg.AccessLog = slog.New(linelog.NewJSON(&access, nil))
	cfg.Playground = panickingPlayground{cfg.Playground}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodPost, "/api/playground/exec", strings.NewReader(`{"line":"PING","client":"A"}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	if w.Code != http.StatusInternalServerError || !strings.Contains(w.Body.String(), `"error"`) {
		t.Errorf("%d %s; want a JSON 500", w.Code, w.Body.String())
	}
	assertDynamicHeaders(t, w)
	if !strings.Contains(logged.String(), "a bug in the playground") || !strings.Contains(logged.String(), "goroutine ") {
		t.Errorf("the panic and its stack are not logged:\n%s", logged.String())
	}
	if n := strings.Count(access.String(), `"uri":"/api/playground/exec","status":500`); n != 1 {
		t.Errorf("%d access log lines of the 500; want 1:\n%s", n, access.String())
	}
	m := httptest.NewRecorder()
	s.metrics.handler().ServeHTTP(m, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if want := `locklab_http_requests_total{method="POST",route="/api/playground/exec",status="500"} 1`; !strings.Contains(m.Body.String(), want) {
		t.Errorf("metrics lack %s", want)
	}
}

// TestPageTokens: each kept page gives a visitor without a token a new
// one, in its cookie and in the page; a browser that says where it comes
// from (Sec-Fetch-Site) gets no cookie; and a token planted by a sibling
// host is dropped, never written into the page. Every answer has the
// dynamic headers, gzipped or not.
func TestPageTokens(t *testing.T) {
	s, err := New(testConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	learner := benchLearner(t, s)
	for _, path := range []string{"/", "/topics/distributed-locks", "/race", "/race/present"} {
		for _, tt := range []struct {
			name      string
			header    map[string]string
			newCookie bool
		}{
			{"visitor", nil, true},
			{"learner", map[string]string{"Cookie": learner}, false},
			{"browser", map[string]string{"Sec-Fetch-Site": "none"}, false},
			{"gzip", map[string]string{"Accept-Encoding": "gzip", "Cookie": learner}, false},
			{"planted token", map[string]string{"Cookie": "_csrf=planted-by-a-sibling"}, true},
		} {
			t.Run(path+"/"+tt.name, func(t *testing.T) {
				r := httptest.NewRequest(http.MethodGet, path, nil)
				for k, v := range tt.header {
					r.Header.Set(k, v)
				}
				w := httptest.NewRecorder()
				s.ServeHTTP(w, r)
				if w.Code != http.StatusOK {
					t.Fatalf("status %d", w.Code)
				}
				assertDynamicHeaders(t, w)
				if gz := w.Header().Get("Content-Encoding") == "gzip"; gz != (tt.name == "gzip") {
					t.Errorf("Content-Encoding %q", w.Header().Get("Content-Encoding"))
				}
				page := body(t, w)
				var token string
				for _, ck := range w.Result().Cookies() {
					if ck.Name == csrfCookieBase {
						token = ck.Value
					}
				}
				if (token != "") != tt.newCookie {
					t.Errorf("new CSRF cookie %q; want one: %v", token, tt.newCookie)
				}
				if token != "" && !strings.Contains(page, token) {
					t.Error("the new token is not in the page")
				}
				if strings.Contains(page, "planted-by-a-sibling") || strings.Contains(page, "locklab-hole-") {
					t.Error("a planted token or a hole marker is in the page")
				}
			})
		}
	}
}

// panickingCourse is a course source that panics, as a bug would.
type panickingCourse struct{}

func (panickingCourse) Course() (*content.Course, error) { panic("a bug in the content") }

// TestPagePanicIsA500: a panic while serving a page is the 500 page, and
// the panic is in the log.
func TestPagePanicIsA500(t *testing.T) {
	cfg := testConfig(t)
	var logged testenv.SyncBuffer
	cfg.Logger = slog.New(slog.NewTextHandler(&logged, nil))
	cfg.Content = panickingCourse{}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
	if w.Code != http.StatusInternalServerError || !strings.Contains(w.Body.String(), "Something went wrong") {
		t.Errorf("%d %.200s; want the 500 page", w.Code, w.Body.String())
	}
	assertDynamicHeaders(t, w)
	if !strings.Contains(logged.String(), "a bug in the content") {
		t.Errorf("the panic is not logged:\n%s", logged.String())
	}
}

// TestPagesCountedAndLogged: a page is counted under its route pattern
// and logged, with or without a query, found or not.
func TestPagesCountedAndLogged(t *testing.T) {
	cfg := testConfig(t)
	var logged testenv.SyncBuffer
	cfg.AccessLog = slog.New(linelog.NewJSON(&logged, nil))
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/topics/distributed-locks", "/topics/distributed-locks?from=home", "/topics/no-such-topic"} {
		s.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, path, nil))
	}
	w := httptest.NewRecorder()
	s.metrics.handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for _, want := range []string{
		`locklab_http_requests_total{method="GET",route="/topics/:slug",status="200"} 2`,
		`locklab_http_requests_total{method="GET",route="/topics/:slug",status="404"} 1`,
	} {
		if !strings.Contains(w.Body.String(), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	lines := strings.Split(strings.TrimSpace(logged.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `"uri":"/topics/distributed-locks","status":200`) ||
		!strings.Contains(lines[2], `"status":404`) {
		t.Errorf("request log:\n%s\nwant three lines, the first a 200 of the lesson and the last a 404", logged.String())
	}
}
