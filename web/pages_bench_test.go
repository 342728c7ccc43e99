package web

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/linelog"
)

// BenchmarkPages serves the home, lesson and race pages in process, for a
// visitor without a cookie and for a learner with progress, next to a bare
// handler that writes the same bytes from memory; "ratio" is the bare
// handler's time over the page's, the share of the static-file speed the
// page reaches (bench/pages.sh measures the same over the network). The
// time per op includes both.
func BenchmarkPages(b *testing.B) {
	cfg := testConfig(b)
	cfg.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	// As the binary logs requests.
	cfg.AccessLog = slog.New(linelog.NewJSON(io.Discard, nil))
	s, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	learner := benchLearner(b, s)
	for _, page := range []string{"/", "/topics/distributed-locks", "/race"} {
		for _, who := range []struct {
			name   string
			cookie string
		}{{"visitor", ""}, {"learner", learner}} {
			get := func() *http.Request {
				req := httptest.NewRequest(http.MethodGet, page, nil)
				if who.cookie != "" {
					req.Header.Set("Cookie", who.cookie)
				}
				return req
			}
			w := httptest.NewRecorder()
			s.ServeHTTP(w, get())
			if w.Code != http.StatusOK {
				b.Fatalf("GET %s: %d", page, w.Code)
			}
			body, ctype := w.Body.Bytes(), w.Header().Get("Content-Type")
			bare := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", ctype)
				_, _ = w.Write(body)
			})
			b.Run(strings.TrimPrefix(page, "/")+"/"+who.name, func(b *testing.B) {
				b.ReportAllocs()
				var w discardWriter
				benchRatio(b, func() {
					w.reset()
					s.ServeHTTP(&w, get())
					if w.code != http.StatusOK || w.n != len(body) {
						b.Fatalf("GET %s: %d, %d bytes; want 200, %d bytes", page, w.code, w.n, len(body))
					}
				}, func() { w.reset(); bare.ServeHTTP(&w, get()) })
			})
		}
	}
}

// discardWriter is a ResponseWriter that keeps only the status and the
// number of bytes: a recorder's growing buffer would cost both sides more
// than the handlers do.
type discardWriter struct {
	h    http.Header
	code int
	n    int
}

func (w *discardWriter) reset()              { w.h, w.code, w.n = http.Header{}, 0, 0 }
func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}
func (w *discardWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.n += len(b)
	return len(b), nil
}

// benchRatio runs ours and yardstick in turn, one call each per round, so
// that a machine whose load changes slows both alike, and reports "ratio":
// the yardstick's time over ours.
func benchRatio(b *testing.B, ours, yardstick func()) {
	var oursNS, yardNS time.Duration
	for b.Loop() {
		t0 := time.Now()
		ours()
		t1 := time.Now()
		yardstick()
		oursNS += t1.Sub(t0)
		yardNS += time.Since(t1)
	}
	b.ReportMetric(float64(yardNS)/float64(oursNS), "ratio")
}

// benchLearner makes a learner with progress on the lesson's quiz (its
// first question answered right, its second wrong) and returns the
// Cookie header of their browser.
func benchLearner(b testing.TB, s *Server) string {
	b.Helper()
	jar := map[string]string{} // the browser's cookies, as the answers set them
	keep := func(w *httptest.ResponseRecorder) {
		for _, ck := range w.Result().Cookies() {
			jar[ck.Name] = ck.Value
		}
	}
	header := func() string {
		var cookies []string
		for name, value := range jar {
			cookies = append(cookies, name+"="+value)
		}
		slices.Sort(cookies)
		return strings.Join(cookies, "; ")
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
	keep(w)
	q, err := s.quizzes.Quiz("distributed-locks")
	if err != nil {
		b.Fatal(err)
	}
	answer := func(question, choice string) {
		req := httptest.NewRequest(http.MethodPost, "/api/topics/distributed-locks/quiz/"+question, strings.NewReader(`{"choice":"`+choice+`"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		req.Header.Set("Cookie", header())
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("answer %s: %d %s", question, w.Code, w.Body)
		}
		keep(w) // the first answer makes the learner
	}
	first, second := q.Questions[0], q.Questions[1]
	for _, ch := range first.Choices {
		if first.IsRight(ch.ID) {
			answer(first.ID, ch.ID)
		}
	}
	for _, ch := range second.Choices {
		if !second.IsRight(ch.ID) {
			answer(second.ID, ch.ID)
			break
		}
	}
	id := jar[learnerCookie]
	tp, err := s.progress.Topic(context.Background(), id, "distributed-locks")
	if err != nil || !tp.Started || len(tp.Right) != 1 {
		b.Fatalf("the learner %q has %+v (%v); want the topic started, one question right", id, tp, err)
	}
	return header()
}

// BenchmarkExecRatio runs POST /api/playground/exec (a SET, with the
// in-process playground) and GET /healthz in turn and reports "ratio",
// /healthz's time over exec's: bench/http.sh measures the same over the
// network, with sandbox worker processes.
func BenchmarkExecRatio(b *testing.B) {
	cfg := testConfig(b)
	cfg.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	s, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	exec := func() {
		req := httptest.NewRequest(http.MethodPost, "/api/playground/exec", strings.NewReader(`{"line":"SET lock:bench tok PX 30000","client":"A"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		req.AddCookie(&http.Cookie{Name: learnerCookie, Value: "benchlearner0123456789"})
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatal(w.Code, w.Body.String())
		}
	}
	health := func() { s.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/healthz", nil)) }
	b.ReportAllocs()
	benchRatio(b, exec, health)
}
