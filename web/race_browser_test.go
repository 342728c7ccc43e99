package web

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/locklab/locklab/internal/browsertest"
	"github.com/locklab/locklab/race"
)

// evalJS evaluates a JavaScript expression on the page, failing the test
// if it throws.
func evalJS[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// futureShown lists the parts of the drawing that are on screen though
// their time is later than the playhead's clock (read from the page, to
// the 100 ms it shows).
const futureShown = `(() => {
	const root = document.querySelector("[data-race]");
	const now = parseFloat(root.querySelector("[data-race-clock]").textContent) * 1000;
	const svg = root.querySelector("[data-race-stage] .race-timeline");
	return [...svg.querySelectorAll("[data-t0]")].filter(el => {
		for (let n = el; n && n !== svg; n = n.parentNode) if (getComputedStyle(n).display === "none") return false;
		return Number(el.getAttribute("data-t0")) > now + 100;
	}).map(el => el.getAttribute("class") + "@" + el.getAttribute("data-t0")).join(", ");
})()`

// wantOutcomes is what the server reports for a scenario at its defaults.
func wantOutcomes(t *testing.T, id string) []string {
	t.Helper()
	i := slices.IndexFunc(race.List(), func(in race.Info) bool { return in.ID == id })
	tl, err := race.Run(id, race.List()[i].Defaults)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range raceOutcomes(tl) {
		out = append(out, o.ID)
	}
	return out
}

// TestRaceNoSpoilers opens every scenario and checks that at t = 0 only the
// setup is drawn: no bar, marker or token of a later time, no outcome, no
// later transcript line; and that stepping forward draws what it reaches.
func TestRaceNoSpoilers(t *testing.T) {
	ts := newTestServer(t)
	ctx := browsertest.New(t)
	for _, in := range race.List() {
		t.Run(in.ID, func(t *testing.T) {
			browsertest.Open(t, ctx, ts.URL+"/race?scenario="+in.ID, 1280, 900)
			browsertest.WaitFor(t, ctx, `document.querySelector("[data-race-stage] .race-timeline") !== null`)
			browsertest.ElementScreenshot(t, ctx, "[data-race]", "race-start-"+in.ID+"-1280")
			if got := evalJS[string](t, ctx, futureShown); got != "" {
				t.Errorf("at t = 0 these future parts are visible: %s", got)
			}
			if !evalJS[bool](t, ctx, `document.querySelector("[data-race-result]").hidden`) {
				t.Error("the outcomes show before the race is played")
			}
			if n := evalJS[int](t, ctx, `[...document.querySelectorAll("[data-race-transcript] li")].filter(li => !li.hidden && li.querySelector(".race-time").textContent !== "0 s").length`); n != 0 {
				t.Errorf("%d later transcript lines visible at t = 0", n)
			}
			// The prediction is asked before the first play.
			if !evalJS[bool](t, ctx, `document.querySelector("[data-race-predict]").open && !document.querySelector("[data-race-predict]").hidden`) {
				t.Error("the prediction is not asked before the first play")
			}
			for range 3 {
				if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-act=forward]`))); err != nil {
					t.Fatal(err)
				}
			}
			if got := evalJS[string](t, ctx, futureShown); got != "" {
				t.Errorf("after three steps these parts ahead of the playhead are visible: %s", got)
			}
			if n := evalJS[int](t, ctx, `[...document.querySelectorAll("[data-race-stage] .race-timeline .marker")].filter(m => m.style.display !== "none").length`); n < 2 {
				t.Errorf("after three steps %d markers are drawn; want at least 2", n)
			}
		})
	}
}

// TestRaceWithoutJavaScript picks every scenario in the settings form with
// JavaScript off, as a learner without it would, and checks that the page
// then shows that scenario with its own outcomes, and none of the controls
// that need the script.
func TestRaceWithoutJavaScript(t *testing.T) {
	ts := newTestServer(t)
	ctx := browsertest.New(t)
	browsertest.Scripts(t, ctx, false)
	for _, in := range race.List() {
		t.Run(in.ID, func(t *testing.T) {
			// Start from another scenario, so the form changes scenario.
			from := "gc-pause"
			if in.ID == from {
				from = "fencing"
			}
			browsertest.Open(t, ctx, ts.URL+"/race?scenario="+from, 1280, 900)
			if err := chromedp.Do(ctx,
				chromedp.SetValue(chromedp.CSS(`select[name=scenario]`), in.ID),
				chromedp.Click(chromedp.CSS(`[data-race-run]`)),
			); err != nil {
				t.Fatal(err)
			}
			browsertest.WaitFor(t, ctx, fmt.Sprintf(`document.querySelector("[data-race]").dataset.scenario === %q`, in.ID))
			got := strings.Fields(evalJS[string](t, ctx, `document.querySelector("[data-race]").dataset.outcomes`))
			if want := wantOutcomes(t, in.ID); !slices.Equal(got, want) {
				t.Errorf("data-outcomes after choosing %s = %q; want %q", in.ID, got, want)
			}
			if title := evalJS[string](t, ctx, `document.querySelector("[data-race-title]").textContent`); title != in.Title {
				t.Errorf("title = %q; want %q", title, in.Title)
			}
			shown := evalJS[string](t, ctx, `["[data-race-player]", "[data-race-stage]", "[data-race-narration]", "[data-act=play]", "[data-race-predict-js]"].filter(s => { const el = document.querySelector(s); return el && el.getClientRects().length > 0; }).join(" ")`)
			if shown != "" {
				t.Errorf("without JavaScript these controls are shown: %s", shown)
			}
			// What happened is in the page, folded away until asked for.
			if n := evalJS[int](t, ctx, `document.querySelectorAll("[data-race-story] [data-race-outcomes] li").length`); n == 0 {
				t.Error("no outcome listed without JavaScript")
			}
			if evalJS[bool](t, ctx, `document.querySelector("[data-race-story]").open`) {
				t.Error("without JavaScript, what happened is unfolded before the learner asks")
			}
		})
	}
	t.Run("fault", func(t *testing.T) {
		browsertest.Open(t, ctx, ts.URL+"/race?scenario=normal", 1280, 900)
		if err := chromedp.Do(ctx,
			chromedp.SetValue(chromedp.CSS(`[data-race-fault-kind]`), "pause"),
			chromedp.SetValue(chromedp.CSS(`[data-race-fault-target]`), "client1"),
			chromedp.SetValue(chromedp.CSS(`[data-race-fault-at]`), "1000"),
			chromedp.SetValue(chromedp.CSS(`[data-race-fault-arg]`), "15000"),
			chromedp.Click(chromedp.CSS(`[data-race-add-fault]`)),
		); err != nil {
			t.Fatal(err)
		}
		// The address changes when the new page starts to load: wait for
		// the page itself too.
		browsertest.WaitFor(t, ctx, `location.search.includes("fault=pause") && document.readyState === "complete"`)
		if got := evalJS[string](t, ctx, `document.querySelector("[data-race]").dataset.outcomes`); got == "safe" {
			t.Errorf("a 15 s pause of client 1 at 1 s in the normal case: outcomes %q; want something unsafe", got)
		}
		browsertest.Screenshot(t, ctx, "race-nojs-fault-1280")
	})
}

// partsUnlikePageJS lists the parts of the race widget on screen that
// differ from the parts of the whole page the server renders for the
// address in the address bar: the parts the player leaves alone by their
// markup, the transcript by its lines, the fault targets by their
// options, and the settings by their values and the fields shown.
const partsUnlikePageJS = `(async () => {
	const html = await (await fetch(location.href, { credentials: "same-origin" })).text();
	const doc = new DOMParser().parseFromString(html, "text/html");
	const markup = el => el.outerHTML;
	const lines = el => [...el.children].map(li => li.textContent).join("|");
	const options = el => [...el.options].map(o => o.value + "=" + o.textContent).join("|");
	const settings = f => [...f.querySelectorAll("input[id], select[id]")].map(e => e.id + "=" + (e.type === "checkbox" ? e.checked : e.value) + (e.disabled ? " disabled" : "")).join("|") +
		" shown: " + [...f.querySelectorAll("[data-param]")].filter(p => !p.hidden).map(p => p.dataset.param).join(" ");
	const out = [];
	for (const [sel, f] of [["[data-race-head]", markup], ["[data-race-setup]", markup], ["[data-race-error]", markup], ["[data-race-form-run]", markup],
		["[data-race-run-fields]", markup], ["[data-race-verdict]", markup], ["[data-race-fault-list]", markup], ["[data-race-fault-error]", markup],
		["[data-race-transcript]", lines], ["[data-race-fault-target]", options], ["[data-race-form]", settings]]) {
		const a = document.querySelector(sel), b = doc.querySelector(sel);
		if (!a || !b || f(a) !== f(b)) out.push(sel + ": " + (a && f(a)) + "\nwant " + (b && f(b)));
	}
	return out.join("\n");
})()`

// partsUnlikePage runs partsUnlikePageJS.
func partsUnlikePage(t *testing.T, ctx context.Context) string {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](partsUnlikePageJS, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("compare the widget with the page: %v", err)
	}
	return got
}

// TestRaceSettingsUpdate changes the scenario and then the fencing box
// with JavaScript on, and checks that the widget is updated in place
// (the page stays, the focus stays on the field changed) with the parts
// the server renders for the new run, and that the title, the address,
// the presenter link, the outcomes and the narration follow.
func TestRaceSettingsUpdate(t *testing.T) {
	ts := newTestServer(t)
	ctx := browsertest.New(t)
	browsertest.Open(t, ctx, ts.URL+"/race?scenario=gc-pause", 1280, 900)
	browsertest.WaitFor(t, ctx, `document.querySelector("[data-race-stage] .race-timeline") !== null`)
	intro := evalJS[string](t, ctx, `document.querySelector("[data-race-narration]").textContent`)
	evalJS[bool](t, ctx, `(() => { window.stayed = true; const s = document.querySelector("select[name=scenario]"); s.focus(); s.value = "fencing"; s.dispatchEvent(new Event("change", {bubbles: true})); return true; })()`)
	browsertest.WaitFor(t, ctx, `document.querySelector("[data-race]").dataset.scenario === "fencing"`)
	check := func(wantURL, wantOutcome, wantFocus string) {
		t.Helper()
		if !evalJS[bool](t, ctx, `window.stayed === true`) {
			t.Error("the page was loaded again; want the widget updated in place")
		}
		if got := partsUnlikePage(t, ctx); got != "" {
			t.Errorf("the widget's parts are not the server's for the run:\n%s", got)
		}
		if got := evalJS[string](t, ctx, `document.activeElement.id`); got != wantFocus {
			t.Errorf("the focus is on %q; want it to stay on %q", got, wantFocus)
		}
		if got := evalJS[string](t, ctx, `document.querySelector("[data-race-narration]").textContent`); got != intro {
			t.Errorf("the narration says %q; want %q, a new round", got, intro)
		}
		if got := evalJS[string](t, ctx, `document.querySelector("[data-race-title]").textContent`); got != "The same pause, with fencing tokens" {
			t.Errorf("title = %q", got)
		}
		if got := evalJS[string](t, ctx, `location.search`); !strings.Contains(got, "scenario=fencing") || !strings.Contains(got, wantURL) {
			t.Errorf("address = %q; want scenario=fencing and %s", got, wantURL)
		}
		if got := evalJS[string](t, ctx, `document.querySelector("[data-race-link=present]").getAttribute("href")`); !strings.Contains(got, "scenario=fencing") || !strings.Contains(got, wantURL) {
			t.Errorf("presenter link = %q; want scenario=fencing and %s", got, wantURL)
		}
		if got := evalJS[string](t, ctx, `document.querySelector("[data-race]").dataset.outcomes`); !strings.Contains(got, wantOutcome) {
			t.Errorf("outcomes = %q; want %s", got, wantOutcome)
		}
	}
	check("fencing=true", "stale-write-rejected", "race-scenario")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-race-form] input[name=fencing]`))); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, ctx, `location.search.includes("fencing=false")`)
	check("fencing=false", "stale-write-accepted", "race-fencing")
	// A setting refused is said above the settings, and the run on
	// screen stays.
	evalJS[bool](t, ctx, `(() => { const s = document.querySelector("[data-race-form] input[name=ttl_ms]"); s.value = "5"; s.dispatchEvent(new Event("change", {bubbles: true})); return true; })()`)
	browsertest.WaitFor(t, ctx, `!document.querySelector("[data-race-error]").hidden`)
	if got := evalJS[string](t, ctx, `document.querySelector("[data-race-error]").textContent`); !strings.Contains(strings.ToLower(got), "ttl_ms = 5") {
		t.Errorf("a TTL of 5 ms: the error says %q", got)
	}
	if got := evalJS[string](t, ctx, `document.querySelector("[data-race]").dataset.outcomes`); !strings.Contains(got, "stale-write-accepted") {
		t.Errorf("after a setting refused the outcomes are %q; want the run on screen's", got)
	}
	evalJS[bool](t, ctx, `(() => { const s = document.querySelector("[data-race-form] input[name=ttl_ms]"); s.value = "10000"; s.dispatchEvent(new Event("change", {bubbles: true})); return true; })()`)
	browsertest.WaitFor(t, ctx, `document.querySelector("[data-race-error]").hidden`)
	// The address alone reproduces the run.
	url := evalJS[string](t, ctx, `location.href`)
	browsertest.Open(t, ctx, url, 1280, 900)
	if got := evalJS[string](t, ctx, `document.querySelector("[data-race]").dataset.outcomes`); !strings.Contains(got, "stale-write-accepted") {
		t.Errorf("reloading %s: outcomes %q", url, got)
	}
}

