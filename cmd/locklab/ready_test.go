package main

import (
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/locklab/locklab/internal/redistest"
)

// readyz asks base for /readyz and returns its status and what it says
// is down.
func readyz(t *testing.T, base string) (int, []string) {
	t.Helper()
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatalf("GET /readyz: %v", err)
	}
	defer resp.Body.Close()
	var got struct {
		Ready bool     `json:"ready"`
		Down  []string `json:"down"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatalf("GET /readyz = %d: %v", resp.StatusCode, err)
	}
	if got.Ready != (resp.StatusCode == http.StatusOK) {
		t.Errorf("GET /readyz = %d with ready %v", resp.StatusCode, got.Ready)
	}
	return resp.StatusCode, got.Down
}

// awaitReadyz polls /readyz until it answers status, as it answers from
// checks up to a second old.
func awaitReadyz(t *testing.T, base string, status int, down ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, gotDown := readyz(t, base)
		if got == status && slices.Equal(gotDown, append([]string{}, down...)) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s/readyz = %d, down %q; want %d, down %q", base, got, gotDown, status, down)
		}
		time.Sleep(50 * time.Millisecond) // the poll's interval
	}
}

// TestReadyzFollowsTheStore: /readyz answers 503 naming the store while
// Redis cannot be reached or the data directory cannot be used, and 200
// otherwise, while /healthz (liveness) stays 200 throughout.
func TestReadyzFollowsTheStore(t *testing.T) {
	t.Run("redis down", func(t *testing.T) {
		base, _, _ := startServer(t, map[string]string{"REDIS_URL": "redis://127.0.0.1:1"})
		awaitReadyz(t, base, http.StatusServiceUnavailable, "redis")
	})
	t.Run("redis up, then down, then back", func(t *testing.T) {
		m := miniredis.RunT(t)
		base, _, _ := startServer(t, map[string]string{"REDIS_URL": "redis://" + m.Addr()})
		awaitReadyz(t, base, http.StatusOK)
		m.Close()
		awaitReadyz(t, base, http.StatusServiceUnavailable, "redis")
		if code, _ := fetch(t, base+"/healthz"); code != http.StatusOK {
			t.Errorf("GET /healthz with Redis down = %d; want 200: the server is alive", code)
		}
		if err := m.Restart(); err != nil {
			t.Fatal(err)
		}
		awaitReadyz(t, base, http.StatusOK)
	})
	t.Run("redis-server up", func(t *testing.T) {
		base, _, _ := startServer(t, map[string]string{"REDIS_URL": "redis://" + redistest.Start(t)})
		awaitReadyz(t, base, http.StatusOK)
	})
	t.Run("data directory removed", func(t *testing.T) {
		dataDir := t.TempDir()
		base, _, _ := startServer(t, map[string]string{"LOCKLAB_DATA": dataDir})
		awaitReadyz(t, base, http.StatusOK)
		if err := os.RemoveAll(dataDir); err != nil {
			t.Fatal(err)
		}
		awaitReadyz(t, base, http.StatusServiceUnavailable, "data")
		if code, _ := fetch(t, base+"/healthz"); code != http.StatusOK {
			t.Errorf("GET /healthz with the data directory gone = %d; want 200", code)
		}
	})
}
