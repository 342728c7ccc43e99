package web

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/fakeclock"
	"github.com/locklab/locklab/lab"
	"github.com/locklab/locklab/limit"
	"github.com/locklab/locklab/workshop"
)

const adminToken = "instructor-token-123"

// newWorkshopServer is a test server with workshop admin on.
func newWorkshopServer(t *testing.T) string {
	t.Helper()
	return newWorkshopServerWith(t, func(*Config) {})
}

// newWorkshopServerWith is newWorkshopServer with cfg changed by set.
func newWorkshopServerWith(t *testing.T, set func(cfg *Config)) string {
	t.Helper()
	cfg := testConfig(t)
	cfg.AdminToken = adminToken
	set(&cfg)
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

// instructor signs an instructor in on base and starts a workshop; it
// returns the instructor and the join code.
func instructor(t *testing.T, base string) (*learnerClient, string) {
	t.Helper()
	teacher := newLearner(t, base)
	return teacher, startWorkshop(t, teacher)
}

// xffTransport says each request comes from addr, as a trusted proxy
// would.
type xffTransport struct{ addr string }

func (x xffTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Forwarded-For", x.addr)
	return http.DefaultTransport.RoundTrip(r)
}

// learnerAt is a learner whose requests come from addr.
func learnerAt(t *testing.T, base, addr string) *learnerClient {
	l := newLearner(t, base)
	l.http.Transport = xffTransport{addr}
	return l
}

// getRetry is a GET that also returns the Retry-After header.
func getRetry(l *learnerClient, path string) (int, string, string) {
	l.t.Helper()
	resp, err := l.http.Get(l.base + path)
	if err != nil {
		l.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After"), string(b)
}

// limitedWorkshopServer has the default join limits, on a clock that
// stands still (so no allowance refills during a test), and trusts
// 127.0.0.1 to name the client, so that tests can come from several
// addresses.
func limitedWorkshopServer(t *testing.T) string {
	t.Helper()
	clk := fakeclock.New(time.Time{})
	return newWorkshopServerWith(t, func(cfg *Config) {
		cfg.JoinLimits = limit.NewJoinLimits(limit.Memory{Now: clk.Now}, limit.JoinRates{Joins: limit.DefaultJoinRate, WrongCodes: limit.DefaultWrongJoinCodes})
		cfg.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	})
}

// TestJoinCodeGuessing: an address that tries wrong codes gets 429 with
// Retry-After after a few, on the join link and the form alike, while a
// learner from another address joins with the right code.
func TestJoinCodeGuessing(t *testing.T) {
	base := limitedWorkshopServer(t)
	_, wcode := instructor(t, base)
	guesser := learnerAt(t, base, "192.0.2.66")
	statuses := map[int]int{}
	for i := range 30 {
		var code int
		var retry, body string
		if i%2 == 0 {
			code, retry, body = getRetry(guesser, fmt.Sprintf("/join/ZZ%04d", i))
		} else {
			code, body = form(guesser, "/join", url.Values{"code": {fmt.Sprintf("ZZ%04d", i)}})
		}
		statuses[code]++
		if code == 429 {
			if i%2 == 0 && retry == "" {
				t.Errorf("guess %d: 429 without Retry-After", i)
			}
			if !strings.Contains(body, "many wrong workshop codes") {
				t.Errorf("guess %d: 429 without saying why", i)
			}
		}
	}
	if statuses[429] != 30-limit.DefaultWrongJoinCodes {
		t.Errorf("30 wrong codes from one address: statuses %v; want 429 after %d", statuses, limit.DefaultWrongJoinCodes)
	}
	// The right code from the guesser's address is refused too (it cannot
	// be told from a guess), but another address is not held back.
	if code, _, _ := getRetry(guesser, "/join/"+wcode); code != 429 {
		t.Errorf("the guesser's next look = %d; want 429", code)
	}
	ada := learnerAt(t, base, "198.51.100.7")
	if code, body := form(ada, "/join", url.Values{"code": {wcode}, "nickname": {"Ada"}}); code != 200 || !strings.Contains(body, "as <strong>Ada</strong>") {
		t.Errorf("a learner from another address joins = %d", code)
	}
}

// TestJoinCodeGuessesAtOnce: wrong codes sent all at once from one
// address are checked and counted one at a time, so no more than the
// allowance are looked up, even while a look is held up; a learner from
// another address does not wait in line behind them.
func TestJoinCodeGuessesAtOnce(t *testing.T) {
	clk := fakeclock.New(time.Time{})
	gate := gatedWrongCodes{entered: make(chan struct{}, 1), open: make(chan struct{})}
	base := newWorkshopServerWith(t, func(cfg *Config) {
		cfg.JoinLimits = limit.NewJoinLimits(limit.Memory{Now: clk.Now}, limit.JoinRates{Joins: limit.DefaultJoinRate, WrongCodes: limit.DefaultWrongJoinCodes})
		cfg.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
		gate.WorkshopService = cfg.Workshops
		cfg.Workshops = gate
	})
	_, wcode := instructor(t, base)
	guesser := learnerAt(t, base, "192.0.2.66")
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			code, _, _ := getRetry(guesser, fmt.Sprintf("/join/ZZ%04d", i))
			mu.Lock()
			statuses[code]++
			mu.Unlock()
		})
	}
	// A guess is being looked up, and held there.
	<-gate.entered
	ada := learnerAt(t, base, "198.51.100.7")
	joined := make(chan struct{})
	go func() {
		defer close(joined)
		if code, body := form(ada, "/join", url.Values{"code": {wcode}, "nickname": {"Ada"}}); code != 200 || !strings.Contains(body, "as <strong>Ada</strong>") {
			t.Errorf("a learner from another address joins = %d", code)
		}
	}()
	select {
	case <-joined:
	case <-time.After(10 * time.Second):
		t.Error("a learner from another address could not join while a guess was held up")
	}
	close(gate.open)
	wg.Wait()
	<-joined
	if statuses[404] != limit.DefaultWrongJoinCodes || statuses[429] != 40-limit.DefaultWrongJoinCodes {
		t.Errorf("40 wrong codes at once from one address: statuses %v; want %d looked up (404) and the rest 429", statuses, limit.DefaultWrongJoinCodes)
	}
}

