package web

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/locklab/locklab/internal/browsertest"
)

// TestLabNodesAndCompareInBrowser, with the page's script and without:
// the nodes selector runs the recipe as a Redlock client on three nodes
// and stays chosen; "Compare with…" checks the lesson's lock and the
// plain-DEL challenge's recipe on the same schedules and shows where
// they differ, the telling schedule ready to play with the script, as a
// transcript without. axe-core on the comparison.
func TestLabNodesAndCompareInBrowser(t *testing.T) {
	for _, js := range []bool{true, false} {
		name := map[bool]string{true: "js", false: "nojs"}[js]
		t.Run(name, func(t *testing.T) {
			ts := newTestServer(t)
			ctx := browsertest.New(t)
			browsertest.Scripts(t, ctx, js)
			browsertest.ColorScheme(t, ctx, "light")
			browsertest.Open(t, ctx, ts.URL+"/lab", 1280, 900)

			for _, a := range []chromedp.Action[chromedp.Void]{
				chromedp.SetValue(chromedp.CSS("#lab-nodes"), "3"),
				chromedp.SetValue(chromedp.CSS("#lab-clock-jumps"), "none"),
				chromedp.Click(chromedp.CSS("[data-lab-check]")),
			} {
				if err := chromedp.Do(ctx, a); err != nil {
					t.Fatalf("choose 3 nodes and check: %v", err)
				}
			}
			browsertest.WaitFor(t, ctx, `document.querySelector("[data-lab-report] .lab-summary") !== null && document.querySelector("[data-lab-report] .lab-summary").textContent.includes("asked all 3 Redis nodes")`)
			if nodes, _ := chromedp.Run(ctx, chromedp.Value(chromedp.CSS("#lab-nodes"))); nodes != "3" {
				t.Errorf("after the check the nodes selector says %q; want 3", nodes)
			}
			if holds, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-property="one-holder"]').getAttribute("data-status")`)); holds != "holds" {
				t.Errorf("one-holder on 3 nodes without clock jumps: %s; want holds", holds)
			}
			if js {
				// The counterexample to no-stale-write plays with a lane
				// for each node, as the race draws a Redlock run.
				const cx = `[data-lab-cx="no-stale-write"]`
				browsertest.WaitFor(t, ctx, `document.querySelector('`+cx+`').getAttribute("data-race-playing") === "ready" && document.querySelector('`+cx+` svg.race-timeline') !== null`)
				lanes, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('`+cx+` svg .lane-label')].map(e => e.textContent).join(",")`))
				if !strings.Contains(lanes, "redis node 1") || !strings.Contains(lanes, "redis node 3") {
					t.Errorf("the counterexample's lanes are %q; want one for each of the 3 nodes", lanes)
				}
			}

			browsertest.Open(t, ctx, ts.URL+"/lab", 1280, 900)
			for _, a := range []chromedp.Action[chromedp.Void]{
				chromedp.SetValue(chromedp.CSS("#lab-with"), "challenge:plain-del"),
				chromedp.Click(chromedp.CSS("[data-lab-compare-button]")),
			} {
				if err := chromedp.Do(ctx, a); err != nil {
					t.Fatalf("compare with the plain-DEL challenge: %v", err)
				}
			}
			browsertest.WaitFor(t, ctx, `document.querySelector('[data-lab-comparison] [data-compare-property="no-foreign-release"]') !== null`)
			differs, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll("[data-compare-property]")].map(li => li.getAttribute("data-compare-property") + "=" + li.getAttribute("data-differs")).join(" ")`))
			if !strings.Contains(differs, "no-foreign-release=true") || !strings.Contains(differs, "one-holder=false") {
				t.Errorf("properties that differ: %s; want no-foreign-release only", differs)
			}
			const box = `[data-lab-telling="no-foreign-release-b"]`
			if js {
				browsertest.WaitFor(t, ctx, `document.querySelector('`+box+`').getAttribute("data-race-playing") === "ready" && document.querySelector('`+box+` svg.race-timeline') !== null`)
				if ok, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.activeElement === document.querySelector("[data-lab-report]")`)); !ok {
					t.Error("after the comparison the focus is not on it")
				}
			} else {
				if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int64](`document.querySelectorAll('`+box+` [data-race-transcript] li').length`)); n == 0 {
					t.Error("without the script the telling schedule has no transcript")
				}
			}
			if with, _ := chromedp.Run(ctx, chromedp.Value(chromedp.CSS("#lab-with"))); with != "challenge:plain-del" {
				t.Errorf("after the comparison the choice is %q; want it kept", with)
			}
			browsertest.ElementScreenshot(t, ctx, "[data-lab-comparison]", "lab-compare-"+name)
			browsertest.ElementScreenshot(t, ctx, "[data-lab-form]", "lab-form-compare-"+name)
			if !js {
				// axe-core is a script: it runs with scripts on, on the
				// page the form rendered without them.
				browsertest.Scripts(t, ctx, true)
			}
			browsertest.RequireNoSerious(t, browsertest.Axe(t, ctx), "lab-compare-"+name)
		})
	}
}
