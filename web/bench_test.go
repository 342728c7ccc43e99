package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkHandlers compares the server's own cost of GET /healthz and of
// POST /api/playground/exec (a SET, in process), without the network: the
// playground's throughput target is 0.6 of /healthz's (bench/http.sh).
func BenchmarkHandlers(b *testing.B) {
	cfg := testConfig(b)
	s, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("healthz", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			req := httptest.NewRequest(http.MethodGet, "/healthz", nil)
			w := httptest.NewRecorder()
			s.ServeHTTP(w, req)
			if w.Code != 200 {
				b.Fatal(w.Code)
			}
		}
	})
	b.Run("exec", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			req := httptest.NewRequest(http.MethodPost, "/api/playground/exec", strings.NewReader(`{"line":"SET lock:bench tok PX 30000","client":"A"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Sec-Fetch-Site", "same-origin")
			req.AddCookie(&http.Cookie{Name: learnerCookie, Value: "benchlearner0123456789"})
			w := httptest.NewRecorder()
			s.ServeHTTP(w, req)
			if w.Code != 200 {
				b.Fatal(w.Code, w.Body.String())
			}
		}
	})
}