// gatedWrongCodes is a workshop service whose look-ups of codes that
// start with ZZ wait until open is closed, as a store under load may; the
// first to wait says so on entered.
type gatedWrongCodes struct {
	WorkshopService
	entered chan struct{}
	open    chan struct{}
}

func (s gatedWrongCodes) Get(ctx context.Context, code string) (workshop.Workshop, error) {
	if strings.HasPrefix(code, "ZZ") {
		select {
		case s.entered <- struct{}{}:
		default:
		}
		<-s.open
	}
	return s.WorkshopService.Get(ctx, code)
}

// TestJoinSquatting: one address that joins as fast as it can, with
// fresh cookies, gets 429 after its burst and cannot fill the workshop; a
// learner from another address still joins.
func TestJoinSquatting(t *testing.T) {
	base := limitedWorkshopServer(t)
	teacher, wcode := instructor(t, base)
	joined, refused := 0, 0
	for i := range 60 {
		squatter := learnerAt(t, base, "192.0.2.66")
		code, body := form(squatter, "/join", url.Values{"code": {wcode}, "nickname": {fmt.Sprintf("bot%d", i)}})
		switch code {
		case 200:
			joined++
		case 429:
			refused++
			if !strings.Contains(body, "Many learners joined from your address") {
				t.Errorf("join %d: 429 without saying why", i)
			}
		default:
			t.Errorf("join %d = %d", i, code)
		}
	}
	if joined != 2*limit.DefaultJoinRate || refused != 60-joined {
		t.Errorf("60 joins at once from one address: %d joined, %d refused; want 429 after a burst of %d", joined, refused, 2*limit.DefaultJoinRate)
	}
	ada := learnerAt(t, base, "198.51.100.7")
	if code, _ := form(ada, "/join", url.Values{"code": {wcode}, "nickname": {"Ada"}}); code != 200 {
		t.Errorf("a learner from another address joins = %d", code)
	}
	if d := firstSSE(t, teacher, "/admin/workshops/"+wcode+"/events"); d.Joined != joined+1 {
		t.Errorf("dashboard joined = %d; want %d", d.Joined, joined+1)
	}
}

