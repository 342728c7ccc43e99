package attack

import (
	"bytes"
	crand "crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// quick is how long a request that is refused for its size may take on
// the server: the work must grow linearly with the input, so even the
// largest allowed body costs milliseconds. quickCPU is the CPU time the
// server (with its workers) may spend on one, which unlike time is not
// stretched by other programs on the machine.
const (
	quick    = 500 * time.Millisecond
	quickCPU = 100 * time.Millisecond
)

// attackTokenize sends lines made of thousands of empty quoted arguments,
// which a tokenizer that copies what it has read so far for every
// argument takes seconds over, as JSON, as a urlencoded form and as a
// multipart form; then ten at once, while another learner PINGs. The
// limited server is the one attacked: with limits on, a line is read
// once to see whether it runs a script, before any check of its length.
func attackTokenize(t *testing.T, tg *target) {
	s := tg.limited
	cpu := func() time.Duration { return tg.mon.cpu()[s.name] }
	// check judges the answers to n lines sent at once, from cpu0 on.
	check := func(t *testing.T, what string, cpu0 time.Duration, as ...answer) {
		t.Helper()
		for i, a := range as {
			what := what
			if len(as) > 1 {
				what = fmt.Sprintf("%s, line %d", what, i+1)
			}
			sd, ok := s.log.serverLatency(a.uri, 30*time.Second)
			t.Logf("%s: %s; the server took %v", what, a, sd.Round(time.Millisecond))
			switch {
			case a.err != nil:
				t.Errorf("%s: no answer within %v: %v", what, quick+slack, a.err)
			case a.status >= 500:
				t.Errorf("%s = %s; want no server error", what, a)
			}
			if !ok {
				t.Errorf("%s: the server logged no answer within 30s", what)
			} else if sd >= quick {
				t.Errorf("%s: the server took %v; want < %v", what, sd.Round(time.Millisecond), quick)
			}
		}
		used := cpu() - cpu0
		t.Logf("%s: the server used %v of CPU", what, used)
		if limit := quickCPU * time.Duration(len(as)); used >= limit {
			t.Errorf("%s: the server used %v of CPU; want < %v", what, used, limit)
		}
	}
	jsonLine := strings.Repeat("'' ", 21000) // 63 KB, under the 64 KiB line limit
	jsonBody, _ := json.Marshal(map[string]string{"line": jsonLine, "client": "A"})

	t.Run("json", func(t *testing.T) {
		b := newBrowser(s)
		b.csrf()
		cpu0 := cpu()
		check(t, "63 KB JSON line", cpu0, b.do("POST", mark("/api/playground/exec", "tok-json"), "application/json", jsonBody, quick, nil))
	})
	t.Run("form", func(t *testing.T) {
		b := newBrowser(s)
		form := url.Values{"line": {strings.Repeat("'' ", 15500)}, "client": {"A"}, "_csrf": {b.csrf()}}
		body := form.Encode() // 108 KB
		cpu0 := cpu()
		check(t, fmt.Sprintf("%d KB urlencoded form", len(body)/1000), cpu0, b.do("POST", mark("/playground/exec", "tok-form"), "application/x-www-form-urlencoded", []byte(body), quick, nil))
	})
	t.Run("multipart", func(t *testing.T) {
		b := newBrowser(s)
		var body bytes.Buffer
		w := multipart.NewWriter(&body)
		_ = w.WriteField("line", strings.Repeat("'' ", 80000))
		_ = w.WriteField("client", "A")
		_ = w.WriteField("_csrf", b.csrf())
		_ = w.Close() // 240 KB, under the 256 KiB body limit
		cpu0 := cpu()
		check(t, fmt.Sprintf("%d KB multipart form", body.Len()/1000), cpu0, b.do("POST", mark("/playground/exec", "tok-multipart"), w.FormDataContentType(), body.Bytes(), quick, nil))
	})
	t.Run("transcript", func(t *testing.T) {
		// The form carries the transcript so far back and forth: the
		// most entries the server keeps, each as large as the 4x24 KB
		// the server still reads allows, with a quadratic line in each.
		type entry struct { // views.PGEntry
			Client string `json:"c"`
			Line   string `json:"l"`
			Output string `json:"o"`
		}
		var entries []entry
		for range 30 {
			entries = append(entries, entry{"A", strings.Repeat("'' ", 1000), strings.Repeat("x", 100)})
		}
		transcript, _ := json.Marshal(entries)
		b := newBrowser(s)
		form := url.Values{"line": {"PING"}, "client": {"A"}, "transcript": {string(transcript)}, "_csrf": {b.csrf()}}
		cpu0 := cpu()
		check(t, fmt.Sprintf("%d KB transcript", len(transcript)/1000), cpu0, b.do("POST", mark("/playground/exec", "tok-transcript"), "application/x-www-form-urlencoded", []byte(form.Encode()), quick, nil))
	})
	t.Run("ten-at-once", func(t *testing.T) {
		var bs []*browser
		for range 10 {
			b := newBrowser(s)
			b.csrf()
			bs = append(bs, b)
		}
		answers := make([]answer, len(bs))
		cpu0 := cpu()
		from := time.Now()
		var wg sync.WaitGroup
		for i, b := range bs {
			wg.Go(func() {
				answers[i] = b.do("POST", mark("/api/playground/exec", "tok-ten"), "application/json", jsonBody, quick, nil)
			})
		}
		wg.Wait()
		to := time.Now()
		t.Logf("ten 63 KB JSON lines at once: all answered in %v", to.Sub(from).Round(time.Millisecond))
		check(t, "ten 63 KB JSON lines at once", cpu0, answers...)
		st := tg.mon.checkPings(t, s, from, to.Add(pingEvery), "ten at once")
		t.Logf("meanwhile another learner's PING: %d, p99 %v, max %v (server-side)", st.n, st.p99, st.max)
	})
}

// attackMemory has 300 fresh learners fill their sandboxes to the 4 MiB
// limit with 60 KB values, 16 at a time, and measures the peak memory of
// the server with its workers while another learner PINGs.
func attackMemory(t *testing.T, tg *target) {
	s := tg.open
	const learners, parallel, valueBytes, maxSets = 300, 16, 60_000, 80
	// Values are random text, so that nothing gains from compressing
	// them; each SET takes a window of the pool at a random offset.
	raw := make([]byte, 768<<10)
	_, _ = crand.Read(raw)
	pool := base64.RawURLEncoding.EncodeToString(raw)

	var sets, refused, late, other atomic.Int64
	var mu sync.Mutex
	var samples []string
	note := func(what string) {
		mu.Lock()
		defer mu.Unlock()
		if len(samples) < 5 {
			samples = append(samples, what)
		}
	}
	from := time.Now()
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i := range learners {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			rng := mrand(uint64(i))
			b := newBrowser(s)
			for k := range maxSets {
				off := rng.IntN(len(pool) - valueBytes)
				body := fmt.Appendf(nil, `{"line":"SET big:%d %s","client":"A"}`, k, pool[off:off+valueBytes])
				a := b.do("POST", "/api/playground/exec", "application/json", body, ordinary, nil)
				var r execReply
				_ = json.Unmarshal(a.body, &r)
				switch {
				case a.err != nil:
					late.Add(1)
					note(a.String())
					return
				case a.status == 200 && r.Output == "OK":
					sets.Add(1)
				case a.status == 200 && strings.Contains(r.Output, "worker stopped"):
					other.Add(1) // a crash: others lose their command too
					note(a.String())
					return
				case a.status == 200 && strings.HasPrefix(r.Output, "(error)"),
					a.status == http.StatusTooManyRequests, a.status == http.StatusServiceUnavailable:
					refused.Add(1) // the sandbox is full, or the server sheds the load
					return
				default:
					other.Add(1)
					note(a.String())
					return
				}
			}
		})
	}
	wg.Wait()
	to := time.Now()
	u, _ := tg.mon.proc.TreeUsage(s.pid())
	peak := max(tg.mon.peakNow(s), u.RSS)
	st := tg.mon.pingStats(s, from, to)
	t.Logf("%d learners stored %d values of 60 KB (%d MB) in %v, %d learners refused (sandbox full or load shed); peak memory of the server and its %d workers %d MB (now %d MB); another learner's PING p99 %v, max %v, %d PINGs (server-side; client %v)",
		learners, sets.Load(), sets.Load()*valueBytes/1e6, to.Sub(from).Round(time.Millisecond), refused.Load(),
		u.Procs-1, peak/1e6, u.RSS/1e6, st.p99, st.max, st.n, st.clientP99)
	if peak >= maxRSS {
		t.Errorf("peak memory of the server and its workers = %d MB while 300 learners fill their sandboxes; want < %d MB", peak/1e6, maxRSS/1e6)
	}
	tg.mon.checkPings(t, s, from, to, "while 300 learners fill their sandboxes")
	if n := late.Load() + other.Load(); n > 0 {
		t.Errorf("%d SETs got no answer within %v, a crashed worker or an unexpected answer; first: %q", n, ordinary+slack, samples)
	}
	if sets.Load() < 60 {
		t.Errorf("only %d SETs of 60 KB succeeded; the attack did not fill even one sandbox", sets.Load())
	}
}

