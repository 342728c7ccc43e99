package web

import (
	"html"
	"io/fs"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/locklab/locklab/race"
	"github.com/locklab/locklab/static"
)

// TestRacePageWithoutJavaScript checks that /race shows the transcript
// and the outcomes in the HTML, that a submitted form goes to the address
// of its run, and that the lesson has the widget.
func TestRacePageWithoutJavaScript(t *testing.T) {
	ts := newTestServer(t)
	outcomes := regexp.MustCompile(`data-outcomes="([^"]*)"`)
	resp, _ := get(t, ts.URL, "/race?run=1&from=gc-pause&scenario=fencing&ttl_ms=10000&pause_ms=15000&work_ms=2000&seed=1")
	loc := resp.Header.Get("Location")
	if resp.StatusCode != 303 || !strings.Contains(loc, "fencing=true") || !strings.Contains(loc, "scenario=fencing") {
		t.Fatalf("submitting the form for the fencing scenario = %d to %q; want 303 to its run with fencing on", resp.StatusCode, loc)
	}
	_, page := get(t, ts.URL, loc)
	if m := outcomes.FindStringSubmatch(page); m == nil || !strings.Contains(m[1], "stale-write-rejected") || !strings.Contains(page, `data-race-transcript`) {
		t.Errorf("%s: outcomes %q; want stale-write-rejected, and a transcript", loc, m)
	}
	if !strings.Contains(page, `<h1 id="race-title"`) {
		t.Errorf("%s has no h1 for the race", loc)
	}
	resp, _ = get(t, ts.URL, "/race?run=1&from=gc-pause&scenario=gc-pause&ttl_ms=10000&pause_ms=15000")
	_, page = get(t, ts.URL, resp.Header.Get("Location"))
	if m := outcomes.FindStringSubmatch(page); m == nil || !strings.Contains(m[1], "stale-write-accepted") {
		t.Errorf("/race with the fencing box unticked: outcomes %q; want stale-write-accepted", m)
	}
	resp, page = get(t, ts.URL, "/race?scenario=gc-pause&ttl_ms=1")
	if resp.StatusCode != 400 || !strings.Contains(page, `role="alert" data-race-error data-race-failed="The run could not be computed; please try again.">Ttl_ms = 1: must be between`) {
		t.Errorf("/race with a bad TTL = %d; want 400 with the error in the page", resp.StatusCode)
	}
	resp, _ = get(t, ts.URL, "/race/present?run=1&from=gc-pause&scenario=normal")
	if loc := resp.Header.Get("Location"); resp.StatusCode != 303 || !strings.HasPrefix(loc, "/race/present?") {
		t.Errorf("the presenter view's form = %d to %q; want 303 to /race/present", resp.StatusCode, loc)
	}
	_, lesson := get(t, ts.URL, "/topics/distributed-locks")
	if !strings.Contains(lesson, `data-scenario="gc-pause"`) || !strings.Contains(lesson, "See it happen:") {
		t.Error("the lesson lacks the race widget")
	}
}

