package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/locklab/locklab/limit"
	"github.com/locklab/locklab/playground"
)

const releaseLine = `EVAL "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end" 1 lock:invoice:7 3f9a1c`

func (l *learnerClient) exec(client, line string) (int, playground.Result, string) {
	l.t.Helper()
	b, _ := json.Marshal(execRequest{Line: line, Client: client})
	code, body := l.do("POST", "/api/playground/exec", "application/json", string(b))
	var r playground.Result
	_ = json.Unmarshal([]byte(body), &r)
	return code, r, body
}

func (l *learnerClient) keys() []playground.KeyInfo {
	l.t.Helper()
	code, body := l.do("GET", "/api/playground/keys", "", "")
	var ks []playground.KeyInfo
	if code != 200 || json.Unmarshal([]byte(body), &ks) != nil {
		l.t.Fatalf("GET keys = %d %s", code, body)
	}
	return ks
}

func TestPlaygroundAPI(t *testing.T) {
	ts := newTestServer(t)
	l := newLearner(t, ts.URL)
	for _, step := range []struct{ client, line, want string }{
		{"A", "SET lock:invoice:7 3f9a1c NX PX 30000", "OK"},
		{"B", "SET lock:invoice:7 other NX PX 30000", "(nil)"},
		{"A", "GET lock:invoice:7", `"3f9a1c"`},
		{"A", releaseLine, "(integer) 1"},
		{"B", "SET lock:invoice:7 other NX PX 30000", "OK"},
		{"a", "SUBSCRIBE news", "(error) ERR the playground does not support"},
		{"A", `SET k "unbalanced`, "Invalid argument(s)"},
	} {
		code, r, body := l.exec(step.client, step.line)
		if code != 200 || !strings.HasPrefix(r.Output, step.want) || r.ClockMS <= 0 {
			t.Errorf("exec %s %q = %d %s; want 200 with output starting %q", step.client, step.line, code, body, step.want)
		}
	}
	ks := l.keys()
	if len(ks) != 1 || ks[0].Key != "lock:invoice:7" || ks[0].Type != "string" || ks[0].PTTLMS <= 0 || ks[0].PTTLMS > 30000 {
		t.Fatalf("keys = %+v; want lock:invoice:7 with a TTL up to 30 s", ks)
	}
	if code, body := l.do("POST", "/api/playground/advance", "application/json", `{"ms": 31000}`); code != 200 || !strings.Contains(body, "clock_ms") {
		t.Fatalf("advance = %d %s", code, body)
	}
	if ks := l.keys(); len(ks) != 0 {
		t.Errorf("after advancing 31 s keys = %+v; want none (the TTL ran out)", ks)
	}
	l.exec("A", "SET x 1")
	if code, _ := l.do("POST", "/api/playground/reset", "application/json", `{}`); code != 200 {
		t.Fatalf("reset = %d", code)
	}
	if ks := l.keys(); len(ks) != 0 {
		t.Errorf("after reset keys = %+v", ks)
	}
	// Using the playground starts the topic.
	if q := l.quiz(); q.Progress.Status != "in-progress" {
		t.Errorf("after playground commands the topic is %q; want in-progress", q.Progress.Status)
	}
}

func TestPlaygroundBadRequests(t *testing.T) {
	ts := newTestServer(t)
	l := newLearner(t, ts.URL)
	for _, tt := range []struct {
		path, body string
		status     int
		want       string
	}{
		{"/api/playground/exec", `{"line": "PING", "client": "C"}`, 400, "client must be"},
		{"/api/playground/exec", `{"line": "PING"}`, 400, "client must be"},
		{"/api/playground/exec", `{"line": `, 400, "malformed JSON"},
		{"/api/playground/exec", `{"line": "PING", "client": "A", "x": 1}`, 400, "malformed JSON"},
		{"/api/playground/advance", `{"ms": 0}`, 400, "ms must be"},
		{"/api/playground/advance", `{"ms": -5}`, 400, "ms must be"},
		{"/api/playground/advance", `{"ms": 999999999999}`, 400, "ms must be"},
	} {
		code, body := l.do("POST", tt.path, "application/json", tt.body)
		var e apiError
		if code != tt.status || json.Unmarshal([]byte(body), &e) != nil || !strings.Contains(e.Error, tt.want) {
			t.Errorf("POST %s %s = %d %s; want %d mentioning %q", tt.path, tt.body, code, body, tt.status, tt.want)
		}
	}
}

