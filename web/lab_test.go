package web

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/lab"
	"github.com/locklab/locklab/limit"
)

// labBody is a POST /api/lab/check body for a recipe.
func labBody(t *testing.T, r lab.Recipe, challenge string) string {
	t.Helper()
	req := labCheckRequest{Recipe: recipeToJSON(r), Challenge: challenge}
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (l *learnerClient) labCheck(body string) (int, labReportJSON, string) {
	l.t.Helper()
	code, out := l.do("POST", "/api/lab/check", "application/json", body)
	var rep labReportJSON
	if code == http.StatusOK {
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			l.t.Fatalf("POST /api/lab/check: %v\n%s", err, out)
		}
	}
	return code, rep, out
}

func (l *learnerClient) labChallenges() []labChallengeJSON {
	l.t.Helper()
	code, body := l.do("GET", "/api/lab/challenges", "", "")
	if code != http.StatusOK {
		l.t.Fatalf("GET /api/lab/challenges = %d %s", code, body)
	}
	var out []labChallengeJSON
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		l.t.Fatal(err)
	}
	return out
}

func TestLabChallengesAPI(t *testing.T) {
	l := newLearner(t, newTestServer(t).URL)
	got := l.labChallenges()
	want := lab.Challenges()
	if len(got) != len(want) {
		t.Fatalf("%d challenges; want %d", len(got), len(want))
	}
	for i, c := range got {
		if c.ID != want[i].ID || c.Title == "" || c.Goal == "" || c.Hint == "" || c.Property != string(want[i].Property) || len(c.Recipe.Acquire) == 0 || c.Solved {
			t.Errorf("challenge %d = %+v; want %s with a title, goal, hint, property and recipe, unsolved", i, c, want[i].ID)
		}
	}
	// The fixes stay on the server.
	_, body := l.do("GET", "/api/lab/challenges", "", "")
	if strings.Contains(body, `"fix"`) || strings.Contains(body, "INCR', KEYS[2]") {
		t.Errorf("the challenges give away a fix:\n%s", body)
	}
}

func TestLabCheckRefusesWhatCannotRun(t *testing.T) {
	l := newLearner(t, newTestServer(t).URL)
	for _, tt := range []struct {
		name, body string
		code       int
		msg        string // the error names this
	}{
		{"bad placeholder", labBody(t, lab.Recipe{Acquire: []string{"SET {key} {tokn} NX PX {ttl}"}, Release: []string{"DEL {key}"}}, ""), 400, "acquire line 1"},
		{"refused command", labBody(t, lab.Recipe{Acquire: []string{"SET {key} {token} NX PX {ttl}"}, Release: []string{"DEL {key}", "CONFIG SET maxmemory 1"}}, ""), 400, "release line 2"},
		{"empty acquire", labBody(t, lab.Recipe{Release: []string{"DEL {key}"}}, ""), 400, "acquire"},
		{"unknown challenge", labBody(t, lab.Textbook(), "no-such"), 404, "no-such"},
		{"malformed JSON", `{"recipe": [}`, 400, "malformed JSON"},
		{"bad reply pattern", `{"recipe": {"acquire": ["GET {key}"], "release": ["DEL {key}"], "taken_when": {"line": 1, "reply": "(("}}}`, 400, "not a regular expression"},
		{"line out of range", `{"recipe": {"acquire": ["GET {key}"], "release": ["DEL {key}"], "taken_when": {"line": 3, "reply": "^OK$"}}}`, 400, "taken_when.line 3"},
		{"bad model", `{"recipe": {"acquire": ["SET {key} {token} NX PX {ttl}"], "release": ["DEL {key}"]}, "model": {"clock_jumps": "sideways", "restarts": "none"}}`, 400, "clock_jumps"},
		{"unknown field", `{"recipe": {"acquire": ["GET {key}"]}, "extra": 1}`, 400, "extra"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, body := l.labCheck(tt.body)
			var e apiError
			_ = json.Unmarshal([]byte(body), &e)
			if code != tt.code || !strings.Contains(e.Error, tt.msg) {
				t.Errorf("POST /api/lab/check = %d %s; want %d naming %q", code, body, tt.code, tt.msg)
			}
		})
	}
}

