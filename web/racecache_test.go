package web

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/locklab/locklab/limit"
	"github.com/locklab/locklab/race"
)

// TestRaceRunsCachedAndLimited checks that identical runs come from the
// cache (however the query spells them) and cost nothing, and that
// distinct runs are limited per address, IPv6 by /64.
func TestRaceRunsCachedAndLimited(t *testing.T) {
	cfg := testConfig(t)
	meter := newFakeMeter(3)
	cfg.Limits = limit.Limits{Races: meter}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Millisecond // every run, as far as the meter knows
	s.raceClock = func(time.Time) time.Duration { return took }
	get := func(ip, path string) *httptest.ResponseRecorder {
		t.Helper()
		r := httptest.NewRequest("GET", path, nil)
		r.RemoteAddr = ip
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		return w
	}
	const a, b6, b6same = "192.0.2.1:1", "[2001:db8::1]:1", "[2001:db8::2]:1"
	var d race.Params
	for _, in := range race.List() {
		if in.ID == "gc-pause" {
			d = in.Defaults
		}
	}
	// The defaults, spelled three ways, are one run.
	for _, p := range []string{"/api/race/gc-pause", "/api/race/gc-pause?seed=" + strconv.FormatUint(d.Seed, 10), "/api/race/gc-pause?seed=" + strconv.FormatUint(d.Seed, 10) + "&bogus=1"} {
		if w := get(a, p); w.Code != 200 {
			t.Fatalf("GET %s = %d", p, w.Code)
		}
	}
	if n := s.raceRuns.len(); n != 1 {
		t.Errorf("%d runs cached after three spellings of one; want 1", n)
	}
	// Two more distinct runs use up the address's 3; the fourth is 429.
	for i := range 2 {
		if w := get(a, "/api/race/gc-pause?seed="+strconv.Itoa(1000+i)); w.Code != 200 {
			t.Fatalf("distinct run %d = %d", i, w.Code)
		}
	}
	w := get(a, "/api/race/gc-pause?seed=2000")
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" {
		t.Errorf("distinct run over the limit = %d Retry-After %q; want 429 with Retry-After", w.Code, w.Header().Get("Retry-After"))
	}
	if w := get(a, "/race?scenario=gc-pause&seed=2001"); w.Code != http.StatusTooManyRequests {
		t.Errorf("race page with a distinct run over the limit = %d; want 429", w.Code)
	}
	// Cached runs are still served, on the API and the pages.
	for _, p := range []string{"/api/race/gc-pause?seed=1000", "/race?scenario=gc-pause&seed=1001", "/topics/distributed-locks"} {
		if w := get(a, p); w.Code != 200 {
			t.Errorf("cached GET %s over the limit = %d; want 200", p, w.Code)
		}
	}
	// Another address has its own count; one /64 is one address.
	for i := range 3 {
		if w := get(b6, "/api/race/fencing?seed="+strconv.Itoa(3000+i)); w.Code != 200 {
			t.Errorf("IPv6 run %d = %d", i, w.Code)
		}
	}
	if w := get(b6same, "/api/race/fencing?seed=4000"); w.Code != http.StatusTooManyRequests {
		t.Errorf("the same /64's fourth distinct run = %d; want 429", w.Code)
	}
	// A costly run costs more: one of 12 ms takes 3 units, all a fresh
	// address has.
	took = 12 * time.Millisecond
	if w := get("198.51.100.3:1", "/api/race/normal?seed=5000"); w.Code != 200 {
		t.Fatalf("costly run = %d", w.Code)
	}
	if w := get("198.51.100.3:1", "/api/race/normal?seed=5001"); w.Code != http.StatusTooManyRequests {
		t.Errorf("run after a costly one = %d; want 429", w.Code)
	}
	took = time.Millisecond
	// With RaceNeed, a run waits until that many units are left.
	s.limits.RaceNeed = 2
	for i, want := range []int{200, 200, http.StatusTooManyRequests} {
		if w := get("198.51.100.4:1", "/api/race/normal?seed="+strconv.Itoa(6000+i)); w.Code != want {
			t.Errorf("run %d with 3 units and RaceNeed 2 = %d; want %d", i, w.Code, want)
		}
	}
	s.limits.RaceNeed = 0
	// A run's error is deterministic too: cached, not run again.
	bad := "/api/race/renewal?ttl_ms=100&work_ms=600000"
	if w := get("203.0.113.9:1", bad); w.Code != 400 {
		t.Fatalf("GET %s = %d; want 400", bad, w.Code)
	}
	for range 5 {
		if w := get("203.0.113.9:1", bad); w.Code != 400 {
			t.Errorf("cached failing run = %d; want 400 (not 429)", w.Code)
		}
	}
}

// TestRaceRunsBounded checks the cache's two bounds and its LRU order.
func TestRaceRunsBounded(t *testing.T) {
	withEvents := func(key string, n int) *raceRun {
		return &raceRun{key: key, tl: race.Timeline{Events: make([]race.Event, n)}}
	}
	r := newRaceRuns(3, 100)
	for _, k := range []string{"a", "b", "c"} {
		r.put(withEvents(k, 10))
	}
	r.get("a") // now the most recent
	r.put(withEvents("d", 10))
	if _, ok := r.get("b"); ok {
		t.Error("the least recently used run was kept past the run bound")
	}
	for _, k := range []string{"a", "c", "d"} {
		if _, ok := r.get(k); !ok {
			t.Errorf("run %q was dropped", k)
		}
	}
	r.put(withEvents("big", 85)) // 30 + 85 > 100 events
	if r.len() != 2 || r.events > 100 {
		t.Errorf("after a big run: %d runs, %d events; want 2 runs within 100 events", r.len(), r.events)
	}
	r.put(withEvents("huge", 101))
	if _, ok := r.get("huge"); ok {
		t.Error("a run larger than the whole cache was kept")
	}
}

// BenchmarkRaceAPI measures GET /api/race/:id: a run the cache has not
// seen (a new seed each time), and one it has.
func BenchmarkRaceAPI(b *testing.B) {
	cfg := testConfig(b)
	s, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	do := func(b *testing.B, path string) {
		r := httptest.NewRequest("GET", path, nil)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code != 200 {
			b.Fatal(w.Code, w.Body.String())
		}
	}
	for _, id := range []string{"gc-pause", "redlock-crash"} {
		b.Run(id+"/uncached", func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				do(b, "/api/race/"+id+"?seed="+strconv.Itoa(i))
			}
		})
		b.Run(id+"/cached", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				do(b, "/api/race/"+id+"?seed=7")
			}
		})
	}
	// The costliest runs found: short TTLs with long work.
	b.Run("redlock-crash/worst", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			do(b, "/api/race/redlock-crash?ttl_ms=100&work_ms=600000&seed="+strconv.Itoa(i))
		}
	})
}