// TestPlaygroundIsolation checks that one learner never sees another's keys.
func TestPlaygroundIsolation(t *testing.T) {
	ts := newTestServer(t)
	alice, bob := newLearner(t, ts.URL), newLearner(t, ts.URL)
	alice.exec("A", "SET secret alice-only")
	if _, r, _ := bob.exec("A", "GET secret"); r.Output != "(nil)" {
		t.Errorf("bob GET secret = %q; want (nil)", r.Output)
	}
	if _, r, _ := bob.exec("B", "KEYS *"); r.Output != "(empty array)" {
		t.Errorf("bob KEYS * = %q; want (empty array)", r.Output)
	}
	if ks := bob.keys(); len(ks) != 0 {
		t.Errorf("bob's inspector shows %+v", ks)
	}
	if _, r, _ := alice.exec("B", "GET secret"); r.Output != `"alice-only"` {
		t.Errorf("alice's client B GET secret = %q; want her own value", r.Output)
	}
}

// TestPlaygroundWithoutJavaScript drives the plain forms: each post returns
// the page with the transcript so far.
func TestPlaygroundWithoutJavaScript(t *testing.T) {
	ts := newTestServer(t)
	l := newLearner(t, ts.URL)
	form := func(action string, v url.Values) string {
		t.Helper()
		code, page := l.do("POST", "/playground/"+action, "application/x-www-form-urlencoded", v.Encode())
		if code != 200 {
			t.Fatalf("POST /playground/%s = %d", action, code)
		}
		return page
	}
	page := form("exec", url.Values{"line": {"SET lock:invoice:7 3f9a1c NX PX 30000"}, "client": {"A"}, "from": {"page"}})
	transcript := hiddenValue(t, page, "transcript")
	page = form("exec", url.Values{"line": {"SET lock:invoice:7 other NX PX 30000"}, "client": {"B"}, "from": {"page"}, "transcript": {transcript}})
	for _, want := range []string{"3f9a1c NX PX 30000", "OK", "other NX PX 30000", "(nil)", "<td>lock:invoice:7</td>"} {
		if !strings.Contains(page, want) {
			t.Errorf("playground page after two posts lacks %q", want)
		}
	}
	page = form("advance", url.Values{"ms": {"30000"}, "from": {"page"}, "transcript": {hiddenValue(t, page, "transcript")}})
	if strings.Contains(page, "<td>lock:invoice:7</td>") || !strings.Contains(page, "moved forward 30 s") {
		t.Error("after +30 s the key is still listed, or the notice is missing")
	}
	page = form("exec", url.Values{"line": {"PING"}, "client": {"A"}, "from": {"lesson"}, "topic": {"distributed-locks"}})
	if !strings.Contains(page, "<h1>Distributed locks and their caveats</h1>") || !strings.Contains(page, "PONG") {
		t.Error("a post from the lesson does not return the lesson with the reply")
	}
}

func hiddenValue(t *testing.T, page, name string) string {
	t.Helper()
	i := strings.Index(page, `name="`+name+`" value="`)
	if i < 0 {
		t.Fatalf("no hidden %s field", name)
	}
	rest := page[i+len(`name="`+name+`" value="`):]
	v := rest[:strings.Index(rest, `"`)]
	r := strings.NewReplacer("&#34;", `"`, "&amp;", "&", "&lt;", "<", "&gt;", ">", "&#39;", "'")
	return r.Replace(v)
}

// TestRateLimit checks that one learner flooding the playground gets 429s
// while another learner is unaffected.
func TestRateLimit(t *testing.T) {
	cfg := testConfig(t)
	cfg.Limits = limit.Limits{Writes: limit.NewMemoryLimiter(5, 10)}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	base := newServerFor(t, s)
	flood, calm := newLearner(t, base), newLearner(t, base)
	limited := 0
	for range 40 {
		if code, _, _ := flood.exec("A", "PING"); code == http.StatusTooManyRequests {
			limited++
		}
	}
	if limited == 0 {
		t.Error("40 commands at once were never rate-limited")
	}
	if code, r, body := calm.exec("A", "PING"); code != 200 || r.Output != "PONG" {
		t.Errorf("another learner got %d %s while the first was limited", code, body)
	}
	_, metrics := get(t, base, "/metrics")
	if !strings.Contains(metrics, `locklab_rate_limited_requests_total{limit="writes"}`) {
		t.Error("/metrics does not count rate-limited requests")
	}
}
