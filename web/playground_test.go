package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/locklab/locklab/limit"
	"github.com/locklab/locklab/playground"
	"github.com/locklab/locklab/web/views"
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
		// Strict JSON: one value, each member once, names as documented,
		// strings in UTF-8. None of these runs its SET.
		{"/api/playground/exec", `{"line": "SET k 1", "client": "A"} {}`, 400, "after top-level value"},
		{"/api/playground/exec", `{"line": "SET k 1", "line": "SET k 2", "client": "A"}`, 400, `duplicate object member name "line"`},
		{"/api/playground/exec", "{\"line\": \"SET k \xff\", \"client\": \"A\"}", 400, "invalid UTF-8"},
		{"/api/playground/exec", `{"Line": "SET k 1", "client": "A"}`, 400, `unknown object member name "Line"`},
		{"/api/playground/advance", `{"ms": 0}`, 400, "ms must be"},
		{"/api/playground/advance", `{"ms": -5}`, 400, "ms must be"},
		{"/api/playground/advance", `{"ms": 999999999999}`, 400, "ms must be"},
	} {
		code, body := l.do("POST", tt.path, "application/json", tt.body)
		var e apiError
		if code != tt.status || json.Unmarshal([]byte(body), &e) != nil || !strings.Contains(e.Error, tt.want) {
			t.Errorf("POST %s %s = %d %s; want %d mentioning %q", tt.path, tt.body, code, body, tt.status, tt.want)
		}
		if strings.Contains(e.Error, "jsontext:") || strings.Contains(e.Error, "json:") {
			t.Errorf("POST %s %s says %q; want no package name in it", tt.path, tt.body, e.Error)
		}
	}
	if ks := l.keys(); len(ks) != 0 {
		t.Errorf("after refused requests the sandbox holds %+v; want nothing", ks)
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

// TestPlaygroundWithoutJavaScript drives the plain forms: each post
// answers 303 back to its page at the terminal (post/redirect/get), and
// the page it leads to shows the transcript so far with the new reply.
func TestPlaygroundWithoutJavaScript(t *testing.T) {
	ts := newTestServer(t)
	l := newLearner(t, ts.URL)
	// post sends a form without following its redirect, checks it, and
	// then loads the page it leads to, as a browser does.
	post := func(action string, v url.Values, wantLocation string) string {
		t.Helper()
		req, _ := http.NewRequest("POST", ts.URL+"/playground/"+action, strings.NewReader(v.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-CSRF-Token", l.csrfToken())
		noFollow := *l.http
		noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != wantLocation {
			t.Fatalf("POST /playground/%s = %d to %q; want 303 to %q", action, resp.StatusCode, loc, wantLocation)
		}
		code, page := l.do("GET", wantLocation[:strings.Index(wantLocation, "#")], "", "")
		if code != 200 {
			t.Fatalf("GET %s = %d", wantLocation, code)
		}
		return page
	}
	const onPage = "/playground#pg-page-terminal"
	page := post("exec", url.Values{"line": {"SET lock:invoice:7 3f9a1c NX PX 30000"}, "client": {"A"}, "from": {"page"}}, onPage)
	transcript := hiddenValue(t, page, "transcript")
	page = post("exec", url.Values{"line": {"SET lock:invoice:7 other NX PX 30000"}, "client": {"B"}, "from": {"page"}, "transcript": {transcript}}, onPage)
	for _, want := range []string{"3f9a1c NX PX 30000", "OK", "other NX PX 30000", "(nil)", "<td>lock:invoice:7</td>", `id="pg-page-terminal"`} {
		if !strings.Contains(page, want) {
			t.Errorf("playground page after two posts lacks %q", want)
		}
	}
	// The form sent as B last: the page comes back with B chosen.
	if !strings.Contains(page, `value="B" checked`) || !strings.Contains(page, `placeholder="SET lock:invoice:7 other NX PX 30000"`) {
		t.Error("after a post as B the page does not come back as B (radio, placeholder)")
	}
	page = post("advance", url.Values{"ms": {"30000"}, "from": {"page"}, "transcript": {hiddenValue(t, page, "transcript")}}, onPage)
	if strings.Contains(page, "<td>lock:invoice:7</td>") || !strings.Contains(page, "moved forward 30 s") || !strings.Contains(page, "lock:invoice:7 expired") {
		t.Error("after +30 s the key is still listed, or the notices (clock moved, lock:invoice:7 expired) are missing")
	}
	// Reloading the page after a post does not run the command again.
	page = post("exec", url.Values{"line": {"INCR visits"}, "client": {"A"}, "from": {"lesson"}, "topic": {"distributed-locks"}}, "/topics/distributed-locks#pg-lesson-terminal")
	if !strings.Contains(page, "<h1>Distributed locks and their caveats</h1>") || !strings.Contains(page, "(integer) 1") {
		t.Error("a post from the lesson does not lead back to the lesson with the reply")
	}
	for range 2 {
		if code, again := l.do("GET", "/topics/distributed-locks", "", ""); code != 200 || !strings.Contains(again, "(integer) 1") {
			t.Errorf("reload = %d; the transcript is gone", code)
		}
	}
	if _, r, _ := l.exec("A", "GET visits"); r.Output != `"1"` {
		t.Errorf("after two reloads GET visits = %s; want \"1\" (a reload must not send INCR again)", r.Output)
	}
	// A reset through the API drops the kept transcript with the keys.
	if code, _ := l.do("POST", "/api/playground/reset", "application/json", `{}`); code != 200 {
		t.Fatalf("reset = %d", code)
	}
	if _, again := l.do("GET", "/topics/distributed-locks", "", ""); strings.Contains(again, "INCR visits") {
		t.Error("after a reset the lesson still shows the transcript of the emptied sandbox")
	}
	// A made-up topic is not a place to redirect to.
	req, _ := http.NewRequest("POST", ts.URL+"/playground/exec", strings.NewReader(url.Values{"line": {"PING"}, "from": {"lesson"}, "topic": {"//evil.example"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-CSRF-Token", l.csrfToken())
	noFollow := *l.http
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if resp, err := noFollow.Do(req); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("POST from an unknown topic = %v %v; want 404", resp.StatusCode, err)
	} else {
		resp.Body.Close()
	}
}

// TestFlashCookie checks that the transcript fits in one cookie whatever
// it holds, and that a cookie the browser changed is no transcript.
func TestFlashCookie(t *testing.T) {
	big := strings.Repeat("x", 50<<10)
	random := make([]byte, 8<<10)
	for i := range random {
		random[i] = byte('!' + (i*7919)%90)
	}
	many := make([]views.PGEntry, 40)
	for i := range many {
		many[i] = views.PGEntry{Client: "A", Line: "GET k" + strconv.Itoa(i), Output: `"` + string(random[i*100:i*100+200]) + `"`}
	}
	for _, tt := range []struct {
		name     string
		entries  []views.PGEntry
		wantLast string // a prefix of the newest entry's output after the round trip
	}{
		{"small", []views.PGEntry{{Client: "A", Line: "PING", Output: "PONG"}}, "PONG"},
		{"many entries: the oldest go", many, many[39].Output},
		{"one huge reply is cut", []views.PGEntry{{Client: "B", Line: "GET big", Output: big}}, "xxxx"},
		{"one incompressible reply is cut", []views.PGEntry{{Client: "B", Line: "GET r", Output: string(random)}}, string(random[:100])},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := encodeFlash(pgFlash{Client: "B", Entries: tt.entries})
			if len(v) > maxFlashBytes {
				t.Fatalf("encodeFlash = %d bytes; want at most %d", len(v), maxFlashBytes)
			}
			f, ok := decodeFlash(v)
			if !ok || f.Client != "B" || len(f.Entries) == 0 {
				t.Fatalf("decodeFlash(encodeFlash(...)) = %+v, %v", f, ok)
			}
			if last := f.Entries[len(f.Entries)-1].Output; !strings.HasPrefix(last, tt.wantLast) {
				t.Errorf("newest output after the round trip = %.40q; want it to start %.40q", last, tt.wantLast)
			}
		})
	}
	for _, bad := range []string{"", "not base64!", "aGVsbG8", packFlash(pgFlash{}) + "x", strings.Repeat("A", 3*maxFlashBytes)} {
		if f, ok := decodeFlash(bad); ok && len(f.Entries) > 0 {
			t.Errorf("decodeFlash(%.20q) = %+v; want no transcript", bad, f)
		}
	}
}

// TestAdvanceNamesExpiredKeys checks that the API says which keys a clock
// advance made expire, and only those.
func TestAdvanceNamesExpiredKeys(t *testing.T) {
	ts := newTestServer(t)
	l := newLearner(t, ts.URL)
	l.exec("A", "SET lock:invoice:7 3f9a1c NX PX 30000")
	l.exec("A", "SET lock:report r PX 90000")
	l.exec("A", "SET counter 1")
	for _, step := range []struct {
		ms   int64
		want []string
	}{
		{10000, []string{}},
		{30000, []string{"lock:invoice:7"}},
		{60000, []string{"lock:report"}},
	} {
		code, body := l.do("POST", "/api/playground/advance", "application/json", `{"ms": `+strconv.FormatInt(step.ms, 10)+`}`)
		var r advanceResponse
		if code != 200 || json.Unmarshal([]byte(body), &r) != nil || r.ClockMS == 0 || !slices.Equal(r.Expired, step.want) {
			t.Errorf("advance %d ms = %d %s; want expired %q", step.ms, code, body, step.want)
		}
	}
}

func TestAdvanceNotices(t *testing.T) {
	var twelve []string
	for i := range 12 {
		twelve = append(twelve, "k"+strconv.Itoa(i))
	}
	for _, tt := range []struct {
		ms      int64
		expired []string
		want    []string
	}{
		{30000, []string{"lock:invoice:7"}, []string{"The sandbox clock moved forward 30 s.", "lock:invoice:7 expired"}},
		{1000, nil, []string{"The sandbox clock moved forward 1 s.", "No key expired."}},
		{10000, twelve, append(append([]string{"The sandbox clock moved forward 10 s."}, func() []string {
			var l []string
			for _, k := range twelve[:10] {
				l = append(l, k+" expired")
			}
			return l
		}()...), "and 2 more keys expired")},
	} {
		if got := advanceNotices(tt.ms, tt.expired); !slices.Equal(got, tt.want) {
			t.Errorf("advanceNotices(%d, %q) = %q; want %q", tt.ms, tt.expired, got, tt.want)
		}
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