func TestLabCheckReportsEveryProperty(t *testing.T) {
	l := newLearner(t, newTestServer(t).URL)
	body := labBody(t, lab.Textbook(), "")
	code, rep, raw := l.labCheck(body)
	if code != http.StatusOK {
		t.Fatalf("check = %d %s", code, raw)
	}
	if rep.Schedules < 200 || rep.Passed != nil || len(rep.Properties) != len(lab.Properties()) {
		t.Fatalf("report = %d schedules, passed %v, %d properties; want 200 or more, no passed, every property", rep.Schedules, rep.Passed, len(rep.Properties))
	}
	holds := map[string]bool{}
	for _, p := range rep.Properties {
		holds[p.ID] = p.Holds
		if p.Title == "" || p.Description == "" || p.Explored == 0 && p.Holds && p.Note == "" {
			t.Errorf("property %+v: want a title, a description and schedules explored", p)
		}
		if p.Holds != (p.Counterexample == nil) {
			t.Errorf("property %s holds=%v with counterexample %v; want one exactly when it breaks", p.ID, p.Holds, p.Counterexample)
		}
		if cx := p.Counterexample; cx != nil {
			if len(cx.Events) == 0 || len(cx.Outcomes) == 0 || !strings.HasPrefix(cx.Link, "/lab?") || cx.TTLMS == 0 {
				t.Errorf("counterexample of %s = %+v; want events, outcomes, a TTL and a link", p.ID, cx)
			}
		}
	}
	if !holds["one-holder"] || !holds["no-foreign-release"] || !holds["frees-after-crash"] || holds["no-stale-write"] {
		t.Errorf("textbook recipe: %v; want all but no-stale-write to hold", holds)
	}
	// The same recipe always gives the same answer.
	_, _, again := l.labCheck(body)
	if again != raw {
		t.Errorf("a second check of the same recipe differs:\n%s\n%s", raw, again)
	}
}

func TestLabChallengeSolvedAndSaved(t *testing.T) {
	l := newLearner(t, newTestServer(t).URL)
	ch, err := lab.ChallengeByID("plain-del")
	if err != nil {
		t.Fatal(err)
	}
	code, rep, raw := l.labCheck(labBody(t, ch.Recipe, ch.ID))
	if code != http.StatusOK || rep.Passed == nil || *rep.Passed || rep.JustSolved {
		t.Fatalf("broken recipe = %d %s; want passed false", code, raw)
	}
	p, _ := findProperty(rep, string(ch.Property))
	if p.Holds || p.Counterexample == nil {
		t.Errorf("broken recipe: %s = %+v; want broken with a counterexample", ch.Property, p)
	}
	if l.labChallenges()[1].Solved {
		t.Error("a failed check marked the challenge solved")
	}
	code, rep, raw = l.labCheck(labBody(t, ch.Fix, ch.ID))
	if code != http.StatusOK || rep.Passed == nil || !*rep.Passed || !rep.JustSolved {
		t.Fatalf("fixed recipe = %d %s; want passed and just solved", code, raw)
	}
	for _, c := range l.labChallenges() {
		if c.Solved != (c.ID == ch.ID) {
			t.Errorf("challenge %s solved = %v after solving %s", c.ID, c.Solved, ch.ID)
		}
	}
	// Solving it again saves nothing new; the page counts it.
	if _, rep, _ = l.labCheck(labBody(t, ch.Fix, ch.ID)); rep.JustSolved {
		t.Error("solving a solved challenge again: just_solved = true")
	}
	if _, page := l.do("GET", "/lab", "", ""); !strings.Contains(page, fmt.Sprintf("1 of %d solved", len(lab.Challenges()))) {
		t.Errorf("/lab does not count the solved challenge")
	}
}

