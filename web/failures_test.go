package web

import (
	"testing"
	"time"

	"github.com/locklab/locklab/internal/faillog"
	"github.com/locklab/locklab/internal/fakeclock"
	"github.com/locklab/locklab/internal/testenv"
	"github.com/locklab/locklab/limit"
	"github.com/locklab/locklab/store"
)

// TestRedisDownLogsEachKindOncePerMinute: with Redis down, 120 requests
// that each fail to read or save progress or to ask the rate limiter log
// one line per kind of failure, not one per request; a minute later the
// next failure of a kind is logged again, with the count of those that
// were not.
func TestRedisDownLogsEachKindOncePerMinute(t *testing.T) {
	st, err := store.OpenRedis("redis://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg := testConfig(t)
	cfg.Progress = st
	cfg.Limits = limit.New(st, limit.Rates{Writes: 1000, WritesPerAddress: 1000, Scripts: 1000, Races: 1000})
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var logs testenv.Logs
	clock := fakeclock.New(time.Time{})
	s.failures = faillog.New(logs.Logger(), clock.Now)
	l := newLearner(t, newServerFor(t, s))
	round := func() {
		t.Helper()
		l.do("GET", "/topics/distributed-locks", "", "")
		l.answer("gc-pause", "fencing")
		l.do("POST", "/api/playground/exec", "application/json", `{"line":"SET a 1","client":"A"}`)
	}
	for range 40 { // 120 requests
		round()
	}
	kinds := []string{"read progress", "rate limiter", "mark topic started", "request failed: store unavailable"}
	got := logs.Messages()
	for _, k := range kinds {
		if got[k] != 1 {
			t.Errorf("%q: %d lines after 120 requests with Redis down; want 1", k, got[k])
		}
	}
	total := 0
	for _, n := range got {
		total += n
	}
	t.Logf("120 requests with Redis down: %d lines, %v", total, got)

	clock.Add(faillog.Every)
	round()
	for _, k := range kinds {
		attrs := logs.Attrs(k)
		if len(attrs) != 2 {
			t.Errorf("%q: %d lines a minute later; want 2", k, len(attrs))
			continue
		}
		if n := attrs[1][faillog.NotLogged].Int64(); n < 1 {
			t.Errorf("%q: the second line says %s=%d; want the failures since the first", k, faillog.NotLogged, n)
		}
	}
}