// TestCloseJoining: the instructor closes the workshop from the
// dashboard; a newcomer is turned away with a clear message, someone who
// joined before comes back; reopened, newcomers join again.
func TestCloseJoining(t *testing.T) {
	base := newWorkshopServer(t)
	teacher, wcode := instructor(t, base)
	alice, bob := newLearner(t, base), newLearner(t, base)
	form(alice, "/join", url.Values{"code": {wcode}, "nickname": {"Alice"}})
	dash := "/admin/workshops/" + wcode
	if _, page := teacher.do("GET", dash, "", ""); !strings.Contains(page, "Joining is open.") || !strings.Contains(page, "Close joining") {
		t.Fatal("the dashboard lacks the open joining and its Close button")
	}
	code, page := form(teacher, dash+"/joining", url.Values{"open": {"0"}})
	if code != 200 || !strings.Contains(page, "Joining is closed.") || !strings.Contains(page, "Reopen joining") {
		t.Fatalf("closing joining = %d; want the dashboard saying it is closed, with Reopen", code)
	}
	if _, body := bob.do("GET", "/join/"+wcode, "", ""); !strings.Contains(body, "not taking new participants") {
		t.Error("the join link of a closed workshop does not say it is closed")
	}
	if code, body := form(bob, "/join", url.Values{"code": {wcode}, "nickname": {"Bob"}}); code != 400 || !strings.Contains(body, "not taking new participants") {
		t.Errorf("a newcomer joins a closed workshop = %d", code)
	}
	if code, body := form(alice, "/join", url.Values{"code": {wcode}}); code != 200 || !strings.Contains(body, "as <strong>Alice</strong>") {
		t.Errorf("alice rejoins a closed workshop = %d", code)
	}
	if code, _ := form(teacher, dash+"/joining", url.Values{"open": {"maybe"}}); code != 400 {
		t.Errorf("joining with open=maybe = %d; want 400", code)
	}
	form(teacher, dash+"/joining", url.Values{"open": {"1"}})
	if code, _ := form(bob, "/join", url.Values{"code": {wcode}, "nickname": {"Bob"}}); code != 200 {
		t.Errorf("a newcomer joins the reopened workshop = %d", code)
	}
}

