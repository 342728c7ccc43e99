package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/locklab/locklab/internal/browsertest"
	"github.com/locklab/locklab/race"
)

// outcomeWordsJS is every outcome's label and short words, lower case, as
// a JavaScript array.
func outcomeWordsJS(t *testing.T) string {
	t.Helper()
	var words []string
	for _, o := range race.AllOutcomes() {
		words = append(words, strings.ToLower(o.Label()), strings.ToLower(o.Short()))
	}
	b, err := json.Marshal(words)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// outcomeWordsShown lists the outcome words in the race widget's text on
// screen, the prediction's choices left out: the text of every element
// the browser shows (not in a closed details, not hidden, not an SVG
// title).
func outcomeWordsShown(t *testing.T) string {
	return `(() => {
	const words = ` + outcomeWordsJS(t) + `;
	const root = document.querySelector("[data-race]");
	const choices = root.querySelector("[data-race-predict] fieldset");
	const out = [];
	const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
	for (let n = walk.nextNode(); n; n = walk.nextNode()) {
		const el = n.parentElement;
		if (!el || choices.contains(el) || el.closest("title") || !el.checkVisibility({ visibilityProperty: true }) || el.getClientRects().length === 0) continue;
		const text = n.textContent.toLowerCase();
		for (const w of words) if (text.includes(w)) out.push(JSON.stringify(w) + " in " + JSON.stringify(n.textContent.trim().slice(0, 80)));
	}
	return out.join("; ");
})()`
}

// widths are the screens the race is checked on: a phone, a laptop, a
// projector.
var widths = []int64{390, 1280, 1920}

// TestRaceNoOutcomeBeforeTheEnd opens every scenario, with and without
// JavaScript, on a phone, a laptop and a projector, and checks that no
// outcome's words are on screen before the end (the prediction's choices
// aside), while the setup is, in the words of Setup; then that the end,
// reached by playing or by asking, shows what happened.
func TestRaceNoOutcomeBeforeTheEnd(t *testing.T) {
	ts := newTestServer(t)
	ctx := browsertest.New(t)
	for _, js := range []bool{true, false} {
		browsertest.Scripts(t, ctx, js)
		for _, w := range widths {
			for _, in := range race.List() {
				name := fmt.Sprintf("%s-%d-js=%v", in.ID, w, js)
				t.Run(name, func(t *testing.T) {
					browsertest.Open(t, ctx, ts.URL+"/race?scenario="+in.ID, w, 900)
					if js {
						browsertest.WaitFor(t, ctx, `document.querySelector("[data-race-stage] .race-timeline") !== null`)
					}
					if got := evalJS[string](t, ctx, outcomeWordsShown(t)); got != "" {
						t.Errorf("before the end: %s", got)
					}
					setup := evalJS[[]string](t, ctx, `[...document.querySelectorAll("[data-race-setup] li")].filter(li => li.checkVisibility()).map(li => li.textContent)`)
					if !slices.Equal(setup, in.Setup) {
						t.Errorf("setup on screen %q; want %q", setup, in.Setup)
					}
					if js {
						if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-act=forward]`)), chromedp.KeyEvent(kb.End)); err != nil {
							t.Fatal(err)
						}
						browsertest.WaitFor(t, ctx, `!document.querySelector("[data-race-result]").hidden`)
					} else {
						if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-race-predict-nojs] button`))); err != nil {
							t.Fatal(err)
						}
						browsertest.WaitFor(t, ctx, `location.search.includes("show=1") && document.querySelector("[data-race-story]").open`)
					}
					shown := evalJS[[]string](t, ctx, `[...document.querySelectorAll("[data-race-outcomes] li strong")].filter(s => s.checkVisibility()).map(s => s.textContent)`)
					var want []string
					for _, o := range wantOutcomes(t, in.ID) {
						want = append(want, race.Outcome(o).Label())
					}
					if !slices.Equal(shown, want) {
						t.Errorf("at the end the outcomes shown are %q; want %q", shown, want)
					}
				})
			}
		}
	}
}

