package web

import (
	"strings"
	"testing"

	"github.com/locklab/locklab/playground"
)

// TestPlaygroundCapPerAddress checks that the web layer gives the
// playground the client's address: learners at one address share its cap
// of sandboxes, and the least recently used one makes room.
func TestPlaygroundCapPerAddress(t *testing.T) {
	cfg := testConfig(t)
	pg := playground.NewManager(playground.Options{MaxPerAddress: 2})
	t.Cleanup(pg.Close)
	cfg.Playground = pg
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	base := newServerFor(t, s)
	ada, bob, cyd := newLearner(t, base), newLearner(t, base), newLearner(t, base)
	for _, l := range []*learnerClient{ada, bob, cyd} {
		if code, r, body := l.exec("A", "SET k v"); code != 200 || r.Output != "OK" {
			t.Fatalf("SET k v = %d %s", code, body)
		}
	}
	if pg.Len() != 2 {
		t.Errorf("live sandboxes = %d; want the cap of 2 for 127.0.0.1", pg.Len())
	}
	if code, r, body := ada.exec("A", "GET k"); code != 200 || r.Output != "(nil)" || r.Notice == "" {
		t.Errorf("ada's GET k = %d %s; want a fresh sandbox and a notice", code, body)
	}
	// ada's return dropped bob: cyd's "SET k v" is left, which counts
	// 64 + 11 + 9 + 9 bytes.
	if _, body := get(t, base, "/metrics"); !strings.Contains(body, "locklab_sandbox_data_bytes 93\n") {
		t.Errorf("/metrics lacks locklab_sandbox_data_bytes 93")
	}
}
