package web

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/locklab/locklab/content"
)

// getKept fetches path with the given Cookie and Accept-Encoding headers and
// returns the response and its body as sent.
func getKept(t *testing.T, s *Server, path, cookie, encoding string) (*http.Response, []byte) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	}
	if encoding != "" {
		req.Header.Set("Accept-Encoding", encoding)
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, req)
	res := w.Result()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", path, res.StatusCode)
	}
	return res, w.Body.Bytes()
}

// cookieHeader is the Cookie header a browser sends after res.
func cookieHeader(res *http.Response) string {
	var out []string
	for _, ck := range res.Cookies() {
		out = append(out, ck.Name+"="+ck.Value)
	}
	return strings.Join(out, "; ")
}

var (
	csrfMeta    = regexp.MustCompile(`<meta name="csrf-token" content="([^"]*)"`)
	clockOnPage = regexp.MustCompile(`data-ms="[0-9]+">[^<]*<`)
)

// The gzip variant of a kept page, spliced from stretches compressed once
// and the request's holes, is the same page.
func TestKeptPagesGzip(t *testing.T) {
	s, err := New(testConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	res, _ := getKept(t, s, "/", "", "")
	browser := cookieHeader(res)
	for _, path := range []string{"/", "/topics/distributed-locks", "/race", "/race/present", "/race?scenario=gc-pause&ttl_ms=5000"} {
		for _, cookie := range []string{"", browser} {
			// Twice: the first renders and keeps the page, the second
			// serves it kept.
			for range 2 {
				res, plain := getKept(t, s, path, cookie, "")
				if res.Header.Get("Content-Encoding") != "" {
					t.Fatalf("GET %s without Accept-Encoding: Content-Encoding %q", path, res.Header.Get("Content-Encoding"))
				}
				zres, zipped := getKept(t, s, path, cookieHeader(res)+"; "+cookie, "br, gzip;q=0.9")
				if zres.Header.Get("Content-Encoding") != "gzip" {
					t.Fatalf("GET %s with gzip: Content-Encoding %q", path, zres.Header.Get("Content-Encoding"))
				}
				zr, err := gzip.NewReader(bytes.NewReader(zipped))
				if err != nil {
					t.Fatalf("GET %s: gzip header: %v", path, err)
				}
				unzipped, err := io.ReadAll(zr) // checks the CRC and size too
				if err != nil {
					t.Fatalf("GET %s: gunzip: %v", path, err)
				}
				// The two requests may differ in their CSRF token and
				// the sandbox clock alone.
				tokenOf := func(b []byte) string {
					m := csrfMeta.FindSubmatch(b)
					if m == nil {
						t.Fatalf("GET %s: no csrf-token meta tag", path)
					}
					return string(m[1])
				}
				want := clockOnPage.ReplaceAll(bytes.ReplaceAll(plain, []byte(tokenOf(plain)), []byte("TOKEN")), []byte("CLOCK"))
				got := clockOnPage.ReplaceAll(bytes.ReplaceAll(unzipped, []byte(tokenOf(unzipped)), []byte("TOKEN")), []byte("CLOCK"))
				if !bytes.Equal(got, want) {
					t.Errorf("GET %s (cookie %q): the gzip variant differs from the page", path, cookie)
				}
				if len(zipped) >= len(plain)/2 && len(plain) > 4096 {
					t.Errorf("GET %s: gzip variant %d bytes for a page of %d", path, len(zipped), len(plain))
				}
			}
		}
	}
}

// Each browser's kept pages carry its own CSRF token, in the meta tag and
// in every form, and a learner's page shows their own progress.
func TestKeptPagesPerBrowser(t *testing.T) {
	s, err := New(testConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	ra, _ := getKept(t, s, "/", "", "")
	rb, _ := getKept(t, s, "/", "", "")
	a, b := cookieHeader(ra), cookieHeader(rb)
	q, err := s.quizzes.Quiz("distributed-locks")
	if err != nil {
		t.Fatal(err)
	}
	first := q.Questions[0]
	for _, ch := range first.Choices {
		if first.IsRight(ch.ID) {
			req := httptest.NewRequest(http.MethodPost, "/api/topics/distributed-locks/quiz/"+first.ID, strings.NewReader(`{"choice":"`+ch.ID+`"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Sec-Fetch-Site", "same-origin")
			req.Header.Set("Cookie", a)
			w := httptest.NewRecorder()
			s.ServeHTTP(w, req)
			if w.Code != http.StatusOK {
				t.Fatalf("answer: %d %s", w.Code, w.Body)
			}
			// The first answer gives the browser its learner id.
			if ids := cookieHeader(w.Result()); ids != "" {
				a += "; " + ids
			}
		}
	}
	for _, tc := range []struct {
		cookie, status string
		solved         int
	}{{a, "in-progress", 1}, {b, "not-started", 0}, {a, "in-progress", 1}, {b, "not-started", 0}} {
		res, page := getKept(t, s, "/topics/distributed-locks", tc.cookie, "")
		// The browser keeps its token: no new CSRF cookie is set.
		for _, ck := range res.Cookies() {
			if ck.Name == "_csrf" {
				t.Fatalf("the CSRF cookie changed: %q, sent %q", ck.Value, tc.cookie)
			}
		}
		_, token, _ := strings.Cut(tc.cookie, "_csrf=")
		token, _, _ = strings.Cut(token, ";")
		if m := csrfMeta.FindSubmatch(page); m == nil || string(m[1]) != token {
			t.Errorf("meta csrf-token %q; want the browser's %q", m, token)
		}
		fields := strings.Count(string(page), `name="_csrf" value="`+token+`"`)
		if all := strings.Count(string(page), `name="_csrf"`); fields != all || all < len(q.Questions) {
			t.Errorf("%d of %d _csrf fields carry the browser's token (want all, at least %d)", fields, all, len(q.Questions))
		}
		if !strings.Contains(string(page), `data-status="`+tc.status+`"`) {
			t.Errorf("lesson page for %s: no status %q", tc.cookie, tc.status)
		}
		if got := strings.Count(string(page), `class="question solved"`); got != tc.solved {
			t.Errorf("lesson page shows %d questions solved; want %d", got, tc.solved)
		}
		if strings.Contains(string(page), "locklab-hole-") {
			t.Error("a hole marker is left in the page")
		}
	}
}

// changingCourse hands out a new course on every call, as -content DIR
// does, with the title it is set to.
type changingCourse struct{ title string }

func (c *changingCourse) Course() (*content.Course, error) {
	course, err := content.Load(content.Embedded())
	if err != nil {
		return nil, err
	}
	course.Title = c.title
	return course, nil
}

// A kept page is served only for the content it was rendered from.
func TestKeptPagesFollowContent(t *testing.T) {
	cfg := testConfig(t)
	src := &changingCourse{title: "First title"}
	cfg.Content = src
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, title := range []string{"First title", "Second title", "First title"} {
		src.title = title
		for _, path := range []string{"/", "/topics/distributed-locks"} {
			_, page := getKept(t, s, path, "", "")
			if !strings.Contains(string(page), title) {
				t.Errorf("GET %s after the course changed to %q: still the old page", path, title)
			}
		}
	}
}
