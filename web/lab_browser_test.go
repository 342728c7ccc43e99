package web

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/locklab/locklab/internal/browsertest"
	"github.com/locklab/locklab/lab"
)

// TestLabInBrowser solves the plain-DEL challenge end to end, with the
// page's script and without it: load the broken recipe, check it, see
// no-foreign-release break and its counterexample (played on the race's
// player with the script, as a transcript without), fix the release,
// check again and see the challenge solved and counted. With the script
// each check stays on the page: the server's fragment takes the place of
// the error, the report and the challenges, and the focus moves to what
// changed. Screenshots at 390 and 1280 px, light and dark, and axe-core
// on each.
func TestLabInBrowser(t *testing.T) {
	ch, err := lab.ChallengeByID("plain-del")
	if err != nil {
		t.Fatal(err)
	}
	for _, js := range []bool{true, false} {
		name := map[bool]string{true: "js", false: "nojs"}[js]
		t.Run(name, func(t *testing.T) {
			ts := newTestServer(t)
			ctx := browsertest.New(t)
			browsertest.Scripts(t, ctx, js)
			browsertest.ColorScheme(t, ctx, "light")
			browsertest.Open(t, ctx, ts.URL+"/", 1280, 900)
			// From the home page to the challenge, as a learner goes.
			if err := follow(ctx, `a[href="/lab"]`, "[data-lab-form]"); err != nil {
				t.Fatalf("follow the home page's link to /lab: %v", err)
			}
			if err := follow(ctx, `a[href="/lab?challenge=plain-del"]`, "[data-lab-brief]"); err != nil {
				t.Fatalf("load the challenge: %v", err)
			}
			release, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS("#lab-release")))
			if err != nil || release != "DEL {key}" {
				t.Fatalf("release field = %q, %v; want the broken recipe's DEL {key}", release, err)
			}

			check := func() {
				t.Helper()
				if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("[data-lab-check]"))); err != nil {
					t.Fatalf("press Check it: %v", err)
				}
			}
			// A mark on the page's window, which a navigation would lose.
			if js {
				if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.labStayed = true`)); err != nil {
					t.Fatal(err)
				}
			}
			stayed := func() {
				t.Helper()
				if !js {
					return
				}
				if ok, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.labStayed === true && !document.querySelector("[data-lab-check]").disabled`)); !ok {
					t.Error("the check left the page (or left Check it disabled); want its result in place")
				}
			}
			// A line that cannot run is refused, naming it, and the field
			// is marked.
			acquire, _ := chromedp.Run(ctx, chromedp.Value(chromedp.CSS("#lab-acquire")))
			if err := setValue(ctx, "#lab-acquire", "SET {key} {tokn} NX PX {ttl}"); err != nil {
				t.Fatal(err)
			}
			check()
			browsertest.WaitFor(t, ctx, `document.querySelector("[data-lab-error]").textContent.startsWith("Acquire line 1") && document.querySelector("#lab-acquire").getAttribute("aria-invalid") === "true"`)
			if js {
				stayed()
				browsertest.WaitFor(t, ctx, `document.activeElement === document.querySelector("#lab-acquire") && document.querySelector("#lab-acquire").getAttribute("aria-describedby") === "lab-acquire-help lab-error"`)
			}
			if err := setValue(ctx, "#lab-acquire", acquire); err != nil {
				t.Fatal(err)
			}
			check()
			browsertest.WaitFor(t, ctx, `document.querySelector("[data-lab-passed]") && document.querySelector("[data-lab-passed]").getAttribute("data-lab-passed") === "false"`)
			if js {
				stayed()
				// The error is gone with the field's mark, and the focus is
				// on the report.
				browsertest.WaitFor(t, ctx, `document.querySelector("[data-lab-error]").hidden && !document.querySelector("#lab-acquire").hasAttribute("aria-invalid") && document.activeElement === document.querySelector("[data-lab-report]")`)
			}
			cx := `[data-lab-cx="no-foreign-release"]`
			steps, err := chromedp.Run(ctx, chromedp.Evaluate[int64](`document.querySelectorAll('`+cx+` [data-race-transcript] li').length`))
			if err != nil || steps == 0 {
				t.Fatalf("counterexample transcript has %d steps (%v); want some", steps, err)
			}
			if js {
				// The script checked through the API: the page stayed.
				if loc, _ := chromedp.Run(ctx, chromedp.Location()); !strings.Contains(loc, "check=1") {
					t.Errorf("location %s; want the check's link in the address", loc)
				}
				// The race's own player: its controls, speed and replay
				// included, drawn on the race's timeline.
				browsertest.WaitFor(t, ctx, `document.querySelector('`+cx+`').getAttribute("data-race-playing") === "ready" && document.querySelector('`+cx+` [data-act=speed]') !== null && document.querySelector('`+cx+` svg.race-timeline') !== null`)
				narration, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(cx+` [data-race-narration]`)))
				if !strings.HasPrefix(narration, "Press Play to watch this schedule break no-foreign-release") {
					t.Errorf("narration before playing = %q; want the server's invitation", narration)
				}
				// Play it step by step to the end, from the keyboard.
				if err := chromedp.Do(ctx, chromedp.Focus(chromedp.CSS(cx+` [data-act=forward]`))); err != nil {
					t.Fatal(err)
				}
				for i := 0; i <= int(steps); i++ {
					if err := chromedp.Do(ctx, chromedp.KeyEvent("\r")); err != nil {
						t.Fatal(err)
					}
				}
				browsertest.WaitFor(t, ctx, `document.querySelector('`+cx+`').getAttribute("data-race-playing") === "done"`)
				narration, _ = chromedp.Run(ctx, chromedp.Text(chromedp.CSS(cx+` [data-race-narration]`)))
				if !strings.HasPrefix(narration, "The end. What happened:") {
					t.Errorf("narration at the end = %q", narration)
				}
				browsertest.ElementScreenshot(t, ctx, cx, "lab-cx-played-1280")
				shown, _ := chromedp.Run(ctx, chromedp.Evaluate[int64](`[...document.querySelectorAll('`+cx+` svg.race-timeline .marker')].filter(m => m.style.display !== "none").length`))
				if shown != steps {
					t.Errorf("%d markers shown at the end; want %d, one per event", shown, steps)
				}
				// The transcript stays whole, the last line the current one.
				current, _ := chromedp.Run(ctx, chromedp.Evaluate[int64](`[...document.querySelectorAll('`+cx+` [data-race-transcript] li')].findIndex(li => li.getAttribute("aria-current") === "step")`))
				if hidden, _ := chromedp.Run(ctx, chromedp.Evaluate[int64](`document.querySelectorAll('`+cx+` [data-race-transcript] li[hidden]').length`)); hidden != 0 || current != steps-1 {
					t.Errorf("transcript: %d lines hidden, line %d current; want none hidden and the last (%d) current", hidden, current, steps-1)
				}
			} else {
				hidden, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('`+cx+` [data-race-stage]').hidden`))
				if !hidden {
					t.Error("without the script the stage should stay hidden")
				}
			}
			for _, vp := range []struct {
				width  int64
				scheme string
			}{{390, "light"}, {390, "dark"}, {1280, "light"}, {1280, "dark"}} {
				shot(t, ctx, fmt.Sprintf("lab-broken-%s-%d-%s", name, vp.width, vp.scheme), vp.width, vp.scheme, js)
			}
			browsertest.ColorScheme(t, ctx, "light")

			// A "fix" that is no lock is not solved: a release that never
			// releases, and then an acquire that never takes the lock,
			// whose properties are not judged rather than held.
			if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS("#lab-release"), "PING")); err != nil {
				t.Fatal(err)
			}
			check()
			browsertest.WaitFor(t, ctx, `document.querySelector("[data-lab-passed]").getAttribute("data-lab-passed") === "false" && document.querySelector("[data-lab-passed]").textContent.includes("does not work as a lock")`)
			if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS("#lab-acquire"), "GET {key}")); err != nil {
				t.Fatal(err)
			}
			check()
			browsertest.WaitFor(t, ctx, `document.querySelectorAll('[data-status="not-judged"]').length === 4`)
			unjudged, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('[data-status] h3')].map(h => h.textContent.replace(/\s+/g, " ").trim()).join("; ")`))
			if strings.Count(unjudged, "not judged") != 4 || strings.Contains(unjudged, "held") {
				t.Errorf("a recipe that never takes the lock: %q; want every property not judged", unjudged)
			}
			shot(t, ctx, "lab-unjudged-"+name+"-390-light", 390, "light", js)
			if err := setValue(ctx, "#lab-acquire", acquire); err != nil {
				t.Fatal(err)
			}

			// The fix: compare-and-delete in one script.
			if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS("#lab-release"), strings.Join(ch.Fix.Release, "\n"))); err != nil {
				t.Fatal(err)
			}
			check()
			browsertest.WaitFor(t, ctx, `document.querySelector("[data-lab-passed]").getAttribute("data-lab-passed") === "true"`)
			stayed()
			// The challenges came with the report: this one is marked solved.
			browsertest.WaitFor(t, ctx, `document.querySelector('[data-challenge="plain-del"].lab-solved .lab-solved-badge') !== null`)
			if verdict, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("[data-lab-passed]"))); !strings.Contains(verdict, "Saved with your progress.") {
				t.Errorf("verdict = %q; want it saved with the progress", verdict)
			}
			solved, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("[data-lab-solved-count]")))
			if !strings.HasPrefix(solved, "1 of "+strconv.Itoa(len(lab.Challenges()))) {
				t.Errorf("solved count = %q; want 1 of %d", solved, len(lab.Challenges()))
			}
			for _, vp := range []struct {
				width  int64
				scheme string
			}{{390, "light"}, {1280, "dark"}} {
				shot(t, ctx, fmt.Sprintf("lab-solved-%s-%d-%s", name, vp.width, vp.scheme), vp.width, vp.scheme, js)
			}
			// Saved with the progress: a fresh page still shows it solved.
			browsertest.Open(t, ctx, ts.URL+"/lab", 1280, 900)
			if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int64](`document.querySelectorAll('[data-challenge="plain-del"].lab-solved').length`)); n != 1 {
				t.Error("after a reload the challenge is not marked solved")
			}
		})
	}
}

