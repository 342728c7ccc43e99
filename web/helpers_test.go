package web

import (
	"net/http/httptest"
	"testing"

	"github.com/locklab/locklab/content"
)

// newTestServer serves the embedded content on a loopback port.
func newTestServer(t *testing.T) *httptest.Server {
	t.Helper()
	course, err := content.Load(content.Embedded())
	if err != nil {
		t.Fatalf("content.Load: %v", err)
	}
	s, err := New(Config{Content: content.Fixed{C: course}})
	if err != nil {
		t.Fatalf("web.New: %v", err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

// newServerFor serves s on a loopback port and returns its base URL.
func newServerFor(t *testing.T, s *Server) string {
	t.Helper()
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts.URL
}