// TestRaceLessonSettingsUpdate changes a setting of the lesson's race
// with JavaScript on, and checks that the lesson's widget is updated in
// place with its own parts (its ids, its title), that the link to the
// race page follows the run, and that the lesson's address stays.
func TestRaceLessonSettingsUpdate(t *testing.T) {
	ts := newTestServer(t)
	ctx := browsertest.New(t)
	browsertest.Open(t, ctx, ts.URL+"/topics/distributed-locks", 1280, 900)
	browsertest.WaitFor(t, ctx, `document.querySelector("[data-race-stage] .race-timeline") !== null`)
	evalJS[bool](t, ctx, `(() => { window.stayed = true; const s = document.querySelector("#race-lesson-pause"); s.value = "2000"; s.dispatchEvent(new Event("change", {bubbles: true})); return true; })()`)
	browsertest.WaitFor(t, ctx, `document.querySelector("[data-race]").dataset.outcomes === "safe"`)
	if !evalJS[bool](t, ctx, `window.stayed === true && location.pathname === "/topics/distributed-locks" && location.search === ""`) {
		t.Errorf("the lesson's address is %q; want the lesson, not loaded again", evalJS[string](t, ctx, `location.href`))
	}
	if got := evalJS[string](t, ctx, `document.querySelector("[data-race-head]").textContent`); got != "See it happen: A pause longer than the TTL" {
		t.Errorf("the lesson's race is titled %q", got)
	}
	if got := evalJS[string](t, ctx, `document.querySelector("[data-race-setup]").getAttribute("aria-labelledby")`); got != "race-lesson-setup-title" {
		t.Errorf("the setup is labelled by %q; want the lesson widget's race-lesson-setup-title", got)
	}
	if got := evalJS[string](t, ctx, `[...document.querySelectorAll("[data-race-setup] li")].map(li => li.textContent).join(" ")`); !strings.Contains(got, "freezes for 2 s") {
		t.Errorf("the setup says %q; want the pause of 2 s", got)
	}
	if got := evalJS[string](t, ctx, `document.querySelector("[data-race-link=page]").getAttribute("href")`); !strings.HasPrefix(got, "/race?") || !strings.Contains(got, "pause_ms=2000") {
		t.Errorf("the link to the race page is %q; want the run with pause_ms=2000", got)
	}
	if n := evalJS[int](t, ctx, `document.querySelectorAll("#race-title, #race-form, [data-race-fault]").length`); n != 0 {
		t.Errorf("the lesson's widget got %d parts of the race page's", n)
	}
}