// shot takes a screenshot of the page as it is at a width and colour
// scheme, checks nothing is wider than the viewport, and runs axe-core.
func shot(t *testing.T, ctx context.Context, name string, width int64, scheme string, js bool) {
	t.Helper()
	browsertest.ColorScheme(t, ctx, scheme)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 900)); err != nil {
		t.Fatal(err)
	}
	overflow, err := chromedp.Run(ctx, chromedp.Evaluate[int64](`document.documentElement.scrollWidth - window.innerWidth`))
	if err != nil || overflow > 0 {
		t.Errorf("%s: page is %d px wider than the viewport (err %v)", name, overflow, err)
	}
	browsertest.Screenshot(t, ctx, name)
	// Axe runs as a script: let it, on a page that loaded without any.
	if !js {
		browsertest.Scripts(t, ctx, true)
		defer browsertest.Scripts(t, ctx, false)
	}
	browsertest.RequireNoSerious(t, browsertest.Axe(t, ctx), name)
}

// setValue sets a field's value. Without JavaScript the form's answer is
// a new document, which Chrome may still be settling when the field is
// found ("No node with given id found"); it is tried again on the
// document as it then is, at most three times.
func setValue(ctx context.Context, sel, value string) error {
	var err error
	for range 3 {
		err = chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(sel), value))
		if err == nil || !strings.Contains(err.Error(), "No node with given id") && !strings.Contains(err.Error(), "Could not find node") {
			return err
		}
	}
	return err
}

// follow clicks the link and waits for an element of the page it leads
// to. A click that lands while the previous navigation still replaces the
// document finds its node gone ("Could not find node"); it is tried again
// on the new document, at most three times.
func follow(ctx context.Context, link, then string) error {
	var err error
	for range 3 {
		err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(link)), chromedp.WaitVisible(chromedp.CSS(then)))
		if err == nil || !strings.Contains(err.Error(), "Could not find node") {
			return err
		}
	}
	return err
}
