package main

import (
	"runtime"
	"strings"
	"testing"
)

// TestMetricsWiring: the server's /metrics says which build runs, and
// with a Redis store counts its round trips, failed ones by command.
func TestMetricsWiring(t *testing.T) {
	base, _, _ := startServer(t, map[string]string{"REDIS_URL": "redis://127.0.0.1:1"})
	b := newBrowser(t)
	b.get(base + "/") // the CSRF cookie
	b.postJSON(base+"/api/topics/distributed-locks/quiz/gc-pause", map[string]string{"choice": "fencing"})
	code, page := fetch(t, base+"/metrics")
	if code != 200 {
		t.Fatalf("GET /metrics = %d", code)
	}
	for _, want := range []string{
		`locklab_build_info{go_version="` + runtime.Version() + `",version="` + readBuildInfo().Version + `"} 1`,
		`locklab_redis_errors_total{op="pipeline"} `,
		"locklab_redis_latency_seconds_count ",
		"locklab_event_streams_open 0",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("GET /metrics with Redis down has no %q:\n%s", want, page)
		}
	}
	base, _, _ = startServer(t, nil)
	if _, page := fetch(t, base+"/metrics"); strings.Contains(page, "locklab_redis_") {
		t.Error("GET /metrics with the file store has Redis metrics")
	}
}