// TestRacePrediction ticks outcomes, plays the run to the end and checks
// that each ticked outcome and each outcome that happened is judged.
func TestRacePrediction(t *testing.T) {
	ts := newTestServer(t)
	ctx := browsertest.New(t)
	browsertest.ColorScheme(t, ctx, "light")
	happened := wantOutcomes(t, "gc-pause")
	ticked := []string{"two-holders", "stale-write-rejected"}
	browsertest.Open(t, ctx, ts.URL+"/race?scenario=gc-pause", 1280, 900)
	browsertest.WaitFor(t, ctx, `document.querySelector("[data-race-stage] .race-timeline") !== null`)
	acts := []chromedp.Action[chromedp.Void]{}
	for _, id := range ticked {
		acts = append(acts, chromedp.Click(chromedp.CSS(`[data-race-predict] input[value="`+id+`"]`)))
	}
	acts = append(acts, chromedp.SetValue(chromedp.CSS(`[data-act=speed]`), "4"), chromedp.Click(chromedp.CSS(`[data-act=play]`)))
	if err := chromedp.Do(ctx, acts...); err != nil {
		t.Fatal(err)
	}
	browsertest.Screenshot(t, ctx, "race-predict-playing-1280")
	browsertest.WaitFor(t, ctx, `!document.querySelector("[data-race-result]").hidden`)
	browsertest.ElementScreenshot(t, ctx, "[data-race]", "race-predict-judged-1280")
	for _, id := range append(slices.Clone(ticked), happened...) {
		cls := evalJS[string](t, ctx, fmt.Sprintf(`(document.querySelector('[data-judged=%q]') || {}).className || ""`, id))
		text := evalJS[string](t, ctx, fmt.Sprintf(`(document.querySelector('[data-judged=%q]') || {}).textContent || ""`, id))
		right := slices.Contains(ticked, id) && slices.Contains(happened, id)
		want := "prediction-wrong"
		if right {
			want = "prediction-right"
		}
		if cls != want {
			t.Errorf("outcome %s judged %q (%q); want %s", id, cls, text, want)
		}
	}
	browsertest.RequireNoSerious(t, browsertest.Axe(t, ctx), "/race after a prediction")
}

