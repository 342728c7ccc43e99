package loadgen

import (
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestNextBaseRoundRobin(t *testing.T) {
	var bases []*url.URL
	for _, s := range []string{"http://127.0.0.1:1", "http://127.0.0.1:2", "http://127.0.0.1:3"} {
		u, err := CheckTarget(s, false)
		if err != nil {
			t.Fatal(err)
		}
		bases = append(bases, u)
	}
	l := &learner{bases: bases}
	var got []string
	for range 7 {
		got = append(got, l.nextBase().Port())
	}
	if want := []string{"1", "2", "3", "1", "2", "3", "1"}; !slices.Equal(got, want) {
		t.Errorf("nextBase() ports = %q; want %q", got, want)
	}
}

// TestLearnerAlternatesReplicas sends a learner's requests to two
// replicas, one named 127.0.0.1 and one localhost: they must alternate,
// the CSRF cookie the first sets must go with the second's POST (as a
// browser behind a load balancer keeps one site's cookies), and the
// requests must be recorded per route and per replica.
func TestLearnerAlternatesReplicas(t *testing.T) {
	var mu sync.Mutex
	var hits []string
	handler := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			hits = append(hits, name+" "+r.Method)
			mu.Unlock()
			if r.Method == http.MethodPost {
				c, err := r.Cookie("_csrf")
				if err != nil || r.Header.Get("X-CSRF-Token") != c.Value {
					http.Error(w, "csrf", http.StatusForbidden)
					return
				}
			}
			http.SetCookie(w, &http.Cookie{Name: "_csrf", Value: "tok-" + name, Path: "/"})
			w.Write([]byte("ok"))
		})
	}
	a, b := httptest.NewServer(handler("a")), httptest.NewServer(handler("b"))
	defer a.Close()
	defer b.Close()
	targets, err := CheckTargets([]string{a.URL, strings.Replace(b.URL, "127.0.0.1", "localhost", 1)}, false)
	if err != nil {
		t.Fatal(err)
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	rec, byReplica := NewRecorder(3), NewRecorder(0)
	l := &learner{
		bases: targets, routes: LockLabRoutes(), rec: rec, byReplica: byReplica,
		client: &http.Client{Jar: sharedJar{jar, targets[0]}, CheckRedirect: noRedirects},
		rng:    rand.New(rand.NewPCG(1, 1)),
	}
	for _, s := range []step{
		{method: "GET", path: "/healthz", check: expectBody("ok")},
		{method: "POST", path: "/api/playground/reset", body: struct{}{}},
		{method: "POST", path: "/api/playground/reset", body: struct{}{}},
		{method: "GET", path: "/healthz"},
	} {
		l.do(context.Background(), s)
	}
	if want := []string{"a GET", "b POST", "a POST", "b GET"}; !slices.Equal(hits, want) {
		t.Errorf("requests = %q; want %q", hits, want)
	}
	if s := rec.Summary(); s.All.Errors != 0 || len(s.Routes) != 2 {
		t.Errorf("routes = %+v, errors %q; want 2 routes without errors", s.Routes, s.ErrorSamples)
	}
	var replicas []string
	for _, rs := range byReplica.Summary().Routes {
		replicas = append(replicas, rs.Route)
		if rs.Count != 2 {
			t.Errorf("replica %s got %d requests; want 2", rs.Route, rs.Count)
		}
	}
	if want := []string{targets[0].Host, targets[1].Host}; !slices.Equal(replicas, want) {
		t.Errorf("replicas = %q; want %q", replicas, want)
	}
}

// TestFailedStepStartsAFreshCycle checks that a learner whose reset got a
// 503 starts its cycle again from the lesson page, rather than going on
// with steps that expected the reset, and that the failure counts once.
func TestFailedStepStartsAFreshCycle(t *testing.T) {
	var mu sync.Mutex
	var hits []string
	resets := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		hits = append(hits, r.Method+" "+r.URL.Path)
		http.SetCookie(w, &http.Cookie{Name: "_csrf", Value: "tok", Path: "/"})
		switch r.URL.Path {
		case "/api/playground/reset":
			if resets++; resets == 1 {
				http.Error(w, `{"error":"the store cannot be reached"}`, http.StatusServiceUnavailable)
				return
			}
			w.Write([]byte(`{"ok":true}`))
		case "/api/playground/exec":
			w.Write([]byte(`{"output":"OK"}`))
		default:
			w.Write([]byte(lockKey))
		}
	}))
	defer srv.Close()
	targets, err := CheckTargets([]string{srv.URL}, false)
	if err != nil {
		t.Fatal(err)
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := NewRecorder(3)
	l := &learner{
		bases: targets, routes: LockLabRoutes(), rec: rec,
		client: &http.Client{Jar: jar, CheckRedirect: noRedirects},
		rng:    rand.New(rand.NewPCG(1, 1)),
	}
	for range 5 {
		l.do(context.Background(), l.nextStep())
	}
	page := "GET /topics/" + Slug
	want := []string{page, "POST /api/playground/reset", page, "POST /api/playground/reset", "POST /api/playground/exec"}
	if !slices.Equal(hits, want) {
		t.Errorf("requests = %q; want %q", hits, want)
	}
	if s := rec.Summary(); s.All.Errors != 1 {
		t.Errorf("errors = %d (%q); want the one 503", s.All.Errors, s.ErrorSamples)
	}
}

// TestHostilePayloadsReachEveryReplica runs two hostile learners against
// two replicas. A hostile learner sends a payload on every other request,
// so if every learner started on the same replica, every payload would
// land on the other one, and one replica would carry all the hostile
// work of a run.
func TestHostilePayloadsReachEveryReplica(t *testing.T) {
	hostileBodies := map[string]bool{}
	for _, p := range hostilePayloads() {
		b := p.raw
		if b == nil {
			var err error
			if b, err = json.Marshal(p.body); err != nil {
				t.Fatal(err)
			}
		}
		hostileBodies[string(b)] = true
	}
	var mu sync.Mutex
	payloads := map[string]int{}
	handler := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if hostileBodies[string(body)] {
				mu.Lock()
				payloads[name]++
				mu.Unlock()
			}
			http.SetCookie(w, &http.Cookie{Name: "_csrf", Value: "tok", Path: "/"})
			w.Write([]byte("ok"))
		})
	}
	a, b := httptest.NewServer(handler("a")), httptest.NewServer(handler("b"))
	defer a.Close()
	defer b.Close()
	targets, err := CheckTargets([]string{a.URL, b.URL}, false)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Config{
		Targets: targets, Learners: 2, Hostile: 1, Duration: time.Second, Rate: 20,
		Seed: 1, Ramp: time.Millisecond, Timeout: 5 * time.Second,
		SampleEvery: 100 * time.Millisecond, PIDs: []int{os.Getpid()}, Proc: Proc{Root: "/proc"},
	})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if res.HostileLearners != 2 || payloads["a"] == 0 || payloads["b"] == 0 {
		t.Errorf("%d hostile learners sent payloads %v; want 2 learners with payloads on both replicas", res.HostileLearners, payloads)
	}
}