// mrand is a seeded random source for the attacks' choices.
func mrand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }

// attackFreshCookies sends playground commands without a learner cookie,
// each of which makes a new learner with a sandbox, from one address, and
// measures what each new learner costs; on the limited server the
// per-address limit turns some away. Nobody else may be slowed down.
func attackFreshCookies(t *testing.T, tg *target) {
	for _, tt := range []struct {
		srv  *server
		n    int
		want string
	}{
		{tg.limited, 1500, "default limits"},
		{tg.open, 1000, "limits off: every one is a learner"},
	} {
		t.Run(tt.srv.name, func(t *testing.T) {
			s := tt.srv
			before, _ := tg.mon.proc.TreeUsage(s.pid())
			var mu sync.Mutex
			statuses := map[int]int{}
			learners := map[string]bool{}
			var firstBad string
			from := time.Now()
			sem := make(chan struct{}, 8)
			var wg sync.WaitGroup
			for range tt.n {
				sem <- struct{}{}
				wg.Go(func() {
					defer func() { <-sem }()
					// The double-submit token is any value the client
					// sends both as the cookie and the header: no first
					// request is needed.
					c := &http.Client{Transport: transport}
					req, _ := http.NewRequest("POST", s.base+"/api/playground/exec", strings.NewReader(`{"line":"PING","client":"A"}`))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Cookie", "_csrf=attackattackattackattackattackat")
					req.Header.Set("X-CSRF-Token", "attackattackattackattackattackat")
					start := time.Now()
					resp, err := c.Do(req)
					took := time.Since(start)
					mu.Lock()
					defer mu.Unlock()
					if err != nil {
						statuses[0]++
						firstBad = err.Error()
						return
					}
					resp.Body.Close()
					statuses[resp.StatusCode]++
					if resp.StatusCode >= 500 || took > ordinary+slack {
						firstBad = fmt.Sprintf("%d after %v", resp.StatusCode, took)
					}
					for _, ck := range resp.Cookies() {
						if strings.Contains(ck.Name, "learner") {
							learners[ck.Value] = true
						}
					}
				})
			}
			wg.Wait()
			to := time.Now()
			after, _ := tg.mon.proc.TreeUsage(s.pid())
			growth := after.RSS - before.RSS
			perLearner := int64(0)
			if len(learners) > 0 {
				perLearner = growth / int64(len(learners))
			}
			st := tg.mon.checkPings(t, s, from, to, "fresh learners")
			t.Logf("%s: %d cookieless commands from one address in %v: statuses %v, %d new learners; memory %d -> %d MB (%d KB per new learner), CPU %v (%v per request); another learner's PING p99 %v",
				tt.want, tt.n, to.Sub(from).Round(time.Millisecond), statuses, len(learners), before.RSS/1e6, after.RSS/1e6, perLearner/1000,
				(after.CPU - before.CPU), (after.CPU-before.CPU)/time.Duration(tt.n), st.p99)
			if firstBad != "" {
				t.Errorf("a cookieless command failed or was late: %s", firstBad)
			}
		})
	}
}