// TestRaceFaultAtPlayhead steps into the normal case, adds a long pause of
// client 1 at the playhead, and checks that the run is replayed with an
// unsafe outcome and the fault in the address.
func TestRaceFaultAtPlayhead(t *testing.T) {
	ts := newTestServer(t)
	ctx := browsertest.New(t)
	browsertest.Open(t, ctx, ts.URL+"/race?scenario=normal", 1280, 900)
	browsertest.WaitFor(t, ctx, `document.querySelector("[data-race-stage] .race-timeline") !== null`)
	if got := evalJS[string](t, ctx, `document.querySelector("[data-race]").dataset.outcomes`); got != "safe" {
		t.Fatalf("the normal case: outcomes %q; want safe", got)
	}
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-act=forward]`)),
		chromedp.Click(chromedp.CSS(`[data-act=forward]`)),
	); err != nil {
		t.Fatal(err)
	}
	at := evalJS[string](t, ctx, `document.querySelector("[data-race-fault-at]").value`)
	if at == "0" {
		t.Errorf("the fault's time did not follow the playhead")
	}
	// A pause of 0 ms is refused, said next to the fields, and not kept.
	if err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`[data-race-fault-kind]`), "pause"),
		chromedp.SetValue(chromedp.CSS(`[data-race-fault-target]`), "client1"),
		chromedp.SetValue(chromedp.CSS(`[data-race-fault-arg]`), "0"),
		chromedp.Click(chromedp.CSS(`[data-race-add-fault]`)),
	); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, ctx, `[...document.querySelectorAll("[data-race-fault] [role=alert]")].some(p => !p.hidden && p.textContent.includes("0 ms"))`)
	if n := evalJS[int](t, ctx, `document.querySelectorAll("[data-race-fault-list] li").length`); n != 0 {
		t.Errorf("a refused fault is listed (%d faults)", n)
	}
	if err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`[data-race-fault-arg]`), "15000"),
		chromedp.Click(chromedp.CSS(`[data-race-add-fault]`)),
	); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, ctx, `location.search.includes("fault=pause")`)
	if n := evalJS[int](t, ctx, `document.querySelectorAll("[data-race-fault-list] li").length`); n != 1 {
		t.Errorf("%d faults listed; want 1", n)
	}
	browsertest.WaitFor(t, ctx, `document.querySelector("[data-race]").dataset.outcomes !== "safe"`)
	if got := evalJS[string](t, ctx, `location.search`); !strings.Contains(got, "fault=pause%3Aclient1%3A"+at+"%3A15000") {
		t.Errorf("address %q lacks the fault at %s ms", got, at)
	}
	browsertest.Screenshot(t, ctx, "race-fault-1280")
	if got := partsUnlikePage(t, ctx); got != "" {
		t.Errorf("with the fault added, the widget's parts are not the server's for the run:\n%s", got)
	}
	// Its Remove button runs the scenario again without it; the focus
	// goes back to the fault form.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-race-drop="0"]`))); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, ctx, `!location.search.includes("fault=") && document.querySelector("[data-race]").dataset.outcomes === "safe"`)
	if n := evalJS[int](t, ctx, `document.querySelectorAll("[data-race-fault-list] li").length`); n != 0 {
		t.Errorf("%d faults listed after removing the only one", n)
	}
	if got := evalJS[string](t, ctx, `document.activeElement.getAttribute("name")`); got != "fault_kind" {
		t.Errorf("after removing a fault the focus is on %q; want the fault's kind", got)
	}
	if got := partsUnlikePage(t, ctx); got != "" {
		t.Errorf("with the fault removed, the widget's parts are not the server's for the run:\n%s", got)
	}
}

