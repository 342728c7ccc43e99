package web

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/locklab/locklab/content"
	"github.com/locklab/locklab/playground"
	"github.com/locklab/locklab/quiz"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/workshop"
)

// testConfig is a server configuration over the embedded content, with
// progress in a bolt file in a temp dir.
func testConfig(t testing.TB) Config {
	t.Helper()
	course, err := content.Load(content.Embedded())
	if err != nil {
		t.Fatalf("content.Load: %v", err)
	}
	bank, err := quiz.Load(content.Embedded())
	if err != nil {
		t.Fatalf("quiz.Load: %v", err)
	}
	st, err := store.OpenBolt(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	pg := playground.NewManager(playground.Options{})
	t.Cleanup(pg.Close)
	return Config{
		Content: content.Fixed{C: course}, Quizzes: bank, Progress: st, Playground: pg, Workshops: workshop.New(st, workshop.Options{}), CarryCodes: st,
		Secret: func(context.Context) ([]byte, error) { return []byte("test-secret-0123456789"), nil },
	}
}

// newTestServer serves the embedded content on a loopback port.
func newTestServer(t *testing.T) *httptest.Server {
	t.Helper()
	s, err := New(testConfig(t))
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

// newAdminServer returns a server with workshops on (an admin token), so
// that every route is registered.
func newAdminServer(t *testing.T) *Server {
	t.Helper()
	cfg := testConfig(t)
	cfg.AdminToken = adminToken
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("web.New: %v", err)
	}
	return s
}

// routeTable returns the methods of each registered route path.
func routeTable(s *Server) map[string]map[string]bool {
	byPath := map[string]map[string]bool{}
	for _, r := range s.echo.Routes() {
		if byPath[r.Path] == nil {
			byPath[r.Path] = map[string]bool{}
		}
		byPath[r.Path][r.Method] = true
	}
	return byPath
}