// TestRacePredictWithoutJavaScript: without JavaScript, /race shows the
// setup and folds what happened away under a closed "Show what happened";
// the prediction form, which carries the run, unfolds it and judges each
// outcome the learner ticked or that happened.
func TestRacePredictWithoutJavaScript(t *testing.T) {
	ts := newTestServer(t)
	story := regexp.MustCompile(`(?s)<details class="race-transcript race-story" data-race-story( open)?>.*?</details>`)
	choices := regexp.MustCompile(`(?s)<fieldset>.*?</fieldset>`)
	_, page := get(t, ts.URL, "/race?scenario=gc-pause")
	m := story.FindStringSubmatch(page)
	if m == nil || m[1] != "" {
		t.Fatalf("/race: what happened is %q; want it in a closed details", m)
	}
	setup, _ := race.Setup("gc-pause", race.List()[1].Defaults)
	rest := choices.ReplaceAllString(story.ReplaceAllString(page, ""), "")
	for _, line := range setup {
		if !strings.Contains(page, html.EscapeString(line)) {
			t.Errorf("/race lacks the setup line %q", line)
		}
	}
	for _, o := range race.AllOutcomes() {
		if strings.Contains(rest, html.EscapeString(o.Label())) {
			t.Errorf("/race shows the outcome %q outside the prediction's choices and the folded story", o.Label())
		}
	}
	form := regexp.MustCompile(`(?s)<form method="get" action="/race" data-race-predict-form>(.*?)</form>`).FindStringSubmatch(page)
	if form == nil {
		t.Fatal("/race has no prediction form")
	}
	q := url.Values{}
	for _, f := range regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`).FindAllStringSubmatch(form[1], -1) {
		q.Add(f[1], html.UnescapeString(f[2]))
	}
	if q.Get("scenario") != "gc-pause" || q.Get("pause_ms") != "15000" {
		t.Fatalf("the prediction form carries %v; want the run's scenario and settings", q)
	}
	q["predict"] = []string{"two-holders", "stale-write-rejected", "nonsense"}
	q.Set("show", "1")
	_, page = get(t, ts.URL, "/race?"+q.Encode())
	if m := story.FindStringSubmatch(page); m == nil || m[1] != " open" {
		t.Fatalf("/race after the prediction form: what happened is %q; want it open", m)
	}
	judged := regexp.MustCompile(`<li class="(prediction-right|prediction-wrong)" data-judged="([^"]+)">([^<]*)</li>`).FindAllStringSubmatch(page, -1)
	want := map[string]string{"two-holders": "prediction-right", "stale-write-accepted": "prediction-wrong", "stale-write-rejected": "prediction-wrong"}
	if len(judged) != len(want) {
		t.Errorf("judged %q; want %v", judged, want)
	}
	for _, j := range judged {
		if want[j[2]] != j[1] || !strings.Contains(html.UnescapeString(j[3]), race.Outcome(j[2]).Label()) {
			t.Errorf("%s judged %s: %q; want %s, with its label", j[2], j[1], j[3], want[j[2]])
		}
	}
	if !strings.Contains(page, `value="two-holders" checked`) || strings.Contains(page, `value="safe" checked`) {
		t.Error("the prediction form does not keep the learner's ticks")
	}
}

// racePart is the outer HTML of the first element of page that has the
// attribute attr (with or without a value), or "" if none has: the
// element from its start tag to the end tag that closes it.
func racePart(page, attr string) string {
	loc := regexp.MustCompile(`\s` + regexp.QuoteMeta(attr) + `[\s>/=]`).FindStringIndex(page)
	if loc == nil {
		return ""
	}
	start := strings.LastIndex(page[:loc[0]], "<")
	tag := regexp.MustCompile(`^<([a-z0-9]+)`).FindStringSubmatch(page[start:])
	if tag == nil {
		return ""
	}
	open := regexp.MustCompile(`<` + tag[1] + `[\s>]|</` + tag[1] + `>`)
	depth := 0
	for _, m := range open.FindAllStringIndex(page[start:], -1) {
		if page[start+m[0]+1] == '/' {
			depth--
		} else {
			depth++
		}
		if depth == 0 {
			return page[start : start+m[1]]
		}
	}
	return ""
}

// raceRunParts are the parts of the race widget that ?fragment=run
// answers with, each found by its attribute.
var raceRunParts = []string{
	"data-race-head", "data-race-setup", "data-race-error", "data-race-form", "data-race-run-fields",
	"data-race-result", "data-race-transcript", "data-race-fault-list", "data-race-fault-target", "data-race-fault-error",
}