func findProperty(rep labReportJSON, id string) (labPropertyJSON, bool) {
	for _, p := range rep.Properties {
		if p.ID == id {
			return p, true
		}
	}
	return labPropertyJSON{}, false
}

func TestLabCheckUnderScriptLimits(t *testing.T) {
	cfg := testConfig(t)
	// The clock stands still: the one check of the burst never comes back.
	at := time.Unix(1_800_000_000, 0)
	cfg.Limits = limit.Limits{Scripts: limit.Memory{Now: func() time.Time { return at }}.Limiter(1, 1)}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l := newLearner(t, newServerFor(t, s))
	body := labBody(t, lab.Textbook(), "")
	if code, _, raw := l.labCheck(body); code != http.StatusOK {
		t.Fatalf("first check = %d %s", code, raw)
	}
	req, _ := http.NewRequest("POST", l.base+"/api/lab/check", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRF-Token", l.csrfToken())
	resp, err := l.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("second check = %d, Retry-After %q; want 429 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	// A recipe that cannot run is refused before it costs anything.
	bad := labBody(t, lab.Recipe{Release: []string{"DEL {key}"}}, "")
	if code, _, raw := l.labCheck(bad); code != http.StatusBadRequest {
		t.Errorf("bad recipe under a spent limit = %d %s; want 400", code, raw)
	}
}

func TestLabPageWithoutJavaScript(t *testing.T) {
	l := newLearner(t, newTestServer(t).URL)
	code, page := l.do("GET", "/lab", "", "")
	for _, want := range []string{`<form class="lab-form" method="post" action="/lab#report"`, `name="acquire"`, `name="release"`, `name="extend"`, `name="fencing"`, "Check it", `href="/lab?challenge=plain-del"`, "SET {key} {token} NX PX {ttl}"} {
		if code != http.StatusOK || !strings.Contains(page, want) {
			t.Errorf("GET /lab = %d; want %q in the page", code, want)
		}
	}
	if strings.Contains(page, `id="report"`) {
		t.Error("GET /lab shows a report before any check")
	}

	ch, _ := lab.ChallengeByID("plain-del")
	_, page = l.do("GET", "/lab?challenge=plain-del", "", "")
	if !strings.Contains(page, ch.Hint[:30]) || !strings.Contains(page, ">DEL {key}</textarea>") || !strings.Contains(page, `name="challenge" value="plain-del"`) {
		t.Errorf("GET /lab?challenge=plain-del: want the hint, the broken release and the challenge field")
	}

	form := func(r lab.Recipe, challenge string) string {
		v := url.Values{"acquire": {strings.Join(r.Acquire, "\n")}, "release": {strings.Join(r.Release, "\r\n")}, "extend": {strings.Join(r.Extend, "\n")}, "challenge": {challenge}}
		if r.Fencing {
			v.Set("fencing", "true")
		}
		return v.Encode()
	}
	const formType = "application/x-www-form-urlencoded"
	code, page = l.do("POST", "/lab", formType, form(lab.Recipe{Acquire: []string{"SET {key} {token} NX PX {ttl}"}, Release: []string{"DEL {key}", "SHUTDOWN"}}, ""))
	if code != http.StatusBadRequest || !strings.Contains(page, "Release line 2") || !strings.Contains(page, `id="lab-release" name="release"`) || !strings.Contains(page, `aria-invalid="true"`) {
		t.Errorf("POST /lab with a refused line = %d; want 400 naming release line 2, the field marked invalid", code)
	}

	code, page = l.do("POST", "/lab", formType, form(ch.Recipe, ch.ID))
	if code != http.StatusOK || !strings.Contains(page, `data-lab-passed="false"`) || !strings.Contains(page, `data-lab-cx="no-foreign-release"`) || !strings.Contains(page, "data-race-transcript") {
		t.Errorf("POST /lab with the broken recipe = %d; want not passed, with the counterexample's transcript", code)
	}
	code, page = l.do("POST", "/lab", formType, form(ch.Fix, ch.ID))
	if code != http.StatusOK || !strings.Contains(page, `data-lab-passed="true"`) || !strings.Contains(page, "Saved with your progress") || !strings.Contains(page, fmt.Sprintf("1 of %d solved", len(lab.Challenges()))) {
		t.Errorf("POST /lab with the fix = %d; want solved and saved", code)
	}

	// The report's link reproduces the check.
	_, rep, _ := l.labCheck(labBody(t, ch.Recipe, ch.ID))
	code, page = l.open(rep.Link)
	if code != http.StatusOK || !strings.Contains(page, `data-lab-passed="false"`) || !strings.Contains(page, ">DEL {key}</textarea>") {
		t.Errorf("GET %s = %d; want the same check", rep.Link, code)
	}
}

func TestLabLinkedFromHomeAndLesson(t *testing.T) {
	ts := newTestServer(t)
	for _, path := range []string{"/", "/topics/distributed-locks"} {
		if _, page := get(t, ts.URL, path); !strings.Contains(page, `href="/lab"`) {
			t.Errorf("%s does not link to /lab", path)
		}
	}
	// The lesson stays light: the lab's style sheet and script are the
	// lab page's own.
	_, page := get(t, ts.URL, "/topics/distributed-locks")
	if strings.Contains(page, "lab.css") || strings.Contains(page, "lab.js") {
		t.Error("the lesson loads the lab's style sheet or script")
	}
}

func TestLabBombRecipeIsRefused(t *testing.T) {
	l := newLearner(t, newTestServer(t).URL)
	bomb := lab.Recipe{Acquire: []string{`EVAL "while true do end" 0`}, Release: []string{"DEL {key}"}}
	code, _, body := l.labCheck(labBody(t, bomb, ""))
	var e apiError
	_ = json.Unmarshal([]byte(body), &e)
	if code != http.StatusBadRequest || !strings.Contains(e.Error, "acquire line 1") {
		t.Errorf("bomb recipe = %d %s; want 400 naming acquire line 1", code, body)
	}
}

// TestLabSolvedTravelsWithProgressCodes: a learner who has only used the
// lab has progress to carry, and the other device gets the solved
// challenge.
func TestLabSolvedTravelsWithProgressCodes(t *testing.T) {
	base := newTestServer(t).URL
	laptop, phone := newLearner(t, base), newLearner(t, base)
	ch, _ := lab.ChallengeByID("no-ttl")
	if code, rep, raw := laptop.labCheck(labBody(t, ch.Fix, ch.ID)); code != http.StatusOK || !rep.JustSolved {
		t.Fatalf("solve %s = %d %s", ch.ID, code, raw)
	}
	code, c, body := laptop.newCode()
	if code != http.StatusOK {
		t.Fatalf("POST /api/progress/code after solving a lab challenge = %d %s; want a code", code, body)
	}
	if code, body := phone.adopt(c.Code); code != http.StatusOK {
		t.Fatalf("carry = %d %s", code, body)
	}
	for _, got := range phone.labChallenges() {
		if got.Solved != (got.ID == ch.ID) {
			t.Errorf("on the other device, %s solved = %v", got.ID, got.Solved)
		}
	}
}

// TestLabLinkSavesNothing: opening a check's link (GET) shows its result
// but does not mark the challenge solved; the form's POST does.
func TestLabLinkSavesNothing(t *testing.T) {
	l := newLearner(t, newTestServer(t).URL)
	ch, _ := lab.ChallengeByID("plain-del")
	link := labLink(recipeToJSON(ch.Fix), ch.ID, nil, nil)
	code, page := l.open(link)
	if code != http.StatusOK || !strings.Contains(page, `data-lab-passed="true"`) || !strings.Contains(page, "Press Check it to save it") {
		t.Errorf("GET %s = %d; want passed, not saved", link, code)
	}
	for _, c := range l.labChallenges() {
		if c.Solved {
			t.Errorf("GET of a link marked %s solved", c.ID)
		}
	}
}

// TestLabCheckTakenWhen: a recipe says which reply means taken, and the
// model it is checked under; the report names both and judges it.
func TestLabCheckTakenWhen(t *testing.T) {
	l := newLearner(t, newTestServer(t).URL)
	body := `{"recipe": {"acquire": ["GET {key}", "SET {key} {token} PX {ttl}"], "release": ["EVAL \"if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end\" 1 {key} {token}"],` +
		` "taken_when": {"line": 1, "reply": "^\\(nil\\)$"}}, "model": {"long_stalls": false, "clock_jumps": "none", "restarts": "none", "combine": true}}`
	code, rep, raw := l.labCheck(body)
	if code != http.StatusOK {
		t.Fatalf("POST /api/lab/check = %d %s", code, raw)
	}
	p, _ := findProperty(rep, "one-holder")
	if !rep.Works || p.Status != "broken" || p.Counterexample == nil || len(p.Counterexample.Faults) != 1 {
		t.Errorf("GET then SET: works %v, one-holder %s; want broken by one pause: %s", rep.Works, p.Status, raw)
	}
	if rep.Model.ClockJumps != "none" || rep.Model.LongStalls || !strings.Contains(rep.ModelText, "inside the") || !strings.HasPrefix(rep.Summary, "All ") {
		t.Errorf("report model %+v, %q, summary %q; want the model asked for", rep.Model, rep.ModelText, rep.Summary)
	}
	// The link reproduces the same check, rule and model included.
	code, page := l.open(rep.Link)
	if code != http.StatusOK || !strings.Contains(page, `data-property="one-holder" data-holds="false" data-status="broken"`) || !strings.Contains(page, `value="^\(nil\)$"`) {
		t.Errorf("GET %s = %d; want the same check, its rule in the form", rep.Link, code)
	}
}

// open GETs path as a browser's top-level navigation does: a learner
// opening a link.
func (l *learnerClient) open(path string) (int, string) {
	l.t.Helper()
	req, err := http.NewRequest(http.MethodGet, l.base+path, nil)
	if err != nil {
		l.t.Fatal(err)
	}
	req.Header.Set("Sec-Fetch-Mode", "navigate")
	req.Header.Set("Sec-Fetch-Dest", "document")
	resp, err := l.http.Do(req)
	if err != nil {
		l.t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestLabLinkRunsOnlyWhenOpened: a check's link runs the check for a
// learner who opens it, not for an image, a fetch or a client that does
// not say; those get the recipe and a Check button.
func TestLabLinkRunsOnlyWhenOpened(t *testing.T) {
	l := newLearner(t, newTestServer(t).URL)
	link := labLink(recipeToJSON(lab.Textbook()), "", nil, nil)
	for _, h := range []map[string]string{
		{},
		{"Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "image"},
		{"Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty"},
	} {
		req, _ := http.NewRequest(http.MethodGet, l.base+link, nil)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := l.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		page := string(b)
		if resp.StatusCode != http.StatusOK || strings.Contains(page, `id="lab-report-title"`) || !strings.Contains(page, "data-lab-check") || !strings.Contains(page, ">SET {key} {token} NX PX {ttl}</textarea>") {
			t.Errorf("GET the link with %v = %d; want the recipe and its Check button, and no check", h, resp.StatusCode)
		}
	}
	if code, page := l.open(link); code != http.StatusOK || !strings.Contains(page, `id="lab-report-title"`) {
		t.Errorf("opening the link = %d; want the check's report", code)
	}
}

// TestLabLibraryAPI: GET /api/lab/library lists every gallery entry with
// its recipe, its source at a commit, its fault model, its differences,
// and a verdict per property with the text its reasoning comes from.
func TestLabLibraryAPI(t *testing.T) {
	l := newLearner(t, newTestServer(t).URL)
	code, body := l.do("GET", "/api/lab/library", "", "")
	if code != http.StatusOK {
		t.Fatalf("GET /api/lab/library = %d %s", code, body)
	}
	var got []labLibraryJSON
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	want := lab.Library()
	if len(got) != len(want) {
		t.Fatalf("%d entries; want %d", len(got), len(want))
	}
	for i, e := range got {
		w := want[i]
		if e.ID != w.ID || e.Name != w.Name || e.Source != w.Source || !strings.Contains(e.Source, "/blob/"+e.Commit+"/") || len(e.Commit) != 40 {
			t.Errorf("entry %d = %s %q at %s; want %s, its source at its commit", i, e.ID, e.Source, e.Commit, w.ID)
		}
		if strings.Join(e.Recipe.Acquire, "\n") != strings.Join(w.Recipe.Acquire, "\n") || e.Recipe.Fencing != w.Recipe.Fencing || len(e.Recipe.Release) == 0 {
			t.Errorf("entry %s: recipe %+v; want the entry's", e.ID, e.Recipe)
		}
		if e.Model != w.CheckModel() || e.Load != "/lab?library="+e.ID || !strings.HasPrefix(e.LoadedText, "Loaded "+e.Name) || len(e.Differences) == 0 {
			t.Errorf("entry %s: model %+v, load %q, loaded text %q, %d differences", e.ID, e.Model, e.Load, e.LoadedText, len(e.Differences))
		}
		if len(e.Verdicts) != len(lab.Properties()) {
			t.Fatalf("entry %s: %d verdicts; want one per property", e.ID, len(e.Verdicts))
		}
		for j, v := range e.Verdicts {
			if v.Property != string(lab.Properties()[j].ID) || v.Status != w.Verdicts[j].Status || v.Why == "" || v.Title == "" || !strings.HasPrefix(v.Source.URL, "http") || v.Source.Title == "" {
				t.Errorf("entry %s verdict %d = %+v; want %s %s with its reasoning and source", e.ID, j, v, lab.Properties()[j].ID, w.Verdicts[j].Status)
			}
		}
	}
}

// TestLabPageLoadsLibrary: /lab?library=ID renders the page with the
// entry's recipe, its rules and its fault model in the form, says what
// was loaded and marks the entry in the gallery; without JavaScript that
// is what Load does. An unknown id is a 404.
func TestLabPageLoadsLibrary(t *testing.T) {
	l := newLearner(t, newTestServer(t).URL)
	code, page := l.do("GET", "/lab", "", "")
	if code != http.StatusOK || !strings.Contains(page, `id="lab-library-title"`) {
		t.Fatalf("GET /lab = %d; want the gallery", code)
	}
	for _, e := range lab.Library() {
		if !strings.Contains(page, `href="/lab?library=`+e.ID+`" data-lab-load="`+e.ID+`"`) || !strings.Contains(page, `href="`+e.Source+`"`) {
			t.Errorf("GET /lab: want %s's Load link and its source link", e.ID)
		}
	}
	if strings.Contains(page, "lab-lib lab-current") || !strings.Contains(page, `data-lab-loaded hidden`) {
		t.Error("GET /lab marks an entry loaded before any is")
	}

	for _, e := range lab.Library() {
		t.Run(e.ID, func(t *testing.T) {
			code, page := l.do("GET", "/lab?library="+e.ID, "", "")
			if code != http.StatusOK {
				t.Fatalf("GET /lab?library=%s = %d", e.ID, code)
			}
			for _, want := range []string{
				`id="lab-acquire" name="acquire"`,
				">" + html.EscapeString(strings.Join(e.Recipe.Acquire, "\n")) + "</textarea>",
				">" + html.EscapeString(strings.Join(e.Recipe.Release, "\n")) + "</textarea>",
				html.EscapeString(e.LoadedText()),
				`name="library" value="` + e.ID + `"`,
				`class="lab-lib lab-current" data-library="` + e.ID + `"`,
				`<option value="` + e.CheckModel().Restarts + `" selected`,
				`<option value="` + strconv.Itoa(max(e.Recipe.Nodes, 1)) + `" selected`,
			} {
				if !strings.Contains(page, want) {
					t.Errorf("GET /lab?library=%s: want %q in the page", e.ID, want)
				}
			}
			if mt := e.ModelText(); mt != "" && !strings.Contains(page, html.EscapeString(mt)) {
				t.Errorf("GET /lab?library=%s: want the gallery to say the entry's own fault model, %q", e.ID, mt)
			}
			if d := e.Recipe.TakenWhen; d != nil && !strings.Contains(page, `value="`+html.EscapeString(d.Reply)+`"`) {
				t.Errorf("GET /lab?library=%s: want the taken rule %q in the form", e.ID, d.Reply)
			}
			if e.Recipe.Fencing != strings.Contains(page, `name="fencing" type="checkbox" value="true" checked`) {
				t.Errorf("GET /lab?library=%s: fencing box checked = %v; want %v", e.ID, !e.Recipe.Fencing, e.Recipe.Fencing)
			}
		})
	}

	if code, _ = l.do("GET", "/lab?library=no-such", "", ""); code != http.StatusNotFound {
		t.Errorf("GET /lab?library=no-such = %d; want 404", code)
	}
	// A challenge keeps its own recipe.
	code, page = l.do("GET", "/lab?challenge=plain-del&library=redsync", "", "")
	if code != http.StatusOK || !strings.Contains(page, ">DEL {key}</textarea>") || strings.Contains(page, "lab-lib lab-current") {
		t.Errorf("GET /lab?challenge=plain-del&library=redsync = %d; want the challenge's recipe, no entry loaded", code)
	}
}

// TestLabLibraryEntryChecked: a loaded entry checked with the page's form
// (no JavaScript) gives the verdicts its entry expects, on its five
// nodes, with a counterexample to play for each one it breaks, and stays
// marked in the gallery.
func TestLabLibraryEntryChecked(t *testing.T) {
	l := newLearner(t, newTestServer(t).URL)
	e, _ := lab.LibraryByID("redsync")
	m := e.CheckModel()
	v := url.Values{
		"acquire": {strings.Join(e.Recipe.Acquire, "\n")}, "release": {strings.Join(e.Recipe.Release, "\n")}, "extend": {strings.Join(e.Recipe.Extend, "\n")},
		"library": {e.ID}, "clock_jumps": {m.ClockJumps}, "restarts": {m.Restarts}, "long_stalls": {"true"}, "combine": {"true"},
		"nodes": {strconv.Itoa(e.Recipe.Nodes)},
	}
	code, page := l.do("POST", "/lab", "application/x-www-form-urlencoded", v.Encode())
	if code != http.StatusOK {
		t.Fatalf("POST /lab = %d", code)
	}
	for _, vd := range e.Verdicts {
		if want := `data-property="` + string(vd.Property) + `" data-holds="` + fmt.Sprint(vd.Status == lab.StatusHolds) + `" data-status="` + vd.Status + `"`; !strings.Contains(page, want) {
			t.Errorf("the report: want %s %s as the entry expects", vd.Property, vd.Status)
		}
	}
	for _, p := range []string{"one-holder", "no-stale-write"} {
		if !strings.Contains(page, `data-lab-cx="`+p+`"`) || !strings.Contains(page, "data-race-transcript") {
			t.Errorf("the report: want the counterexample to %s, with its transcript", p)
		}
	}
	if !strings.Contains(page, `class="lab-lib lab-current" data-library="redsync"`) || strings.Contains(page, "Loaded redsync") {
		t.Error("after a check: want redsync still marked in the gallery, without the loaded note")
	}
}