// TestRaceOwnFaultPredicted adds a fault to the normal case, with and
// without JavaScript, and checks that the run is a new round: the fault
// in the setup, in words, no outcome on screen, the prediction asked
// again; and that a prediction of its effect is judged outcome by
// outcome.
func TestRaceOwnFaultPredicted(t *testing.T) {
	ts := newTestServer(t)
	ctx := browsertest.New(t)
	const faultText = "At 0.5 s, client 1 pauses for 12 s."
	ticked := []string{"two-holders", "stale-write-rejected"}
	judged := map[string]string{"two-holders": "prediction-right", "stale-write-accepted": "prediction-wrong", "stale-write-rejected": "prediction-wrong"}
	check := func(t *testing.T, name string) {
		t.Helper()
		for id, want := range judged {
			cls := evalJS[string](t, ctx, fmt.Sprintf(`(document.querySelector('[data-judged=%q]') || {}).className || ""`, id))
			text := evalJS[string](t, ctx, fmt.Sprintf(`(document.querySelector('[data-judged=%q]') || {}).textContent || ""`, id))
			if cls != want || !strings.Contains(text, race.Outcome(id).Label()) {
				t.Errorf("%s: %s judged %q: %q; want %s, with its label", name, id, cls, text, want)
			}
		}
		browsertest.RequireNoSerious(t, browsertest.Axe(t, ctx), name)
	}
	addFault := func(t *testing.T) {
		t.Helper()
		if err := chromedp.Do(ctx,
			chromedp.SetValue(chromedp.CSS(`[data-race-fault-kind]`), "pause"),
			chromedp.SetValue(chromedp.CSS(`[data-race-fault-target]`), "client1"),
			chromedp.SetValue(chromedp.CSS(`[data-race-fault-at]`), "500"),
			chromedp.SetValue(chromedp.CSS(`[data-race-fault-arg]`), "12000"),
			chromedp.Click(chromedp.CSS(`[data-race-add-fault]`)),
		); err != nil {
			t.Fatal(err)
		}
		browsertest.WaitFor(t, ctx, fmt.Sprintf(`[...document.querySelectorAll("[data-race-setup] li")].some(li => li.textContent === %q)`, faultText))
		if got := evalJS[string](t, ctx, outcomeWordsShown(t)); got != "" {
			t.Errorf("after adding a fault, before the end: %s", got)
		}
	}
	tick := func(t *testing.T) {
		t.Helper()
		for _, id := range ticked {
			if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-race-predict] input[value="`+id+`"]`))); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Run("js", func(t *testing.T) {
		browsertest.Open(t, ctx, ts.URL+"/race?scenario=normal", 1280, 900)
		browsertest.WaitFor(t, ctx, `document.querySelector("[data-race-stage] .race-timeline") !== null`)
		// Play the normal case to the end first: adding a fault starts a
		// new round.
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-act=skip]`)), chromedp.KeyEvent(kb.End)); err != nil {
			t.Fatal(err)
		}
		browsertest.WaitFor(t, ctx, `!document.querySelector("[data-race-result]").hidden`)
		addFault(t)
		browsertest.WaitFor(t, ctx, `document.querySelector("[data-race-result]").hidden`)
		if !evalJS[bool](t, ctx, `document.querySelector("[data-race-predict]").open && [...document.querySelectorAll("[data-race-predict] input[type=checkbox]")].every(c => !c.disabled && !c.checked)`) {
			t.Fatal("after adding a fault the prediction is not asked again")
		}
		if got := evalJS[string](t, ctx, `document.querySelector("[data-race-clock]").textContent`); got != "0 s" {
			t.Errorf("after adding a fault the playhead is at %s; want the start", got)
		}
		tick(t)
		if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(`[data-act=speed]`), "4"), chromedp.Click(chromedp.CSS(`[data-act=play]`))); err != nil {
			t.Fatal(err)
		}
		browsertest.WaitFor(t, ctx, `document.querySelectorAll("[data-judged]").length === 3`)
		browsertest.ElementScreenshot(t, ctx, "[data-race]", "race-own-fault-judged-1280")
		check(t, "/race with a fault of the learner's, judged")
	})
	t.Run("nojs", func(t *testing.T) {
		browsertest.Scripts(t, ctx, false)
		defer browsertest.Scripts(t, ctx, true)
		browsertest.Open(t, ctx, ts.URL+"/race?scenario=normal", 1280, 900)
		addFault(t)
		if evalJS[bool](t, ctx, `document.querySelector("[data-race-story]").open`) {
			t.Error("after adding a fault what happened is unfolded before the learner asks")
		}
		tick(t)
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-race-predict-nojs] button`))); err != nil {
			t.Fatal(err)
		}
		browsertest.WaitFor(t, ctx, `document.querySelectorAll("[data-judged]").length === 3`)
		q, err := url.ParseQuery(strings.TrimPrefix(evalJS[string](t, ctx, `location.search`), "?"))
		if err != nil || q.Get("fault") != "pause:client1:500:12000" {
			t.Errorf("the prediction form sent %v; want the run's fault", q)
		}
		browsertest.Screenshot(t, ctx, "race-own-fault-judged-nojs-1280")
		browsertest.Scripts(t, ctx, true)
		check(t, "/race without JavaScript, a fault of the learner's, judged")
	})
}

// drawJS draws a made-up run with LockLabRace.draw in a new stage on the
// page, as the lab draws its counterexamples, shows it all, and returns
// what the test reads of it.
const drawJS = `(() => {
	const stage = document.createElement("div");
	stage.className = "race-stage";
	stage.id = "synthetic";
	document.querySelector("[data-race]").prepend(stage);
	const node = (holder, ttl) => [{ node: 1, up: true, holder: holder, ttl_ms: ttl }];
	const run = {
		id: "lab", title: "a made-up run", nodes: 1, params: { ttl_ms: 1000, fencing: false },
		events: [
			{ t_ms: 0, actor: "client 1", kind: "acquire-ok", text: "Client 1 runs SET without PX.", nodes: node("client 1", -1), holding: ["client 1"] },
			{ t_ms: 400, actor: "client 1", kind: "client-crash", text: "Client 1 crashes.", nodes: node("client 1", -1) },
			{ t_ms: 900, actor: "client 2", kind: "acquire-fail", text: "Client 2 gets nil.", nodes: node("client 1", -1) },
			{ t_ms: 1400, actor: "redis", kind: "still-locked", subject: "client 1", text: "The key is still there.", nodes: node("client 1", -1) },
		],
	};
	const outcomes = [
		{ id: "lock-never-freed", t_ms: 1400, event: 3, short: "lock never freed", label: "A stuck or crashed holder's lock is never freed" },
		{ id: "made-up-outcome", t_ms: 900, event: 2 },
	];
	const T = 1500;
	const view = window.LockLabRace.draw(stage, run, T, outcomes);
	view.reveal(T);
	view.markers.forEach(m => { m.style.display = ""; });
	const svg = stage.querySelector("svg");
	const hold = svg.querySelector("rect.hold");
	const texts = [...svg.querySelectorAll("text")].filter(x => x.checkVisibility()).map(x => x.textContent);
	return {
		noTTL: hold !== null && hold.classList.contains("no-ttl"),
		from: hold ? Number(hold.getAttribute("x")) : -1,
		width: hold ? Number(hold.getAttribute("width")) : -1,
		start: view.x(0), end: view.x(T),
		texts: texts,
		crash: svg.querySelectorAll(".marker.kind-client-crash .m-cross").length,
		crashedLane: svg.querySelectorAll("rect.down").length,
	};
})()`

// drawn is what drawJS reads of its drawing.
type drawn struct {
	NoTTL              bool `json:"noTTL"`
	From, Width        float64
	Start, End         float64
	Texts              []string
	Crash, CrashedLane int
}

// TestRaceDrawsWhatHappened draws a run the way the lab does, with a key
// set without a TTL and a client that crashes: the key is drawn from its
// SET to the end of the run and marked "no TTL", the crash has its mark
// and its lane is crossed out, the outcome is flagged with its short
// words, and an outcome with no words gets no raw id.
func TestRaceDrawsWhatHappened(t *testing.T) {
	ts := newTestServer(t)
	ctx := browsertest.New(t)
	for _, w := range widths {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			browsertest.Open(t, ctx, ts.URL+"/race", w, 900)
			browsertest.WaitFor(t, ctx, `window.LockLabRace && document.querySelector("[data-race-stage] .race-timeline") !== null`)
			got := evalJS[drawn](t, ctx, drawJS)
			if !got.NoTTL || got.From != got.Start || got.From+got.Width < got.End-0.5 {
				t.Errorf("the key without a TTL: %+v; want a no-ttl bar from x %.1f to the end, x %.1f", got, got.Start, got.End)
			}
			for _, want := range []string{"no TTL", "crashed", "lock never freed"} {
				if !slices.Contains(got.Texts, want) {
					t.Errorf("the drawing's text %q lacks %q", got.Texts, want)
				}
			}
			if slices.ContainsFunc(got.Texts, func(s string) bool {
				return strings.Contains(s, "made-up-outcome") || strings.Contains(s, "lock-never-freed")
			}) {
				t.Errorf("the drawing shows a raw outcome id: %q", got.Texts)
			}
			if got.Crash != 1 || got.CrashedLane != 1 {
				t.Errorf("client 1's crash: %d marks, %d crossed-out lanes; want 1 and 1", got.Crash, got.CrashedLane)
			}
			browsertest.ElementScreenshot(t, ctx, "#synthetic", fmt.Sprintf("race-no-ttl-%d", w))
		})
	}
}

// labelsOverlapJS lists the pairs of labels of the drawing that overlap,
// and the lane names the playhead crosses, with everything shown.
const labelsOverlapJS = `(() => {
	const svg = document.querySelector("[data-race-stage] .race-timeline");
	const texts = [...svg.querySelectorAll("text")].filter(x => x.checkVisibility());
	const boxes = texts.map(x => [x, x.getBoundingClientRect()]);
	const out = [];
	for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
		const [a, p] = boxes[i], [b, q] = boxes[j];
		const dx = Math.min(p.right, q.right) - Math.max(p.left, q.left), dy = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top);
		if (dx > 1 && dy > 1) out.push(JSON.stringify(a.textContent) + " and " + JSON.stringify(b.textContent));
	}
	return out.join("; ");
})()`

const playheadOverNamesJS = `(() => {
	const svg = document.querySelector("[data-race-stage] .race-timeline");
	const lines = [...svg.querySelectorAll(".playhead line")].map(l => l.getBoundingClientRect());
	return [...svg.querySelectorAll(".lane-label")].filter(n => {
		const r = n.getBoundingClientRect();
		return lines.some(l => l.right >= r.left && l.left <= r.right && l.bottom > r.top && l.top < r.bottom);
	}).map(n => n.textContent).join(", ");
})()`

// TestRaceLabelsClear plays every scenario, and a few runs with faults,
// to the end on a phone, a laptop and a projector, and checks that no two
// labels of the drawing overlap; and that the playhead never covers a
// lane's name, at the start or on its way.
func TestRaceLabelsClear(t *testing.T) {
	ts := newTestServer(t)
	var paths []string
	for _, in := range race.List() {
		paths = append(paths, "/race?scenario="+in.ID)
	}
	paths = append(paths,
		"/race?scenario=fencing&fault=crash:redis:3000:500",
		"/race?scenario=failover&fencing=true",
		"/race?scenario=release-del&fencing=true",
		"/race?scenario=normal&fault=pause:client1:500:12000&fault=clock-jump:redis:1000:9500",
		"/race?scenario=redlock-crash&restart_delay_ms=11000&fault=crash:node2:1200:500",
	)
	for _, w := range widths {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			ctx := browsertest.New(t)
			for _, p := range paths {
				t.Run(strings.TrimPrefix(p, "/race?"), func(t *testing.T) {
					browsertest.Open(t, ctx, ts.URL+p, w, 900)
					browsertest.WaitFor(t, ctx, `document.querySelector("[data-race-stage] .race-timeline") !== null`)
					for _, at := range []int{0, 10, 500} {
						scrubTo(t, ctx, at)
						if got := evalJS[string](t, ctx, playheadOverNamesJS); got != "" {
							t.Errorf("at %d/1000 the playhead covers the lane names %s", at, got)
						}
					}
					evalJS[bool](t, ctx, `(document.querySelector("[data-race]").focus(), true)`)
					if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.End)); err != nil {
						t.Fatal(err)
					}
					browsertest.WaitFor(t, ctx, `!document.querySelector("[data-race-result]").hidden`)
					if got := evalJS[string](t, ctx, labelsOverlapJS); got != "" {
						t.Errorf("at the end these labels overlap: %s", got)
					}
				})
			}
		})
	}
}

// scrubTo moves the time slider to at (of 1000) as a learner drags it.
func scrubTo(t *testing.T, ctx context.Context, at int) {
	t.Helper()
	evalJS[bool](t, ctx, fmt.Sprintf(`(() => { const s = document.querySelector("[data-act=scrub]"); s.value = %d; s.dispatchEvent(new Event("input")); return true; })()`, at))
}

// TestRaceSliderSaysTheTime checks that the time slider speaks the time
// it shows, as it moves, and that the keys the help text names move the
// playhead: → and ← to the next and previous event, Home and End to the
// start and the end.
func TestRaceSliderSaysTheTime(t *testing.T) {
	ts := newTestServer(t)
	ctx := browsertest.New(t)
	browsertest.Open(t, ctx, ts.URL+"/race?scenario=gc-pause", 1280, 900)
	browsertest.WaitFor(t, ctx, `document.querySelector("[data-race-stage] .race-timeline") !== null`)
	said := func() (string, string) {
		return evalJS[string](t, ctx, `document.querySelector("[data-act=scrub]").getAttribute("aria-valuetext")`),
			evalJS[string](t, ctx, `document.querySelector("[data-race-clock]").textContent`)
	}
	if v, c := said(); v != "0 s" || c != "0 s" {
		t.Errorf("at the start the slider says %q, the clock %q; want 0 s", v, c)
	}
	scrubTo(t, ctx, 400)
	v, c := said()
	if v != c || v == "0 s" || !strings.HasSuffix(v, " s") {
		t.Errorf("after dragging the slider it says %q, the clock %q; want the same time, past 0 s", v, c)
	}
	help := evalJS[string](t, ctx, `document.querySelector(".race-keys").textContent`)
	for _, k := range []string{"Space", "←", "→", "previous or next event", "Home", "End"} {
		if !strings.Contains(help, k) {
			t.Errorf("the keys' help %q lacks %q", help, k)
		}
	}
	times := wantEventTimes(t, "gc-pause")
	evalJS[bool](t, ctx, `(document.querySelector("[data-race]").focus(), true)`)
	for _, tt := range []struct {
		key  string
		want string
	}{
		{kb.Home, "0 s"},
		{kb.ArrowRight, seconds1(times[1])},
		{kb.ArrowRight, seconds1(times[2])},
		{kb.ArrowLeft, seconds1(times[1])},
	} {
		if err := chromedp.Do(ctx, chromedp.KeyEvent(tt.key)); err != nil {
			t.Fatal(err)
		}
		if v, c := said(); v != tt.want || c != tt.want {
			t.Errorf("after %q the slider says %q, the clock %q; want %q", tt.key, v, c, tt.want)
		}
	}
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.End)); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, ctx, `!document.querySelector("[data-race-result]").hidden`)
}

// wantEventTimes is the distinct times of a scenario's events at its
// defaults, in ms.
func wantEventTimes(t *testing.T, id string) []int64 {
	t.Helper()
	i := slices.IndexFunc(race.List(), func(in race.Info) bool { return in.ID == id })
	tl, err := race.Run(id, race.List()[i].Defaults)
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, e := range tl.Events {
		if len(out) == 0 || out[len(out)-1] != e.AtMS {
			out = append(out, e.AtMS)
		}
	}
	return out
}

// seconds1 is the clock's reading of ms: tenths of a second, rounded down.
func seconds1(ms int64) string {
	return fmt.Sprintf("%g s", float64(ms/100)/10)
}