// TestRacePresenterView opens the projector view at 1920x1080 and checks
// that the timeline, Play and the narration are on the first screen, that
// the keyboard works at once (Space plays), and that it is accessible.
func TestRacePresenterView(t *testing.T) {
	ts := newTestServer(t)
	ctx := browsertest.New(t)
	for _, sc := range []string{"fencing", "redlock-crash", "failover"} {
		for _, scheme := range []string{"dark", "light"} {
			t.Run(sc+"-"+scheme, func(t *testing.T) {
				browsertest.ColorScheme(t, ctx, scheme)
				browsertest.Open(t, ctx, ts.URL+"/race/present?scenario="+sc, 1920, 1080)
				browsertest.WaitFor(t, ctx, `document.querySelector("[data-race-stage] .race-timeline") !== null`)
				browsertest.WaitFor(t, ctx, `document.activeElement === document.querySelector("[data-race]")`)
				browsertest.Screenshot(t, ctx, "race-present-"+sc+"-start-1920-"+scheme)
				for _, sel := range []string{"[data-race-stage] .race-timeline", "[data-act=play]", "[data-race-narration]"} {
					bottom := evalJS[float64](t, ctx, fmt.Sprintf(`document.querySelector(%q).getBoundingClientRect().bottom`, sel))
					if bottom > 1080 {
						t.Errorf("%s ends at %.0f px, below the first screen", sel, bottom)
					}
				}
				if err := chromedp.Do(ctx, chromedp.KeyEvent(" ")); err != nil {
					t.Fatal(err)
				}
				browsertest.WaitFor(t, ctx, `document.querySelector("[data-act=play]").textContent === "Pause"`)
				if err := chromedp.Do(ctx, chromedp.KeyEvent(" ")); err != nil {
					t.Fatal(err)
				}
				for range 60 {
					if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.ArrowRight)); err != nil {
						t.Fatal(err)
					}
				}
				browsertest.WaitFor(t, ctx, `!document.querySelector("[data-race-result]").hidden`)
				browsertest.Screenshot(t, ctx, "race-present-"+sc+"-1920-"+scheme)
				browsertest.RequireNoSerious(t, browsertest.Axe(t, ctx), "/race/present "+sc)
			})
		}
	}
}

