package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestRedisDownLogsLittle: with Redis down, 120 requests that read and
// save progress, ask the rate limiter and run playground lines log each
// kind of failure once (at most twice, should the test take a minute),
// go-redis's own messages included, not a line or two per request.
func TestRedisDownLogsLittle(t *testing.T) {
	base, stderr, stop := startServer(t, map[string]string{"REDIS_URL": "redis://127.0.0.1:1"})
	b := newBrowser(t)
	for range 30 {
		b.get(base + "/")
		b.get(base + "/topics/distributed-locks")
		b.postJSON(base+"/api/topics/distributed-locks/quiz/gc-pause", map[string]string{"choice": "fencing"})
		b.postJSON(base+"/api/playground/exec", map[string]string{"line": "SET a 1", "client": "A"})
	}
	// Every failed request is counted, by the store that failed it.
	_, metrics := b.get(base + "/metrics")
	for _, st := range []string{"progress", "sandbox_copies"} {
		series := `locklab_store_errors_total{store="` + st + `"} `
		i := strings.Index(metrics, series)
		if i < 0 || strings.HasPrefix(metrics[i+len(series):], "0\n") {
			t.Errorf("/metrics: %s missing or 0 after requests that failed with Redis down", series)
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	msgRE := regexp.MustCompile(`level=(?:WARN|ERROR) msg=("[^"]*"|\S+)`)
	kinds := map[string]int{}
	lines := 0
	for _, line := range strings.Split(stderr.String(), "\n") {
		if m := msgRE.FindStringSubmatch(line); m != nil && !strings.Contains(line, "msg=request ") {
			kinds[strings.Trim(m[1], `"`)]++
			lines++
		}
	}
	for k, n := range kinds {
		if n > 2 {
			t.Errorf("%q: %d lines for 120 requests with Redis down; want one a minute", k, n)
		}
	}
	for _, k := range []string{"redis client", "rate limiter", "read progress", "request failed: store unavailable"} {
		if kinds[k] == 0 {
			t.Errorf("no %q line with Redis down; want one", k)
		}
	}
	t.Logf("120 requests with Redis down: %d warnings and errors, %v", lines, kinds)
}