// TestRaceFragments: /race and /race/present answer ?fragment=run with
// the parts of the widget a run changes, as the whole page renders them
// for the same run, whether asked with the run's address or with the
// settings form's fields; the lesson's widget is asked for with
// widget=lesson; ?fragment=judged is the prediction judged as the page
// judges it.
func TestRaceFragments(t *testing.T) {
	ts := newTestServer(t)
	attr := func(page, name string) string {
		m := regexp.MustCompile(`\s` + name + `="([^"]*)"`).FindStringSubmatch(page)
		if m == nil {
			return ""
		}
		return html.UnescapeString(m[1])
	}
	for _, tt := range []struct {
		name     string
		fragment string // the fragment's address
		page     string // the whole page of the same run, or "" for the address the form is sent to
		parts    []string
	}{
		{"address", "/race?scenario=fencing&fencing=false&fragment=run", "/race?scenario=fencing&fencing=false", raceRunParts},
		{"defaults", "/race?fragment=run", "/race", raceRunParts},
		{"with faults", "/race?scenario=normal&fault=pause:client1:500:12000&fault=crash:redis:0:100&fragment=run", "/race?scenario=normal&fault=pause:client1:500:12000&fault=crash:redis:0:100", raceRunParts},
		{"form, another scenario", "/race?run=1&from=gc-pause&scenario=fencing&ttl_ms=10000&pause_ms=15000&work_ms=2000&seed=1&fragment=run", "", raceRunParts},
		{"form, a fault added", "/race?run=1&from=normal&scenario=normal&ttl_ms=10000&seed=1&add_fault=1&fault_kind=pause&fault_target=client1&fault_at_ms=500&fault_arg_ms=12000&fragment=run", "", raceRunParts},
		{"form, a fault dropped", "/race?run=1&from=normal&scenario=normal&seed=1&fault=pause:client1:500:12000&fault=crash:redis:0:100&drop_fault=0&fragment=run", "", raceRunParts},
		{"presenter view", "/race/present?run=1&from=gc-pause&scenario=watchdog&fragment=run", "", raceRunParts},
		{"lesson", "/race?scenario=gc-pause&widget=lesson&fragment=run", "/topics/distributed-locks", raceRunParts[:7]},
		{"judged", "/race?scenario=gc-pause&show=1&predict=two-holders&predict=safe&fragment=judged", "/race?scenario=gc-pause&show=1&predict=two-holders&predict=safe", []string{"data-race-judged"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, frag := get(t, ts.URL, tt.fragment)
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=UTF-8" {
				t.Fatalf("GET %s = %d %q; want 200 text/html; charset=UTF-8", tt.fragment, resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			if strings.Contains(frag, "<html") || strings.Contains(frag, "data-race ") {
				t.Errorf("GET %s is more than the fragment: %.200s", tt.fragment, frag)
			}
			path := tt.page
			if path == "" {
				// The form without the script goes to the address of
				// its run.
				resp, _ := get(t, ts.URL, strings.TrimSuffix(tt.fragment, "&fragment=run"))
				if path = resp.Header.Get("Location"); resp.StatusCode != 303 {
					t.Fatalf("the form of %s without the script = %d; want 303", tt.fragment, resp.StatusCode)
				}
			}
			resp, page := get(t, ts.URL, path)
			if resp.StatusCode != 200 {
				t.Fatalf("GET %s = %d", path, resp.StatusCode)
			}
			for _, part := range tt.parts {
				want, got := racePart(page, part), racePart(frag, part)
				if want == "" || got != want {
					t.Errorf("%s of GET %s:\n%s\nwant it as GET %s renders it:\n%s", part, tt.fragment, got, path, want)
				}
			}
			if tt.parts[0] != "data-race-head" {
				return
			}
			// The fragment's root carries the run's addresses, as the
			// widget does.
			for _, name := range []string{"data-api", "data-scenario", "data-outcomes", "data-page", "data-present"} {
				if got, want := attr(frag, name), attr(page, name); got == "" || got != want {
					t.Errorf("%s of GET %s = %q; want the widget's, %q", name, tt.fragment, got, want)
				}
			}
		})
	}
	_, judged := get(t, ts.URL, "/race?scenario=gc-pause&show=1&predict=two-holders&predict=safe&fragment=judged")
	if n := strings.Count(judged, "data-judged="); n != 3 {
		t.Errorf("the prediction two-holders and safe of gc-pause: %d outcomes judged; want 3\n%s", n, judged)
	}
	if _, frag := get(t, ts.URL, "/race?scenario=gc-pause&fragment=judged"); strings.Contains(frag, "data-judged=") {
		t.Errorf("no prediction, judged: %s", frag)
	}
}

// TestRaceFragmentErrors: a run the server refuses is answered with the
// fragment and its status, the reason said where the page says it: a
// setting above the settings, a fault refused next to the fault's
// fields, over the run as it was; a fragment the page does not have is a
// 400 that names it.
func TestRaceFragmentErrors(t *testing.T) {
	ts := newTestServer(t)
	hidden := func(part string) bool {
		return regexp.MustCompile(`^<[a-z]+[^>]*\shidden[\s>]`).MatchString(part)
	}
	normal := race.List()[slices.IndexFunc(race.List(), func(in race.Info) bool { return in.ID == "normal" })].Setup
	for _, tt := range []struct {
		name, path       string
		status           int
		error, faultErr  string // what the two error parts say; "" for hidden
		wantSetup        []string
		wantScenarioAttr string
	}{
		{"bad setting", "/race?scenario=gc-pause&ttl_ms=5&fragment=run", 400, "Ttl_ms = 5: must be between 100 and 120000", "", nil, "gc-pause"},
		{"bad setting from the form", "/race?run=1&from=gc-pause&scenario=gc-pause&ttl_ms=abc&fragment=run", 400, "not a whole number of milliseconds", "", nil, "gc-pause"},
		{"no such scenario", "/race?scenario=nope&fragment=run", 404, "No race scenario", "", nil, "gc-pause"},
		{"fault refused", "/race?run=1&from=normal&scenario=normal&add_fault=1&fault_kind=pause&fault_target=client1&fault_at_ms=0&fault_arg_ms=0&fragment=run", 400, "", "0 ms", normal, "normal"},
		{"fault refused without the script", "/race?run=1&from=normal&scenario=normal&add_fault=1&fault_kind=pause&fault_target=redis&fault_at_ms=0&fault_arg_ms=10", 400, "", "must be client1, client2 or client3", normal, "normal"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := get(t, ts.URL, tt.path)
			if resp.StatusCode != tt.status || resp.Header.Get("Content-Type") != "text/html; charset=UTF-8" {
				t.Fatalf("GET %s = %d %q; want %d, text/html", tt.path, resp.StatusCode, resp.Header.Get("Content-Type"), tt.status)
			}
			for _, p := range []struct{ attr, want string }{{"data-race-error", tt.error}, {"data-race-fault-error", tt.faultErr}} {
				part := racePart(body, p.attr)
				if part == "" || hidden(part) != (p.want == "") || !strings.Contains(html.UnescapeString(part), p.want) {
					t.Errorf("GET %s: %s; want it to say %q", tt.path, part, p.want)
				}
			}
			if tt.wantSetup != nil {
				setup := racePart(body, "data-race-setup")
				for _, line := range tt.wantSetup {
					if !strings.Contains(setup, html.EscapeString(line)) {
						t.Errorf("GET %s: setup %s; want the run as it was, with %q", tt.path, setup, line)
					}
				}
				if n := strings.Count(setup, "<li>"); n != len(tt.wantSetup) {
					t.Errorf("GET %s: %d setup lines; want %d, without the fault refused", tt.path, n, len(tt.wantSetup))
				}
			}
			if m := regexp.MustCompile(`data-scenario="([^"]*)"`).FindStringSubmatch(body); m == nil || m[1] != tt.wantScenarioAttr {
				t.Errorf("GET %s: scenario %q; want %q", tt.path, m, tt.wantScenarioAttr)
			}
		})
	}
	resp, body := get(t, ts.URL, "/race?scenario=gc-pause&fragment=everything")
	if resp.StatusCode != 400 || !strings.Contains(html.UnescapeString(body), `no fragment "everything"`) {
		t.Errorf("GET /race?fragment=everything = %d %.300s; want 400 naming the fragment", resp.StatusCode, body)
	}
}

// TestRaceScriptBuildsNoWidgetMarkup: race.js puts the server's parts of
// the widget in place and builds none of them: it names none of the
// classes and attributes only the widget's templates write, and asks no
// longer for the scenarios' list to fill in the settings. (The drawing's
// legend and state panel are the player's own, drawn from the run.)
func TestRaceScriptBuildsNoWidgetMarkup(t *testing.T) {
	b, err := fs.ReadFile(static.FS(), "race.js")
	if err != nil {
		t.Fatal(err)
	}
	js := string(b)
	for _, s := range []string{
		"\"race-time\"", "race-actor", "prediction-feedback", "prediction-right", "data-judged", "data-outcome\"",
		"data-race-fault-spec", "button-link", "visually-hidden", "/api/race/scenarios", "createElement(\"option\")",
	} {
		if strings.Contains(js, s) {
			t.Errorf("race.js names %s, which only the race's templates should write", s)
		}
	}
}