// TestRaceScreenshots looks at the race at 390, 1280 and 1920 px, light and
// dark, with and without JavaScript, halfway through, with axe-core on
// each, and checks that nothing is wider than the screen. Each screen
// width, with or without the script, has a browser of its own (two run at
// once), and each page is opened once and looked at in both colour
// schemes: the scheme is a media feature the page follows as it changes,
// with nothing to load or draw again.
func TestRaceScreenshots(t *testing.T) {
	ts := newTestServer(t)
	pages := []struct{ name, path string }{
		{"gc-pause", "/race?scenario=gc-pause"},
		{"release-del", "/race?scenario=release-del"},
		{"redlock-clock-jump", "/race?scenario=redlock-clock-jump"},
		{"failover", "/race?scenario=failover&fencing=true"},
		{"watchdog", "/race?scenario=watchdog"},
		{"lesson", "/topics/distributed-locks"},
	}
	for _, js := range []bool{true, false} {
		for _, width := range []int64{390, 1280, 1920} {
			t.Run(fmt.Sprintf("%d-js=%v", width, js), func(t *testing.T) {
				t.Parallel()
				ctx := browsertest.New(t)
				browsertest.Scripts(t, ctx, js)
				for _, pg := range pages {
					if pg.name == "lesson" && width == 1920 {
						continue
					}
					browsertest.Open(t, ctx, ts.URL+pg.path, width, 900)
					if js {
						browsertest.WaitFor(t, ctx, `document.querySelector("[data-race-stage] .race-timeline") !== null`)
						evalJS[bool](t, ctx, `(() => { const s = document.querySelector("[data-act=scrub]"); s.value = 600; s.dispatchEvent(new Event("input")); return true; })()`)
					}
					for _, scheme := range []string{"light", "dark"} {
						name := fmt.Sprintf("race-%s-%d-%s", pg.name, width, scheme)
						if !js {
							name += "-nojs"
						}
						t.Run(name, func(t *testing.T) {
							browsertest.ColorScheme(t, ctx, scheme)
							if overflow := evalJS[int64](t, ctx, `document.documentElement.scrollWidth - window.innerWidth`); overflow > 0 {
								t.Errorf("%d px too wide", overflow)
							}
							browsertest.ElementScreenshot(t, ctx, "[data-race]", name)
							// axe-core is a script: it runs with scripts
							// on, on the page as it was without them.
							if !js {
								browsertest.Scripts(t, ctx, true)
							}
							browsertest.RequireNoSerious(t, browsertest.Axe(t, ctx), name)
							if !js {
								browsertest.Scripts(t, ctx, false)
							}
						})
					}
				}
			})
		}
	}
}