// attackRaceAPI asks for race timelines with parameters that differ on
// every call, so nothing can be cached, including ones that run into the
// simulation's event cap, and measures what a call costs the server.
func attackRaceAPI(t *testing.T, tg *target) {
	s := tg.open
	b := newBrowser(s)
	a := b.get("/api/race/scenarios")
	var scenarios []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(a.body, &scenarios); err != nil || len(scenarios) == 0 {
		t.Fatalf("GET /api/race/scenarios = %s", a)
	}
	const calls = 400
	cpu0 := tg.mon.cpu()[s.name]
	from := time.Now()
	var mu sync.Mutex
	statuses := map[int]int{}
	var uris []string
	var firstBad string
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i := range calls {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			id := scenarios[i%len(scenarios)].ID
			q := fmt.Sprintf("ttl_ms=%d&seed=%d", 10000+i, i)
			if i%2 == 1 { // a tiny TTL renewed for ten minutes: up to the event cap
				q = fmt.Sprintf("ttl_ms=%d&work_ms=600000&pause_ms=%d&seed=%d", 100+i, i, i)
			}
			a := b.get(mark("/api/race/"+id+"?"+q, "race"))
			mu.Lock()
			defer mu.Unlock()
			statuses[a.status]++
			uris = append(uris, a.uri)
			if a.err != nil || a.status >= 500 {
				firstBad = a.String()
			}
		})
	}
	wg.Wait()
	to := time.Now()
	cpu := tg.mon.cpu()[s.name] - cpu0
	var lat []time.Duration
	for _, u := range uris {
		if d, ok := s.log.serverLatency(u, 2*time.Second); ok {
			lat = append(lat, d)
		}
	}
	st := tg.mon.checkPings(t, s, from, to, "race timelines")
	t.Logf("%d race timelines with distinct parameters in %v: statuses %v; server p50 %v, p99 %v, max %v; CPU %v (%v a call); another learner's PING p99 %v",
		calls, to.Sub(from).Round(time.Millisecond), statuses, percentile(lat, 0.5), percentile(lat, 0.99), percentile(lat, 1), cpu, cpu/calls, st.p99)
	if firstBad != "" {
		t.Errorf("a race timeline failed or was late: %s", firstBad)
	}
	// As for the PINGs: 100 ms more than the idle control server's p99 over
	// the same time, so that a machine busy with other work does not fail it.
	limit := 100*time.Millisecond + tg.mon.pingStats(tg.control, from, to).p99
	if p := percentile(lat, 0.99); p >= limit {
		t.Errorf("race timeline p99 = %v on the server; want < %v (100ms over the idle control server's PING p99)", p, limit)
	}
}

