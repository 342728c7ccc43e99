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
