package web

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/locklab/locklab/internal/browsertest"
	"github.com/locklab/locklab/lab"
)

// TestLabLibraryInBrowser loads a gallery entry with the page's script
// and without it: with the script Load fills the editor in place (the
// recipe, its rules and its fault model) and says what it loaded;
// without it Load is a link to the page with the entry in the editor.
// Checking it (redsync, a Redlock on five nodes) then gives the verdicts
// the entry expects, and the counterexample to no-stale-write plays on
// the race's player (or reads as a transcript without the script). Screenshots of the gallery at 390 and 1280 px,
// light and dark, and axe-core on the page.
func TestLabLibraryInBrowser(t *testing.T) {
	redsync, _ := lab.LibraryByID("redsync")
	fenced, _ := lab.LibraryByID("redisson-fenced")
	for _, js := range []bool{true, false} {
		name := map[bool]string{true: "js", false: "nojs"}[js]
		t.Run(name, func(t *testing.T) {
			ts := newTestServer(t)
			ctx := browsertest.New(t)
			browsertest.Scripts(t, ctx, js)
			browsertest.ColorScheme(t, ctx, "light")
			browsertest.Open(t, ctx, ts.URL+"/lab", 1280, 900)
			if js {
				if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.labStayed = true`)); err != nil {
					t.Fatal(err)
				}
			}
			value := func(sel string) string {
				t.Helper()
				v, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(sel)))
				if err != nil {
					t.Fatalf("value of %s: %v", sel, err)
				}
				return v
			}
			load := func(e lab.LibraryEntry) {
				t.Helper()
				if err := follow(ctx, `[data-lab-load="`+e.ID+`"]`, "[data-lab-loaded]:not([hidden])"); err != nil {
					t.Fatalf("Load %s: %v", e.ID, err)
				}
				browsertest.WaitFor(t, ctx, `document.querySelector("#lab-acquire").value === `+jsString(strings.Join(e.Recipe.Acquire, "\n")))
				if got := value("#lab-release"); got != strings.Join(e.Recipe.Release, "\n") {
					t.Errorf("release field = %q; want %s's release", got, e.ID)
				}
				if got := value("#lab-extend"); got != strings.Join(e.Recipe.Extend, "\n") {
					t.Errorf("extend field = %q; want %s's extend", got, e.ID)
				}
				if got := value("#lab-nodes"); got != fmt.Sprint(max(e.Recipe.Nodes, 1)) {
					t.Errorf("nodes = %q; want %s's %d", got, e.ID, max(e.Recipe.Nodes, 1))
				}
				if got := value("#lab-restarts"); got != e.CheckModel().Restarts {
					t.Errorf("restarts = %q; want %s's model, %q", got, e.ID, e.CheckModel().Restarts)
				}
				note, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("[data-lab-loaded]")))
				if note != e.LoadedText() {
					t.Errorf("loaded note = %q; want %q", note, e.LoadedText())
				}
				browsertest.WaitFor(t, ctx, `document.querySelector('[data-library="`+e.ID+`"]').classList.contains("lab-current") && document.querySelectorAll(".lab-lib.lab-current").length === 1 && location.search.includes("library=`+e.ID+`")`)
				if js {
					if ok, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.labStayed === true && document.activeElement === document.querySelector("[data-lab-loaded]")`)); !ok {
						t.Error("Load left the page, or did not move the focus to what it loaded; want the editor filled in place")
					}
				}
			}

			// An entry with its own rules and fault model first, then
			// redsync, whose load must clear them again.
			load(fenced)
			if got := value("#lab-taken-reply"); got != fenced.Recipe.TakenWhen.Reply {
				t.Errorf("taken rule = %q; want %q", got, fenced.Recipe.TakenWhen.Reply)
			}
			if checked, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector("#lab-fencing").checked && document.querySelector("#lab-token-elem").value === "2"`)); !checked {
				t.Error("RFencedLock: want fencing on and the token from element 2")
			}
			browsertest.Open(t, ctx, ts.URL+"/lab?library="+fenced.ID, 1280, 900)
			if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelectorAll('#lib-redisson-fenced details').forEach(d => d.open = true) || true`)); err != nil {
				t.Fatal(err)
			}
			for _, vp := range []struct {
				width  int64
				scheme string
			}{{390, "light"}, {390, "dark"}, {1280, "light"}, {1280, "dark"}} {
				browsertest.ColorScheme(t, ctx, vp.scheme)
				if err := chromedp.Do(ctx, chromedp.EmulateViewport(vp.width, 900)); err != nil {
					t.Fatal(err)
				}
				browsertest.ElementScreenshot(t, ctx, "[data-lab-library]", fmt.Sprintf("gallery-%s-%d-%s", name, vp.width, vp.scheme))
			}
			browsertest.ColorScheme(t, ctx, "light")
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
				t.Fatal(err)
			}
			if js {
				if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.labStayed = true`)); err != nil {
					t.Fatal(err)
				}
			}

			load(redsync)
			if got := value("#lab-taken-reply") + value("#lab-token-line"); got != "" {
				t.Errorf("after loading redsync the rules still say %q; want them empty", got)
			}
			if checked, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector("#lab-fencing").checked`)); checked {
				t.Error("after loading redsync fencing is still on")
			}
			shot(t, ctx, "lab-library-loaded-"+name+"-390-light", 390, "light", js)
			browsertest.ColorScheme(t, ctx, "light")
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
				t.Fatal(err)
			}

			if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("[data-lab-check]"))); err != nil {
				t.Fatalf("press Check it: %v", err)
			}
			cx := `[data-lab-cx="no-stale-write"]`
			browsertest.WaitFor(t, ctx, `document.querySelector('`+cx+`') !== null`)
			for _, v := range redsync.Verdicts {
				browsertest.WaitFor(t, ctx, `document.querySelector('[data-lab-report] [data-property="`+string(v.Property)+`"]').getAttribute("data-status") === "`+v.Status+`"`)
			}
			steps, err := chromedp.Run(ctx, chromedp.Evaluate[int64](`document.querySelectorAll('`+cx+` [data-race-transcript] li').length`))
			if err != nil || steps == 0 {
				t.Fatalf("counterexample transcript has %d steps (%v); want some", steps, err)
			}
			if !js {
				return
			}
			if ok, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.labStayed === true`)); !ok {
				t.Error("the check left the page; want its result in place")
			}
			browsertest.WaitFor(t, ctx, `document.querySelector('`+cx+`').getAttribute("data-race-playing") === "ready"`)
			if err := chromedp.Do(ctx, chromedp.Focus(chromedp.CSS(cx+` [data-act=forward]`))); err != nil {
				t.Fatal(err)
			}
			for i := 0; i <= int(steps); i++ {
				if err := chromedp.Do(ctx, chromedp.KeyEvent("\r")); err != nil {
					t.Fatal(err)
				}
			}
			browsertest.WaitFor(t, ctx, `document.querySelector('`+cx+`').getAttribute("data-race-playing") === "done"`)
			narration, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(cx+` [data-race-narration]`)))
			if !strings.HasPrefix(narration, "The end. What happened:") || !strings.Contains(narration, "stale") {
				t.Errorf("narration at the end = %q; want the stale write", narration)
			}
		})
	}
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
