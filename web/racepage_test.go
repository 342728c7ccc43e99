package web

import (
	"html"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/locklab/locklab/race"
)

// TestRaceFormQuery checks how a submitted settings form becomes a run:
// a scenario change takes the new scenario's defaults for the values the
// learner left alone, and faults are added and dropped.
func TestRaceFormQuery(t *testing.T) {
	for _, tt := range []struct {
		name, form string
		want       map[string]string // "" means absent
		faults     []string
	}{
		{
			name: "to fencing, nothing changed",
			form: "run=1&from=gc-pause&scenario=fencing&ttl_ms=10000&pause_ms=15000&work_ms=2000&seed=1",
			want: map[string]string{"fencing": "true", "ttl_ms": "", "pause_ms": "", "scenario": "fencing", "run": "1", "from": ""},
		},
		{
			name: "to fencing, TTL changed",
			form: "run=1&from=gc-pause&scenario=fencing&ttl_ms=4000&pause_ms=15000",
			want: map[string]string{"fencing": "true", "ttl_ms": "4000"},
		},
		{
			name: "to release-del, defaults of gc-pause",
			form: "run=1&from=gc-pause&scenario=release-del&ttl_ms=10000&pause_ms=15000&work_ms=2000&release=script",
			want: map[string]string{"release": "", "pause_ms": "", "work_ms": "", "fencing": "false"},
		},
		{
			name: "from fencing to gc-pause, box left ticked",
			form: "run=1&from=fencing&scenario=gc-pause&fencing=true",
			want: map[string]string{"fencing": "false"},
		},
		{
			name: "from gc-pause to fencing, box ticked by the learner then the scenario changed",
			form: "run=1&from=normal&scenario=fencing&fencing=true",
			want: map[string]string{"fencing": "true"},
		},
		{
			name:   "same scenario keeps the unticked box",
			form:   "run=1&from=fencing&scenario=fencing",
			want:   map[string]string{"fencing": ""},
			faults: nil,
		},
		{
			name:   "scenario change drops faults",
			form:   "run=1&from=gc-pause&scenario=fencing&fault=pause:client2:6000:5000",
			faults: nil,
		},
		{
			name:   "add a crash with persistence",
			form:   "run=1&from=redlock-crash&scenario=redlock-crash&fault=pause:client1:100:200&add_fault=1&fault_kind=crash&fault_target=node2&fault_at_ms=1500&fault_arg_ms=3000&fault_persist=true",
			want:   map[string]string{"add_fault": "", "fault_kind": ""},
			faults: []string{"pause:client1:100:200", "crash:node2:1500:3000-persist"},
		},
		{
			name:   "add a client's crash: a client has no data to keep",
			form:   "run=1&from=normal&scenario=normal&add_fault=1&fault_kind=crash&fault_target=client1&fault_at_ms=1000&fault_arg_ms=0&fault_persist=true",
			faults: []string{"crash:client1:1000:0"},
		},
		{
			name:   "add a clock jump back",
			form:   "run=1&from=normal&scenario=normal&add_fault=1&fault_kind=clock-back&fault_target=redis&fault_at_ms=1000&fault_arg_ms=3000",
			faults: []string{"clock-back:redis:1000:3000"},
		},
		{
			name:   "drop the first fault",
			form:   "run=1&from=gc-pause&scenario=gc-pause&fault=pause:client1:100:200&fault=delay:client2:300:400&drop_fault=0",
			faults: []string{"delay:client2:300:400"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q, err := url.ParseQuery(tt.form)
			if err != nil {
				t.Fatal(err)
			}
			got := raceFormQuery(q)
			for k, v := range tt.want {
				if got.Get(k) != v {
					t.Errorf("raceFormQuery(%s)[%s] = %q; want %q", tt.form, k, got.Get(k), v)
				}
			}
			if !slices.Equal(got["fault"], tt.faults) {
				t.Errorf("raceFormQuery(%s) faults = %q; want %q", tt.form, got["fault"], tt.faults)
			}
		})
	}
}

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
	if resp.StatusCode != 400 || !strings.Contains(page, "role=\"alert\"") {
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
