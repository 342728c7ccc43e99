package web

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/fakeclock"
)

// TestReadyz answers from the checks it is given: 200 while all pass, 503
// naming each one down, and again 200 once it is back. Between rounds
// (readyEvery) it answers from the last round without checking again.
func TestReadyz(t *testing.T) {
	var redisDown, dataDown atomic.Bool
	var rounds atomic.Int32
	check := func(down *atomic.Bool, count bool) func(context.Context) error {
		return func(context.Context) error {
			if count {
				rounds.Add(1)
			}
			if down.Load() {
				return errors.New("down")
			}
			return nil
		}
	}
	cfg := testConfig(t)
	cfg.Ready = []ReadyCheck{{"redis", check(&redisDown, true)}, {"data", check(&dataDown, false)}}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	clock := fakeclock.New(time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC))
	s.ready.now = clock.Now
	base := newServerFor(t, s)
	ask := func() (int, readyJSON) {
		t.Helper()
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var got readyJSON
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("GET /readyz = %d %q: %v", resp.StatusCode, b, err)
		}
		return resp.StatusCode, got
	}
	for _, tt := range []struct {
		name        string
		redis, data bool // down
		wantStatus  int
		wantDown    []string
	}{
		{"all up", false, false, 200, []string{}},
		{"redis down", true, false, 503, []string{"redis"}},
		{"both down", true, true, 503, []string{"redis", "data"}},
		{"data down", false, true, 503, []string{"data"}},
		{"back", false, false, 200, []string{}},
	} {
		redisDown.Store(tt.redis)
		dataDown.Store(tt.data)
		clock.Add(readyEvery)
		status, got := ask()
		if status != tt.wantStatus || got.Ready != (tt.wantStatus == 200) || !slices.Equal(got.Down, tt.wantDown) {
			t.Errorf("%s: GET /readyz = %d %+v; want %d, down %q", tt.name, status, got, tt.wantStatus, tt.wantDown)
		}
	}
	// Within readyEvery, the last round's answer stands.
	before := rounds.Load()
	redisDown.Store(true)
	if status, _ := ask(); status != 200 || rounds.Load() != before {
		t.Errorf("GET /readyz within %v of the last round = %d after %d more rounds; want 200 from the last round", readyEvery, status, rounds.Load()-before)
	}
	clock.Add(readyEvery)
	if status, got := ask(); status != 503 || got.Down[0] != "redis" {
		t.Errorf("GET /readyz after %v = %d %+v; want 503, redis down", readyEvery, status, got)
	}
}

// TestReadyzWithoutChecks is always ready.
func TestReadyzWithoutChecks(t *testing.T) {
	ts := newTestServer(t)
	resp, err := http.Get(ts.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(b) != "{\"ready\":true,\"down\":[]}\n" {
		t.Errorf("GET /readyz = %d %q; want 200 ready", resp.StatusCode, b)
	}
}
