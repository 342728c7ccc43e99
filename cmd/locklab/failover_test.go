package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/redistest"
	"github.com/locklab/locklab/internal/testenv"
)

// TestReplicasOnSentinel runs two replicas on a Sentinel group (a
// master, a replica, three sentinels): the journey of
// TestTwoReplicasShareRedis, then the master killed in a workshop.
func TestReplicasOnSentinel(t *testing.T) {
	testenv.Slow(t, "Redis Sentinel")
	s := redistest.StartSentinel(t)
	env := replicaEnv()
	env["REDIS_URL"] = s.URL()
	a, _, _ := startServer(t, env)
	b, _, _ := startServer(t, env)
	shareRedisJourney(t, a, b)
	t.Run("failover", func(t *testing.T) {
		var old string
		failoverDrill(t, a, b, func(string) {
			old = s.CurrentMaster(t)
			s.Master.Stop()
		}, func() string {
			return s.WaitForFailover(t, old, 30*time.Second)
		})
	})
}

// TestReplicasOnCluster runs two replicas on a Redis Cluster of three
// masters with a replica each: the journey of TestTwoReplicasShareRedis,
// then the master of the workshop's keys killed in the workshop.
func TestReplicasOnCluster(t *testing.T) {
	testenv.Slow(t, "Redis Cluster")
	c := redistest.StartCluster(t, 3, 1)
	env := replicaEnv()
	env["REDIS_URL"] = c.URL()
	env["LOCKLAB_REDIS_MODE"] = "cluster"
	a, _, _ := startServer(t, env)
	b, _, _ := startServer(t, env)
	shareRedisJourney(t, a, b)
	t.Run("failover", func(t *testing.T) {
		var killed string
		failoverDrill(t, a, b, func(code string) {
			m := c.MasterFor(t, "locklab:ws:{"+code+"}")
			killed = m.Addr
			m.Stop()
		}, func() string {
			c.WaitHealthy(t, 30*time.Second)
			return "the replica of " + killed
		})
	})
}

// drillAnswers are the questions a drill's learners answer, right.
var drillAnswers = map[string]string{"gc-pause": "fencing", "release-script": "other-holder"}

// drillRequest is one request of a drill, as its learner saw it.
type drillRequest struct {
	at     time.Time
	op     string
	status int // 0: no answer
	body   string
}

// drillLearner is a workshop participant of a drill, and what the
// replicas acknowledged to them.
type drillLearner struct {
	br       *browser
	incrs    []int // replies to INCR n that were 200, in order
	answered map[string]bool
	predicts int

	mu   sync.Mutex // reqs is read by the test while the learner works
	reqs []drillRequest
}

// requests returns a copy of the learner's requests so far.
func (l *drillLearner) requests() []drillRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.reqs)
}

// send makes one request without failing the test: a drill's learners
// run beside the test's goroutine, and their errors are its data.
func (l *drillLearner) send(op, method, rawURL string, v any) drillRequest {
	var body io.Reader
	if v != nil {
		j, _ := json.Marshal(v)
		body = strings.NewReader(string(j))
	}
	r := drillRequest{at: time.Now(), op: op}
	req, _ := http.NewRequest(method, rawURL, body)
	if v != nil {
		req.Header.Set("Content-Type", "application/json")
		for _, c := range l.br.c.Jar.Cookies(req.URL) {
			if c.Name == "_csrf" {
				req.Header.Set("X-CSRF-Token", c.Value)
			}
		}
	}
	resp, err := l.br.c.Do(req)
	if err != nil {
		r.body = err.Error()
	} else {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		r.status, r.body = resp.StatusCode, string(b)
	}
	l.mu.Lock()
	l.reqs = append(l.reqs, r)
	l.mu.Unlock()
	return r
}

// step is the learner's k-th request: an INCR in the playground, a
// prediction in the poll, a quiz answer or the lesson, on base.
func (l *drillLearner) step(k int, base, poll string) {
	switch k % 4 {
	case 0:
		r := l.send("playground", http.MethodPost, base+"/api/playground/exec", map[string]string{"line": "INCR n", "client": "A"})
		var out struct {
			Output string `json:"output"`
		}
		if r.status == http.StatusOK && json.Unmarshal([]byte(r.body), &out) == nil {
			n, err := strconv.Atoi(strings.TrimPrefix(out.Output, "(integer) "))
			if err != nil {
				n = -1
			}
			l.incrs = append(l.incrs, n)
		}
	case 1:
		choice := []string{"safe", "two-holders"}[k/4%2]
		if r := l.send("poll", http.MethodPost, base+"/api/workshop/poll/"+poll+"/predict", map[string][]string{"prediction": {choice}}); r.status == http.StatusOK {
			l.predicts++
		}
	case 2:
		q := []string{"gc-pause", "release-script"}[k/4%2]
		if r := l.send("quiz", http.MethodPost, base+"/api/topics/distributed-locks/quiz/"+q, map[string]string{"choice": drillAnswers[q]}); r.status == http.StatusOK {
			l.answered[q] = true
		}
	case 3:
		l.send("lesson", http.MethodGet, base+"/topics/distributed-locks", nil)
	}
}