// TestRemoveParticipant: the instructor removes a participant from the
// dashboard; they leave the list and the count, their commands no longer
// count, and they cannot join again; their nickname is free.
func TestRemoveParticipant(t *testing.T) {
	base := newWorkshopServer(t)
	teacher, wcode := instructor(t, base)
	alice, mallory, bob := newLearner(t, base), newLearner(t, base), newLearner(t, base)
	form(alice, "/join", url.Values{"code": {wcode}, "nickname": {"Alice"}})
	form(mallory, "/join", url.Values{"code": {wcode}, "nickname": {"Teacher"}})
	mallory.exec("A", "PING")
	dash := "/admin/workshops/" + wcode
	_, page := teacher.do("GET", dash, "", "")
	if !strings.Contains(page, "Participants (2)") {
		t.Fatal("the dashboard does not list 2 participants")
	}
	i := strings.Index(page, "Teacher</td>")
	j := strings.LastIndex(page[:max(i, 0)], `data-participant="`)
	if i < 0 || j < 0 {
		t.Fatal("the dashboard does not list mallory")
	}
	key := between(page[j:], `data-participant="`, `"`)
	if strings.Contains(page, mallory.cookieValue(learnerCookie)) {
		t.Error("the dashboard shows a learner id")
	}
	code, page := form(teacher, dash+"/participants/"+key+"/remove", nil)
	if code != 200 || !strings.Contains(page, "Participants (1)") || strings.Contains(page, "Teacher</td>") || !strings.Contains(page, "The participant was removed") {
		t.Fatalf("remove = %d; want the dashboard with alice only and a notice", code)
	}
	mallory.exec("A", "PING")
	if d := firstSSE(t, teacher, dash+"/events"); d.Joined != 1 || d.Commands != 1 {
		t.Errorf("after the removal: %d joined, %d commands; want 1 and mallory's 1 from before", d.Joined, d.Commands)
	}
	if code, body := form(mallory, "/join", url.Values{"code": {wcode}, "nickname": {"Back"}}); code != 400 || !strings.Contains(body, "removed you from this workshop") {
		t.Errorf("mallory rejoins = %d; want 400 saying they were removed", code)
	}
	if code, _ := form(bob, "/join", url.Values{"code": {wcode}, "nickname": {"teacher"}}); code != 200 {
		t.Errorf("bob takes the freed nickname = %d", code)
	}
	if code, _ := form(teacher, dash+"/participants/0123456789abcdef/remove", nil); code != 404 {
		t.Errorf("removing an unknown participant = %d; want 404", code)
	}
	if code, _ := form(teacher, dash+"/participants/nope/remove", nil); code != 404 {
		t.Errorf("removing a malformed key = %d; want 404", code)
	}
	if code, body := form(alice, dash+"/participants/"+key+"/remove", nil); code >= 300 || !strings.Contains(body, "Instructor sign-in") {
		t.Errorf("a learner removes a participant = %d; want the instructor's sign-in page", code)
	}
}

// TestUniqueNicknames: a nickname another participant has, in any case,
// is refused with a clear error and the form to pick another; one's own
// is fine.
func TestUniqueNicknames(t *testing.T) {
	base := newWorkshopServer(t)
	_, wcode := instructor(t, base)
	alice, bob := newLearner(t, base), newLearner(t, base)
	form(alice, "/join", url.Values{"code": {wcode}, "nickname": {"Ann Lee"}})
	code, body := form(bob, "/join", url.Values{"code": {wcode}, "nickname": {"ANN  lee"}})
	if code != 400 || !strings.Contains(body, "already goes by ANN  lee") || !strings.Contains(body, `aria-invalid="true" aria-describedby="join-nick-taken"`) {
		t.Errorf("bob joins as alice's nickname = %d; want 400 with the nickname field marked", code)
	}
	if code, body := form(bob, "/join", url.Values{"code": {wcode}, "nickname": {"Bob"}}); code != 200 || !strings.Contains(body, "as <strong>Bob</strong>") {
		t.Errorf("bob picks another = %d", code)
	}
	if code, _ := form(alice, "/join", url.Values{"code": {wcode}, "nickname": {"ann lee"}}); code != 200 {
		t.Errorf("alice rejoins with her own nickname = %d", code)
	}
}

// TestNonMemberCookieCountsNothing: a cookie naming a workshop the
// learner has not joined counts nothing on its dashboard.
func TestNonMemberCookieCountsNothing(t *testing.T) {
	base := newWorkshopServer(t)
	teacher, wcode := instructor(t, base)
	outsider := newLearner(t, base)
	u, _ := url.Parse(base)
	outsider.http.Jar.SetCookies(u, []*http.Cookie{{Name: workshopCookie, Value: wcode}})
	for range 5 {
		outsider.exec("A", "PING")
	}
	if d := firstSSE(t, teacher, "/admin/workshops/"+wcode+"/events"); d.Joined != 0 || d.Commands != 0 {
		t.Errorf("dashboard = %d joined, %d commands; want nothing from a non-member", d.Joined, d.Commands)
	}
}

// cookieValue returns the value of l's cookie name, or "".
func (l *learnerClient) cookieValue(name string) string {
	u, _ := url.Parse(l.base)
	for _, c := range l.http.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}
