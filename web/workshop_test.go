package web

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/lab"
	"github.com/locklab/locklab/workshop"
)

const adminToken = "instructor-token-123"

// newWorkshopServer is a test server with workshop admin on.
func newWorkshopServer(t *testing.T) string {
	t.Helper()
	cfg := testConfig(t)
	cfg.AdminToken = adminToken
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.sseEvery, s.pollEvery = 50*time.Millisecond, 25*time.Millisecond
	return newServerFor(t, s)
}

func form(l *learnerClient, path string, v url.Values) (int, string) {
	l.t.Helper()
	return l.do("POST", path, "application/x-www-form-urlencoded", v.Encode())
}

func TestWorkshopAdminIsOffWithoutToken(t *testing.T) {
	ts := newTestServer(t)
	l := newLearner(t, ts.URL)
	if code, body := l.do("GET", "/admin", "", ""); code != 404 || !strings.Contains(body, "Page not found") {
		t.Errorf("GET /admin without a token = %d", code)
	}
	if code, _ := l.do("GET", "/admin/workshops/ABCDEF", "", ""); code != 404 {
		t.Errorf("dashboard without a token = %d; want 404", code)
	}
}

func TestWorkshopFlow(t *testing.T) {
	base := newWorkshopServer(t)
	teacher := newLearner(t, base)
	if code, body := form(teacher, "/admin/login", url.Values{"token": {"wrong-token-xyz"}}); code != 401 || !strings.Contains(body, "That token is not right.") {
		t.Fatalf("wrong token = %d", code)
	}
	// Not signed in: a dashboard redirects to the sign-in page, and its
	// event stream and export refuse.
	if _, body := teacher.do("GET", "/admin/workshops/ABCDEF", "", ""); !strings.Contains(body, "Instructor sign-in") {
		t.Error("a signed-out visit to a dashboard did not land on the sign-in page")
	}
	if code, _ := teacher.do("GET", "/admin/workshops/ABCDEF/export.csv", "", ""); code != 401 {
		t.Errorf("signed-out CSV export = %d; want 401", code)
	}
	if code, _ := form(teacher, "/admin/login", url.Values{"token": {adminToken}}); code != 200 {
		t.Fatalf("sign-in = %d", code)
	}
	code, page := form(teacher, "/admin/workshops", url.Values{"title": {"Tuesday group"}})
	if code != 200 || !strings.Contains(page, "Tuesday group") {
		t.Fatalf("start workshop = %d", code)
	}
	wcode := between(page, `<strong class="join-code">`, "</strong>")
	if len(wcode) != 6 {
		t.Fatalf("join code = %q", wcode)
	}

	// Two learners join; one answers, runs commands and plays a race.
	alice, bob := newLearner(t, base), newLearner(t, base)
	if code, _ := alice.do("GET", "/join/"+wcode, "", ""); code != 200 {
		t.Fatalf("join page = %d", code)
	}
	if code, body := form(alice, "/join", url.Values{"code": {strings.ToLower(wcode)}, "nickname": {"=Alice"}}); code != 200 || !strings.Contains(body, "as <strong>=Alice</strong>") || !strings.Contains(body, `action="/workshop/leave"`) {
		t.Fatalf("alice join = %d, without whom she joined as and a way to leave: %s", code, body)
	}
	form(bob, "/join", url.Values{"code": {wcode}})
	alice.answer("gc-pause", "longer-ttl")
	alice.answer("gc-pause", "fencing")
	alice.answer("release-script", "other-holder")
	alice.answer("nightly-report", "efficiency")
	bob.answer("gc-pause", "fencing")
	alice.exec("A", "SET lock:invoice:7 3f9a1c NX PX 30000")
	alice.exec("B", "SET lock:invoice:7 other NX PX 30000")
	if code, body := alice.do("POST", "/api/race/done", "application/json", `{"scenario":"gc-pause","params":{"fencing":"true"},"prediction":["two-holders","stale-write-rejected"]}`); code != 200 || !strings.Contains(body, `"prediction_right":true`) {
		t.Fatalf("race done = %d %s", code, body)
	}

	// Alice solves a lab challenge twice: it counts once.
	ch, err := lab.ChallengeByID("plain-del")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if code, rep, raw := alice.labCheck(labBody(t, ch.Fix, ch.ID)); code != 200 || rep.Passed == nil || !*rep.Passed {
			t.Fatalf("lab check of the fix = %d %s", code, raw)
		}
	}

	d := firstSSE(t, teacher, "/admin/workshops/"+wcode+"/events")
	if d.Joined != 2 || d.Active != 2 || d.Completions != 1 || d.Commands != 2 || d.Races != 1 || d.Predictions != 1 || d.PredictionsRight != 1 || d.LabSolves != 1 {
		t.Errorf("dashboard = %+v", d)
	}
	i := slices.IndexFunc(d.Questions, func(q workshop.DashboardQuestion) bool { return q.ID == "gc-pause" })
	if i < 0 {
		t.Fatalf("dashboard questions %+v lack gc-pause", d.Questions)
	}
	if q := d.Questions[i]; q.FirstTries != 2 || q.FirstRight != 1 || q.Answers != 3 {
		t.Errorf("gc-pause stats = %+v; want 2 first tries, 1 right first, 3 answers", q)
	}
	_, csvBody := teacher.do("GET", "/admin/workshops/"+wcode+"/export.csv", "", "")
	if !strings.Contains(csvBody, "nickname,joined_at") || !strings.Contains(csvBody, "'=Alice") {
		t.Errorf("CSV lacks the header or the (escaped) nickname:\n%s", csvBody)
	}
	// Scripts may use the token directly.
	req, _ := http.NewRequest("GET", base+"/admin/workshops/"+wcode+"/export.csv?part=questions", nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CSV with a bearer token failed: %v", err)
	}
	answers, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	// One row per question with its first-try figures, then one per
	// choice with its text, count and share.
	for _, row := range []string{
		"question_id,question,choice_id,choice,right,answers,share,first_tries,first_right\n",
		",,,3,,2,1\n",
		"gc-pause,\"Client 1 takes a lock",
		",longer-ttl,\"A longer TTL, picked to cover the pause.\",false,1,0.33,,\n",
		",fencing,\"Fencing tokens, checked by the storage",
	} {
		if !strings.Contains(string(answers), row) {
			t.Errorf("answers CSV lacks %q:\n%s", row, answers)
		}
	}
	if code, _ := form(teacher, "/admin/workshops/"+wcode+"/end", nil); code != 200 {
		t.Fatalf("end = %d", code)
	}
	carol := newLearner(t, base)
	if code, body := form(carol, "/join", url.Values{"code": {wcode}}); code != 400 || !strings.Contains(body, "ended") {
		t.Errorf("joining an ended workshop = %d", code)
	}
	// Results are kept after the end.
	_, page = teacher.do("GET", "/admin/workshops/"+wcode, "", "")
	if !strings.Contains(page, "This workshop has ended") || !strings.Contains(page, `data-tile="joined">2<`) {
		t.Error("an ended workshop's dashboard lost its results")
	}
}

// firstSSE reads the first stats event of a dashboard stream.
func firstSSE(t *testing.T, l *learnerClient, path string) workshop.Dashboard {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", l.base+path, nil)
	resp, err := l.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("events Content-Type = %q (%d %s)", ct, resp.StatusCode, b)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var d workshop.Dashboard
			if err := json.Unmarshal([]byte(data), &d); err != nil {
				t.Fatal(err)
			}
			return d
		}
	}
	t.Fatal("no stats event")
	return workshop.Dashboard{}
}

func between(s, from, to string) string {
	i := strings.Index(s, from)
	if i < 0 {
		return ""
	}
	s = s[i+len(from):]
	j := strings.Index(s, to)
	if j < 0 {
		return ""
	}
	return s[:j]
}