// attackLongRequests sends very long URLs and headers: each must be
// refused or answered quickly, never with a server error.
func attackLongRequests(t *testing.T, tg *target) {
	s := tg.open
	many := func(n int, f func(i int) string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	cookies := strings.Join(many(3000, func(i int) string { return fmt.Sprintf("c%d=v", i) }), "; ")
	for _, tt := range []struct {
		name   string
		target string
		extra  []string
	}{
		{"60 KB path", "/topics/" + strings.Repeat("a", 60000), nil},
		{"60 KB query", "/?q=" + strings.Repeat("a", 60000), nil},
		{"60 KB playground API path", "/api/playground/" + strings.Repeat("%41", 20000), nil},
		{"race parameter 5000 times", "/api/race/gc-pause?" + strings.Repeat("ttl_ms=1000&", 5000), nil},
		{"70 KB header", "/", []string{"X-Big: " + strings.Repeat("a", 70000)}},
		{"2000 headers", "/", many(2000, func(i int) string { return fmt.Sprintf("X-H%d: v", i) })},
		{"3000 cookies", "/playground", []string{"Cookie: " + cookies}},
		{"60 KB learner cookie", "/playground", []string{"Cookie: locklab_learner=" + strings.Repeat("a", 60000)}},
		{"60 KB X-Forwarded-For", "/", []string{"X-Forwarded-For: " + strings.Repeat("1.2.3.4, ", 6000)}},
	} {
		a := rawGet(s, tt.target, tt.extra...)
		t.Logf("%s: %d in %v", tt.name, a.status, a.took.Round(time.Millisecond))
		if a.err != nil {
			t.Errorf("%s: %v", tt.name, a.err)
		} else if a.status >= 500 || a.status < 200 {
			t.Errorf("%s = %d; want a 2xx or 4xx answer", tt.name, a.status)
		}
	}
	if a := newBrowser(s).get("/healthz"); a.status != 200 {
		t.Errorf("GET /healthz after the long requests = %s", a)
	}
}
