package web

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/testenv"

	"github.com/locklab/locklab/internal/redistest"
	"github.com/locklab/locklab/limit"
	"github.com/locklab/locklab/race"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/workshop"
)

// newReplicas starts n servers sharing one redis-server for workshops, as
// replicas behind a load balancer would.
func newReplicas(t *testing.T, n int) []string {
	t.Helper()
	return newReplicasEvery(t, n, 10*time.Millisecond)
}

// newReplicasEvery is newReplicas with event streams that check the store
// every pollEvery.
func newReplicasEvery(t *testing.T, n int, pollEvery time.Duration) []string {
	t.Helper()
	addr := redistest.Start(t)
	var bases []string
	for range n {
		st, err := store.OpenRedis("redis://" + addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		cfg := testConfig(t)
		cfg.AdminToken = adminToken
		cfg.Workshops = workshop.New(st, workshop.Options{})
		// Every learner comes from the loopback, as a room behind one
		// NAT does, whose operator raises the per-address stream cap.
		cfg.Streams = limit.StreamCaps{PerAddress: 1000}
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		s.sseEvery, s.pollEvery = 2*pollEvery, pollEvery
		bases = append(bases, newServerFor(t, s))
	}
	return bases
}

// on is the same browser (the same cookies) talking to another replica:
// cookies do not depend on the port.
func (l *learnerClient) on(base string) *learnerClient {
	return &learnerClient{t: l.t, base: base, http: l.http}
}

// startWorkshop signs the teacher in and starts a workshop; it returns
// the join code.
func startWorkshop(t *testing.T, teacher *learnerClient) string {
	t.Helper()
	if code, _ := form(teacher, "/admin/login", url.Values{"token": {adminToken}}); code != 200 {
		t.Fatalf("sign-in = %d", code)
	}
	code, page := form(teacher, "/admin/workshops", url.Values{"title": {"Polls group"}})
	wcode := between(page, `<strong class="join-code">`, "</strong>")
	if code != 200 || len(wcode) != 6 {
		t.Fatalf("start workshop = %d, code %q", code, wcode)
	}
	return wcode
}

func getJSON(t *testing.T, l *learnerClient, path string, v any) int {
	t.Helper()
	code, body := l.do("GET", path, "", "")
	if code == http.StatusOK {
		if err := json.Unmarshal([]byte(body), v); err != nil {
			t.Fatalf("GET %s: %v in %s", path, err, body)
		}
	}
	return code
}

// TestPollAcrossReplicas opens a poll on one replica; twenty learners
// joined on both predict, some twice on different replicas, at the same
// time; the counts are exact on both, every learner sees the reveal
// judged outcome by outcome, and the CSV holds the poll.
func TestPollAcrossReplicas(t *testing.T) {
	bases := newReplicas(t, 2)
	teacher := newLearner(t, bases[0])
	wcode := startWorkshop(t, teacher)
	ws := "/admin/workshops/" + wcode

	learners := make([]*learnerClient, 20)
	for i := range learners {
		learners[i] = newLearner(t, bases[i%2])
		if code, _ := form(learners[i], "/join", url.Values{"code": {wcode}, "nickname": {fmt.Sprintf("L%d", i)}}); code != 200 {
			t.Fatalf("learner %d join = %d", i, code)
		}
	}
	if code, _ := learners[1].do("GET", "/api/workshop/poll", "", ""); code != http.StatusNoContent {
		t.Errorf("GET /api/workshop/poll with none open = %d; want 204", code)
	}
	stranger := newLearner(t, bases[1])
	const open = `{"scenario":"gc-pause","params":{"fencing":false,"pause_ms":15000},"faults":["delay:client2:0:100"]}`
	if code, _ := stranger.do("POST", ws+"/polls", "application/json", open); code == http.StatusCreated {
		t.Fatal("a learner opened a poll")
	}

	code, body := teacher.do("POST", ws+"/polls", "application/json", open)
	var opened struct{ ID string }
	if err := json.Unmarshal([]byte(body), &opened); code != http.StatusCreated || err != nil || opened.ID == "" {
		t.Fatalf("open poll = %d %s; want 201 {\"id\"}", code, body)
	}
	want := race.Params{TTL: 10 * time.Second, Pause: 15 * time.Second, Work: 2 * time.Second, Release: race.ReleaseScript, Seed: 1,
		Faults: []race.Fault{{Kind: race.FaultDelay, Target: "client2", Length: 100 * time.Millisecond}}}
	tl, err := race.Run("gc-pause", want)
	if err != nil {
		t.Fatal(err)
	}
	happened := outcomeNames(tl.OutcomeSet())

	// Every learner, on either replica, sees the poll, with no outcomes.
	for i, l := range learners {
		var p learnerPollJSON
		if code := getJSON(t, l, "/api/workshop/poll", &p); code != 200 || p.ID != opened.ID || p.Revealed || p.Outcomes != nil || len(p.Choices) != len(race.Outcomes()) || len(p.Setup) == 0 {
			t.Fatalf("learner %d GET /api/workshop/poll = %d %+v; want the open poll, no outcomes", i, code, p)
		}
	}
	if code, _ := stranger.do("GET", "/api/workshop/poll", "", ""); code != http.StatusNotFound {
		t.Errorf("a learner who has not joined: GET poll = %d; want 404", code)
	}
	if code, _ := stranger.do("POST", "/api/workshop/poll/"+opened.ID+"/predict", "application/json", `{"prediction":["safe"]}`); code != http.StatusNotFound {
		t.Errorf("a learner who has not joined: predict = %d; want 404", code)
	}

	// A stream on replica 2, open before the reveal on replica 1.
	events := learnerStream(t, learners[1].on(bases[1]))
	if st := <-events; st.Poll == nil || st.Poll.ID != opened.ID || st.Poll.Revealed {
		t.Fatalf("first state event = %+v; want the open poll", st)
	}

	var wg sync.WaitGroup
	for i, l := range learners {
		wg.Go(func() {
			if code, body := l.do("POST", "/api/workshop/poll/"+opened.ID+"/predict", "application/json", `{"prediction":["safe"]}`); code != 200 {
				t.Errorf("learner %d predict = %d %s", i, code, body)
			}
			if i%3 == 0 {
				// A change of mind, on the other replica.
				other := l.on(bases[(i+1)%2])
				if code, body := other.do("POST", "/api/workshop/poll/"+opened.ID+"/predict", "application/json", `{"prediction":["two-holders","stale-write-accepted"]}`); code != 200 {
					t.Errorf("learner %d second predict = %d %s", i, code, body)
				}
			}
		})
	}
	wg.Wait()

	wantCounts := map[string]int{}
	for _, o := range race.Outcomes() {
		wantCounts[string(o)] = 0
	}
	wantCounts["safe"], wantCounts["two-holders"], wantCounts["stale-write-accepted"] = 13, 7, 7
	for _, base := range bases {
		var p pollJSON
		if code := getJSON(t, teacher.on(base), ws+"/polls/"+opened.ID, &p); code != 200 || p.Answered != 20 || p.Joined != 20 || !reflect.DeepEqual(p.Counts, wantCounts) || p.Revealed || p.Outcomes != nil {
			t.Errorf("%s GET poll = %d %+v; want 20 of 20 answered, %v, not revealed", base, code, p, wantCounts)
		}
	}
	// The dashboard's stream on the other replica carries the same
	// distribution.
	if p := firstPollEvent(t, teacher.on(bases[1]), ws+"/events"); p.ID != opened.ID || p.Answered != 20 || !reflect.DeepEqual(p.Counts, wantCounts) {
		t.Errorf("dashboard poll event = %+v; want %v", p, wantCounts)
	}
	learners[2].do("POST", ws+"/polls/"+opened.ID+"/reveal", "", "")
	if _, body := teacher.do("GET", ws+"/polls/"+opened.ID, "", ""); !strings.Contains(body, `"revealed":false`) {
		t.Fatalf("a learner revealed the poll: %s", body)
	}

	if code, body := teacher.do("POST", ws+"/polls/"+opened.ID+"/reveal", "", ""); code != 200 || !strings.Contains(body, `"revealed":true`) {
		t.Fatalf("reveal = %d %s", code, body)
	}
	var st learnerWorkshopJSON
	for st = range events {
		if st.Poll != nil && st.Poll.Revealed {
			break
		}
	}
	if st.Poll == nil || !reflect.DeepEqual(st.Poll.Outcomes, happened) {
		t.Fatalf("stream after the reveal = %+v; want the outcomes %v", st.Poll, happened)
	}
	rightPick := slices.Equal(happened, []string{"two-holders", "stale-write-accepted"})
	for i, l := range learners {
		var p learnerPollJSON
		code := getJSON(t, l.on(bases[(i+1)%2]), "/api/workshop/poll", &p)
		if code != 200 || !p.Revealed || !reflect.DeepEqual(p.Outcomes, happened) || len(p.Judged) != len(race.Outcomes()) {
			t.Fatalf("learner %d after the reveal = %d %+v; want the outcomes %v judged", i, code, p, happened)
		}
		if wantRight := i%3 == 0 && rightPick || i%3 != 0 && slices.Equal(happened, []string{"safe"}); p.Right != wantRight {
			t.Errorf("learner %d right = %v; want %v (predicted %v, happened %v)", i, p.Right, wantRight, p.Prediction, happened)
		}
	}
	if code, _ := learners[0].do("POST", "/api/workshop/poll/"+opened.ID+"/predict", "application/json", `{"prediction":["safe"]}`); code != http.StatusConflict {
		t.Errorf("predict after the reveal = %d; want 409", code)
	}

	// A late joiner, on the other replica, sees the poll as it stands.
	late := newLearner(t, bases[1])
	form(late, "/join", url.Values{"code": {wcode}})
	var lp learnerPollJSON
	if code := getJSON(t, late, "/api/workshop/poll", &lp); code != 200 || lp.ID != opened.ID || !lp.Revealed || len(lp.Prediction) != 0 || lp.Judged != nil {
		t.Errorf("a late joiner's poll = %d %+v; want the revealed poll, nothing predicted", code, lp)
	}

	_, csv := teacher.on(bases[1]).do("GET", ws+"/export.csv?part=polls", "", "")
	for _, row := range []string{
		fmt.Sprintf("two-holders,Two clients hold the lock at once,7,0.35,20,21,true,%v", slices.Contains(happened, "two-holders")),
		// The label has a comma, so the CSV quotes it.
		fmt.Sprintf("safe,%q,13,0.65,20,21,true,%v", race.OutcomeSafe.Label(), slices.Contains(happened, "safe")),
	} {
		if !strings.Contains(csv, row) {
			t.Errorf("polls CSV lacks %q:\n%s", row, csv)
		}
	}
}

// firstPollEvent reads the first poll event of a dashboard stream.
func firstPollEvent(t *testing.T, l *learnerClient, path string) pollJSON {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", l.base+path, nil)
	resp, err := l.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	poll := false
	for sc.Scan() {
		if sc.Text() == "event: poll" {
			poll = true
			continue
		}
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && poll {
			var p pollJSON
			if err := json.Unmarshal([]byte(data), &p); err != nil {
				t.Fatal(err)
			}
			return p
		}
	}
	t.Fatal("no poll event")
	return pollJSON{}
}

// learnerStream reads a learner's event stream and sends each state it
// gets; the stream ends with the test.
func learnerStream(t *testing.T, l *learnerClient) <-chan learnerWorkshopJSON {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", l.base+"/api/workshop/events", nil)
	resp, err := (&http.Client{Jar: l.http.Jar}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("learner events = %d %q", resp.StatusCode, ct)
	}
	out := make(chan learnerWorkshopJSON)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 16<<10), 1<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var st learnerWorkshopJSON
			if json.Unmarshal([]byte(data), &st) != nil {
				return
			}
			select {
			case out <- st:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// TestPollPagesWithoutJavaScript goes through a poll with forms only: the
// dashboard opens it from a pasted race address, the learner's page shows
// it with checkboxes, an empty form asks for an outcome, the reveal from
// the presenter view shows each outcome judged.
func TestPollPagesWithoutJavaScript(t *testing.T) {
	base := newWorkshopServer(t)
	teacher := newLearner(t, base)
	wcode := startWorkshop(t, teacher)
	ws := "/admin/workshops/" + wcode
	ann := newLearner(t, base)
	if code, page := form(ann, "/join", url.Values{"code": {wcode}, "nickname": {"Ann"}}); code != 200 || !strings.Contains(page, "No poll is open") {
		t.Fatalf("join = %d %s", code, page)
	}
	code, page := form(teacher, ws+"/polls", url.Values{"scenario": {"normal"}, "run": {base + "/race?scenario=gc-pause&pause_ms=15000&fencing=true&run=1"}})
	if code != 200 || !strings.Contains(page, "Poll 1: ") || !strings.Contains(page, "client 1 freezes for 15 s") || !strings.Contains(page, "Fencing tokens are on") {
		t.Fatalf("open from the dashboard = %d; want the dashboard with poll 1 on the pasted run:\n%s", code, page)
	}
	_, page = ann.do("GET", "/workshop", "", "")
	id := between(page, `action="/workshop/poll/`, `/predict"`)
	if id == "" || !strings.Contains(page, "Pick all that apply") || strings.Contains(page, "happened") {
		t.Fatalf("learner page = %s; want the poll with checkboxes, no outcomes", page)
	}
	if code, page := form(ann, "/workshop/poll/"+id+"/predict", url.Values{}); code != 200 || !strings.Contains(page, "Pick at least one outcome") {
		t.Errorf("empty prediction form = %d; want the page asking for an outcome", code)
	}
	code, page = form(ann, "/workshop/poll/"+id+"/predict", url.Values{"outcome": {"two-holders", "stale-write-rejected"}})
	if code != 200 || !strings.Contains(page, "Your prediction is in") || strings.Count(page, "checked") != 2 {
		t.Fatalf("prediction form = %d; want the page with the two outcomes ticked:\n%s", code, page)
	}
	_, present := teacher.do("GET", ws+"/present", "", "")
	if !strings.Contains(present, `class="join-code">`+wcode) || !strings.Contains(present, `data-poll-count="two-holders">1<`) || !strings.Contains(present, `>1</span> of <span data-poll-joined>1<`) {
		t.Errorf("presenter view lacks the join code or the distribution:\n%s", present)
	}
	if code, page := form(teacher, ws+"/polls/"+id+"/reveal", url.Values{"back": {"present"}}); code != 200 || !strings.Contains(page, "Happened:") || !strings.Contains(page, `class="race`) {
		t.Errorf("reveal from the presenter view = %d; want the presenter view with the outcomes and the run", code)
	}
	_, page = ann.do("GET", "/workshop", "", "")
	if !strings.Contains(page, "Revealed: ") || !strings.Contains(page, "You were right") {
		t.Errorf("learner page after the reveal lacks the judged prediction:\n%s", page)
	}
	if code, _ := form(ann, "/workshop/leave", nil); code != 200 {
		t.Errorf("leave = %d", code)
	}
	if code, _ := ann.do("GET", "/api/workshop/poll", "", ""); code != http.StatusNotFound {
		t.Errorf("after leaving, GET poll = %d; want 404", code)
	}
	_, list := teacher.do("GET", "/admin", "", "")
	if !strings.Contains(list, `<td class="ws-code-cell">`) {
		t.Error("the admin list's codes may wrap")
	}
}

// TestPollRoomOf300 is the poll phase of a big workshop: 300 learners
// joined on two replicas sharing a redis-server, each page listening to
// its event stream, see the poll within a second or two, all predict
// within a few seconds, a third of them twice, and see the reveal. It
// reports how long the poll and the reveal took to reach every page and
// the latency of the predictions, and checks that none failed, that both
// stay within a multiple of a control measured in the same run, and that
// the counts are exact.
func TestPollRoomOf300(t *testing.T) {
	testenv.Slow(t, "load")
	// The streams check the store every second, as in production.
	bases := newReplicasEvery(t, 2, time.Second)
	teacher := newLearner(t, bases[0])
	wcode := startWorkshop(t, teacher)
	const n = 300
	learners := make([]*learnerClient, n)
	var wg sync.WaitGroup
	// At most 20 requests in flight: 300 phones answering within a few
	// seconds, not one burst from the same process as the servers.
	inFlight := make(chan struct{}, 20)
	for i := range learners {
		learners[i] = newLearner(t, bases[i%2])
		wg.Go(func() {
			inFlight <- struct{}{}
			defer func() { <-inFlight }()
			if code, _ := form(learners[i], "/join", url.Values{"code": {wcode}}); code != 200 {
				t.Errorf("learner %d join = %d", i, code)
			}
			learners[i].csrfToken()
		})
	}
	wg.Wait()
	// Every learner's page listens, on its replica.
	streams := make([]<-chan learnerWorkshopJSON, n)
	for i, l := range learners {
		streams[i] = learnerStream(t, l)
	}
	for i, st := range streams {
		if s := <-st; s.Poll != nil {
			t.Fatalf("learner %d: first state has a poll: %+v", i, s.Poll)
		}
	}
	// waitAll is how long until every stream has sent a state that ok
	// accepts.
	waitAll := func(from time.Time, ok func(learnerWorkshopJSON) bool) time.Duration {
		var mu sync.Mutex
		var slowest time.Duration
		for i, st := range streams {
			wg.Go(func() {
				for s := range st {
					if ok(s) {
						mu.Lock()
						slowest = max(slowest, time.Since(from))
						mu.Unlock()
						return
					}
				}
				t.Errorf("learner %d: stream ended", i)
			})
		}
		wg.Wait()
		return slowest
	}

	openedAt := time.Now()
	code, body := teacher.do("POST", "/admin/workshops/"+wcode+"/polls", "application/json", `{"scenario":"gc-pause"}`)
	var opened struct{ ID string }
	if err := json.Unmarshal([]byte(body), &opened); code != http.StatusCreated || err != nil {
		t.Fatalf("open poll = %d %s", code, body)
	}
	seen := waitAll(openedAt, func(s learnerWorkshopJSON) bool { return s.Poll != nil && s.Poll.ID == opened.ID })
	// The control: the same room's learners reading the workshop's state,
	// 20 at a time, on the same replicas and in the same run, so that the
	// limits below scale with what this machine can do right now.
	control := p99Of(t, learners, inFlight, func(l *learnerClient) int {
		code, _ := l.do("GET", "/api/workshop", "", "")
		return code
	})
	t.Logf("the poll reached all %d learners' streams in %v; control: reading the workshop, p99 %v", n, seen, control)
	// Streams look at the store every second: two looks, and the room's
	// reads, are all it may take.
	if limit := 2*time.Second + 10*control; seen > limit {
		t.Errorf("the poll took %v to reach every learner; want at most %v (two store checks and ten times the control's p99)", seen, limit)
	}

	var mu sync.Mutex
	var took []time.Duration
	predict := func(l *learnerClient, body string) {
		inFlight <- struct{}{}
		defer func() { <-inFlight }()
		start := time.Now()
		code, _ := l.do("POST", "/api/workshop/poll/"+opened.ID+"/predict", "application/json", body)
		d := time.Since(start)
		if code != 200 {
			t.Errorf("predict = %d", code)
		}
		mu.Lock()
		took = append(took, d)
		mu.Unlock()
	}
	for i, l := range learners {
		wg.Go(func() {
			predict(l, `{"prediction":["safe"]}`)
			if i%3 == 0 {
				predict(l.on(bases[(i+1)%2]), `{"prediction":["two-holders"]}`)
			}
		})
	}
	wg.Wait()
	slices.Sort(took)
	p50, p99 := took[len(took)/2], took[len(took)*99/100]
	t.Logf("%d predictions by %d learners on 2 replicas, %d streams open: p50 %v, p99 %v, max %v", len(took), n, n, p50, p99, took[len(took)-1])
	if limit := 5 * control; p99 > limit {
		t.Errorf("predictions' p99 %v; want at most %v, five times the p99 of reading the workshop (%v)", p99, limit, control)
	}
	// Both servers and all 300 clients live in this process: an upper
	// bound of what the servers hold with 300 streams open.
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	t.Logf("heap in use with 2 servers, 300 clients and 300 streams: %d MB", ms.HeapInuse>>20)
	var p pollJSON
	getJSON(t, teacher.on(bases[1]), "/admin/workshops/"+wcode+"/polls/"+opened.ID, &p)
	if p.Answered != n || p.Joined != n || p.Counts["safe"] != 200 || p.Counts["two-holders"] != 100 {
		t.Errorf("poll = %d of %d answered, %v; want 300 of 300, safe 200, two-holders 100", p.Answered, p.Joined, p.Counts)
	}

	revealedAt := time.Now()
	if code, _ := teacher.do("POST", "/admin/workshops/"+wcode+"/polls/"+opened.ID+"/reveal", "", ""); code != 200 {
		t.Fatalf("reveal = %d", code)
	}
	seen = waitAll(revealedAt, func(s learnerWorkshopJSON) bool { return s.Poll != nil && s.Poll.Revealed && len(s.Poll.Judged) > 0 })
	t.Logf("the reveal reached all %d learners' streams in %v", n, seen)
	if limit := 2*time.Second + 10*control; seen > limit {
		t.Errorf("the reveal took %v to reach every learner; want at most %v", seen, limit)
	}
}

// p99Of runs f once for each learner, at most cap(inFlight) at a time,
// and returns the 99th percentile of how long the calls took. Every call
// must answer 200.
func p99Of(t *testing.T, learners []*learnerClient, inFlight chan struct{}, f func(*learnerClient) int) time.Duration {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	took := make([]time.Duration, 0, len(learners))
	for _, l := range learners {
		wg.Go(func() {
			inFlight <- struct{}{}
			defer func() { <-inFlight }()
			start := time.Now()
			if code := f(l); code != http.StatusOK {
				t.Errorf("control request = %d; want 200", code)
			}
			mu.Lock()
			took = append(took, time.Since(start))
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(took)
	return took[len(took)*99/100]
}
