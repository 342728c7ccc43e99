package web

import (
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/locklab/locklab/race"
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