// failoverDrill runs a workshop on replicas a and b with a poll open and
// six participants busy in the playground, the poll, the quiz and the
// lesson, alternating between the replicas; kill kills a Redis master
// (given the workshop's code) and promoted waits for another to take its
// place. It checks that the replicas carried on without a restart, that
// every failure in between was a clear 503, and that nothing acknowledged
// was lost; it logs how long the window of failures lasted.
func failoverDrill(t *testing.T, a, b string, kill func(code string), promoted func() string) {
	admin := signedInAdmin(t, a, replicaAdminToken)
	code := startWorkshop(t, admin, a, "Failover")
	status, body := admin.postJSON(a+"/admin/workshops/"+code+"/polls", map[string]string{"scenario": "gc-pause"})
	var poll struct{ ID string }
	if err := json.Unmarshal([]byte(body), &poll); status != http.StatusCreated || err != nil {
		t.Fatalf("open a poll = %d %s", status, body)
	}
	learners := make([]*drillLearner, 6)
	for i := range learners {
		learners[i] = &drillLearner{br: joined(t, []string{a, b}[i%2], code, fmt.Sprintf("p%d", i)), answered: map[string]bool{}}
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, l := range learners {
		wg.Go(func() {
			for k := 0; ; k++ {
				select {
				case <-stop:
					return
				case <-time.After(40 * time.Millisecond):
				}
				l.step(k, []string{a, b}[(i+k)%2], poll.ID)
			}
		})
	}
	time.Sleep(time.Second)
	killedAt := time.Now()
	kill(code)
	newMaster := promoted()
	promotedAt := time.Now()
	// Go on until no request failed for 3 s, or 40 s after the kill.
	for time.Since(killedAt) < 40*time.Second {
		time.Sleep(250 * time.Millisecond)
		var last time.Time
		for _, l := range learners {
			for _, r := range l.requests() {
				if r.status != http.StatusOK && r.at.After(last) {
					last = r.at
				}
			}
		}
		if time.Since(killedAt) > 3*time.Second && time.Since(last) > 3*time.Second {
			break
		}
	}
	close(stop)
	wg.Wait()

	var first, last time.Time
	total, byStatus := 0, map[string]int{}
	for _, l := range learners {
		for _, r := range l.requests() {
			total++
			byStatus[fmt.Sprintf("%s %d", r.op, r.status)]++
			if r.status == http.StatusOK {
				continue
			}
			if first.IsZero() || r.at.Before(first) {
				first = r.at
			}
			if r.at.After(last) {
				last = r.at
			}
			// A failure must be a clear 503 with a message, never a
			// broken page, a 500 or no answer.
			if r.status != http.StatusServiceUnavailable || len(strings.TrimSpace(r.body)) == 0 {
				t.Errorf("%s at +%v: %d %.200q; want 200, or 503 with a message", r.op, r.at.Sub(killedAt).Round(time.Millisecond), r.status, r.body)
			}
		}
	}
	window := time.Duration(0)
	if !last.IsZero() {
		window = last.Sub(killedAt)
	}
	keys := make([]string, 0, len(byStatus))
	for k := range byStatus {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var summary []string
	for _, k := range keys {
		summary = append(summary, fmt.Sprintf("%s: %d", k, byStatus[k]))
	}
	t.Logf("master killed; %s promoted after %v; requests failed from %v to %v after the kill (window %v); %d requests: %s",
		newMaster, promotedAt.Sub(killedAt).Round(time.Millisecond), sinceOr(first, killedAt), sinceOr(last, killedAt), window.Round(time.Millisecond), total, strings.Join(summary, ", "))

	// Nothing acknowledged was lost.
	predicted := 0
	for i, l := range learners {
		// A learner's lines run one after the other: an INCR's reply is
		// one more than the last that ran, so an acknowledged one that
		// was lost shows as a reply given twice.
		for j := 1; j < len(l.incrs); j++ {
			if l.incrs[j] <= l.incrs[j-1] {
				t.Errorf("learner %d: INCR replies %v: %d after %d; an acknowledged INCR was lost", i, l.incrs, l.incrs[j], l.incrs[j-1])
				break
			}
		}
		if len(l.incrs) == 0 {
			t.Errorf("learner %d: no INCR acknowledged", i)
			continue
		}
		for _, base := range []string{a, b} {
			// Lines refused with 503 may have run too: never fewer.
			r := l.send("check", http.MethodPost, base+"/api/playground/exec", map[string]string{"line": "GET n", "client": "A"})
			if n, acked := lastInteger(r.body), l.incrs[len(l.incrs)-1]; r.status != http.StatusOK || n < acked {
				t.Errorf("learner %d: GET n on %s = %d %s; want at least %d, the last acknowledged INCR", i, base, r.status, r.body, acked)
			}
			if p := progressOf(t, base, l.br.learner(a)); p.Right < len(l.answered) {
				t.Errorf("learner %d: progress on %s = %+v; want the %d answers acknowledged right", i, base, p, len(l.answered))
			}
		}
		if l.predicts > 0 {
			predicted++
		}
	}
	var res struct{ Answered, Joined int }
	status, body = admin.get(b + "/admin/workshops/" + code + "/polls/" + poll.ID)
	if err := json.Unmarshal([]byte(body), &res); status != http.StatusOK || err != nil {
		t.Fatalf("poll after the failover = %d %s", status, body)
	}
	if res.Joined != len(learners) || res.Answered != predicted {
		t.Errorf("poll after the failover = %+v; want %d joined and %d answered, as acknowledged", res, len(learners), predicted)
	}
}

// sinceOr is how long after from at is, or "-" for no time.
func sinceOr(at, from time.Time) string {
	if at.IsZero() {
		return "-"
	}
	return at.Sub(from).Round(time.Millisecond).String()
}

// lastInteger reads the quoted number in a playground reply to GET, or
// -1.
func lastInteger(body string) int {
	var out struct {
		Output string `json:"output"`
	}
	if json.Unmarshal([]byte(body), &out) != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.Trim(out.Output, `"`))
	if err != nil {
		return -1
	}
	return n
}
