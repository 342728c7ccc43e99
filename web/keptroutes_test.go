package web

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/locklab/locklab/content"
	"github.com/locklab/locklab/internal/linelog"
	"github.com/locklab/locklab/internal/testenv"
)

// TestKeptRoutesAnswerAsTheMiddlewareDoes serves each kept page both
// ways, the short way (ServeHTTP) and through Echo's middleware chain,
// and wants the same answer: status, headers and body, the CSRF token,
// the date and the learner's sandbox clock aside.
func TestKeptRoutesAnswerAsTheMiddlewareDoes(t *testing.T) {
	s, err := New(testConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	learner := benchLearner(t, s)
	token := regexp.MustCompile(`[A-Za-z]{32}|_echo_csrf_using_sec_fetch_site_`)
	for _, path := range []string{"/", "/topics/distributed-locks", "/topics/no-such-topic", "/race", "/race/present"} {
		for _, tt := range []struct {
			name   string
			header map[string]string
		}{
			{"visitor", nil},
			{"learner", map[string]string{"Cookie": learner}},
			{"browser", map[string]string{"Sec-Fetch-Site": "none", "Cookie": learner}},
			{"gzip", map[string]string{"Accept-Encoding": "gzip", "Cookie": learner}},
			{"foreign token", map[string]string{"Cookie": "_csrf=planted-by-a-sibling; " + learner}},
		} {
			t.Run(path+"/"+tt.name, func(t *testing.T) {
				req := func() *http.Request {
					r := httptest.NewRequest(http.MethodGet, path, nil)
					for k, v := range tt.header {
						r.Header.Set(k, v)
					}
					return r
				}
				if _, _, ok := keptRoute(req()); !ok {
					t.Fatalf("keptRoute(%s) = false; want the short way", path)
				}
				short, long := httptest.NewRecorder(), httptest.NewRecorder()
				s.ServeHTTP(short, req())
				s.echo.ServeHTTP(long, req())
				if short.Code != long.Code {
					t.Errorf("status %d; through the middleware %d", short.Code, long.Code)
				}
				if a, b := comparableHeaders(short.Header(), token), comparableHeaders(long.Header(), token); !equalHeaders(a, b) {
					t.Errorf("headers\n%v\nthrough the middleware\n%v", a, b)
				}
				if tt.name == "gzip" {
					if short.Header().Get("Content-Encoding") != "gzip" && short.Code == http.StatusOK {
						t.Errorf("a gzip-accepting reader got %q", short.Header().Get("Content-Encoding"))
					}
					return // the token is inside the compressed bytes
				}
				// The learner's sandbox clock moves between the two answers.
				a := clockOnPage.ReplaceAllString(token.ReplaceAllString(short.Body.String(), "TOKEN"), "CLOCK")
				b := clockOnPage.ReplaceAllString(token.ReplaceAllString(long.Body.String(), "TOKEN"), "CLOCK")
				if a != b {
					t.Errorf("bodies differ: %d and %d bytes; first difference at %d", len(a), len(b), firstDiff(a, b))
				}
				if tt.name == "foreign token" && strings.Contains(short.Body.String(), "planted-by-a-sibling") {
					t.Error("a planted token was written into the page")
				}
			})
		}
	}
}

// TestKeptRouteOnlyForPlainGets: anything beside a plain GET of a kept
// page takes the middleware's way.
func TestKeptRouteOnlyForPlainGets(t *testing.T) {
	for _, tt := range []struct {
		method, target string
		body           string
		want           bool
	}{
		{"GET", "/", "", true},
		{"GET", "/race/present", "", true},
		{"GET", "/topics/distributed-locks", "", true},
		{"HEAD", "/", "", false},
		{"POST", "/", "", false},
		{"GET", "/?x=1", "", false},
		{"GET", "/race?scenario=normal", "", false},
		{"GET", "/topics/", "", false},
		{"GET", "/topics/a/b", "", false},
		{"GET", "/topics/%64istributed-locks", "", false},
		{"GET", "/topics/distributed-locks/", "", false},
		{"GET", "/race/", "", false},
		{"GET", "/", "a body", false},
		{"GET", "/playground", "", false},
	} {
		var body *strings.Reader
		if tt.body != "" {
			body = strings.NewReader(tt.body)
		}
		var r *http.Request
		if body != nil {
			r = httptest.NewRequest(tt.method, tt.target, body)
		} else {
			r = httptest.NewRequest(tt.method, tt.target, nil)
		}
		if _, _, got := keptRoute(r); got != tt.want {
			t.Errorf("keptRoute(%s %s, body %q) = %v; want %v", tt.method, tt.target, tt.body, got, tt.want)
		}
	}
}

func equalHeaders(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

func firstDiff(a, b string) int {
	for i := 0; i < min(len(a), len(b)); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// panickingCourse is a course source that panics, as a bug would.
type panickingCourse struct{}

func (panickingCourse) Course() (*content.Course, error) { panic("a bug in the content") }

// TestKeptRoutePanicIsA500: a panic on the short way is recovered as the
// middleware recovers it: the 500 page, and the panic in the log.
func TestKeptRoutePanicIsA500(t *testing.T) {
	cfg := testConfig(t)
	var logged testenv.SyncBuffer
	cfg.Logger = slog.New(slog.NewTextHandler(&logged, nil))
	cfg.Content = panickingCourse{}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	short, long := httptest.NewRecorder(), httptest.NewRecorder()
	s.ServeHTTP(short, httptest.NewRequest(http.MethodGet, "/", nil))
	s.echo.ServeHTTP(long, httptest.NewRequest(http.MethodGet, "/", nil))
	if short.Code != http.StatusInternalServerError || long.Code != http.StatusInternalServerError {
		t.Errorf("status %d, through the middleware %d; want 500 both", short.Code, long.Code)
	}
	token := regexp.MustCompile(`[A-Za-z]{32}`)
	if a, b := token.ReplaceAllString(short.Body.String(), ""), token.ReplaceAllString(long.Body.String(), ""); a != b || !strings.Contains(a, "Something went wrong") {
		t.Errorf("500 pages differ, or are not the error page:\n%s\n%s", a, b)
	}
	if n := strings.Count(logged.String(), "a bug in the content"); n < 2 {
		t.Errorf("the panic was logged %d times; want once per request:\n%s", n, logged.String())
	}
}

// TestKeptRouteCountedAndLogged: a page served the short way is counted
// under its route pattern and logged, as through the middleware.
func TestKeptRouteCountedAndLogged(t *testing.T) {
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
