package web

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/locklab/locklab/internal/browsertest"
)

// TestPlaygroundInBrowser types the lesson's three commands as A and B,
// clicks a Run button on an example, moves the clock and watches the lock
// key leave the inspector, at phone and laptop widths.
func TestPlaygroundInBrowser(t *testing.T) {
	ts := newTestServer(t)
	ctx := browsertest.New(t)
	browsertest.ColorScheme(t, ctx, "light")
	for _, width := range []int64{1280, 375} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			browsertest.Open(t, ctx, ts.URL+"/topics/distributed-locks#playground", width, 900)
			browsertest.WaitFor(t, ctx, `document.querySelectorAll(".cli-run").length >= 3`)
			// On a phone the lesson's playground is a drawer: open it.
			drawer := width < 1100
			if drawer {
				clickJS(t, ctx, `document.querySelector("[data-room-toggle]")`)
				browsertest.WaitFor(t, ctx, `document.querySelector("[data-room-toggle]").getAttribute("aria-expanded") === "true"`)
			}
			input := chromedp.CSS(`[data-playground] input[name=line]`)
			lastOutput := func(want string) {
				t.Helper()
				browsertest.WaitFor(t, ctx, fmt.Sprintf(`(() => { const o = [...document.querySelectorAll("[data-pg-transcript] .pg-out")]; return o.length > 0 && o[o.length-1].textContent === %q })()`, want))
			}
			typeAs := func(client, line, want string) {
				t.Helper()
				err := chromedp.Do(ctx,
					chromedp.Click(chromedp.CSS(`[data-playground] input[type=radio][name=client][value=`+client+`]`)),
					chromedp.Click(input),
					chromedp.SendKeys(input, line+kb.Enter),
				)
				if err != nil {
					t.Fatal(err)
				}
				lastOutput(want)
			}
			if width == 375 {
				// A fresh sandbox for the second pass.
				if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-pg-reset] button`))); err != nil {
					t.Fatal(err)
				}
				browsertest.WaitFor(t, ctx, `document.querySelector("[data-pg-keys] tbody").children.length === 0`)
			}
			typeAs("A", "SET lock:invoice:7 3f9a1c NX PX 30000", "OK")
			typeAs("B", "SET lock:invoice:7 other NX PX 30000", "(nil)")
			typeAs("A", releaseLine, "(integer) 1")
			// History: Up recalls the last line.
			if err := chromedp.Do(ctx, chromedp.Click(input), chromedp.KeyEvent(kb.ArrowUp)); err != nil {
				t.Fatal(err)
			}
			if v, _ := chromedp.Run(ctx, chromedp.Value(input)); v != releaseLine {
				t.Errorf("Up recalled %q", v)
			}
			if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(document.querySelector("[data-playground] input[name=line]").value = "") === ""`)); err != nil {
				t.Fatal(err)
			}
			// The Run button on the first example takes the lock again;
			// on a phone it opens the drawer, closed here by Escape.
			if drawer {
				if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Escape)); err != nil {
					t.Fatal(err)
				}
				browsertest.WaitFor(t, ctx, `document.querySelector("[data-room-toggle]").getAttribute("aria-expanded") === "false"`)
			}
			if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`.cli-run`))); err != nil {
				t.Fatal(err)
			}
			lastOutput("OK")
			browsertest.WaitFor(t, ctx, `[...document.querySelectorAll("[data-pg-keys] td")].some(td => td.textContent === "lock:invoice:7")`)
			browsertest.Screenshot(t, ctx, fmt.Sprintf("playground-%d", width))
			browsertest.ElementScreenshot(t, ctx, "[data-playground]", fmt.Sprintf("playground-widget-%d", width))
			browsertest.ElementScreenshot(t, ctx, "[data-redis-cli]", fmt.Sprintf("playground-example-%d", width))
			browsertest.RequireNoSerious(t, browsertest.Axe(t, ctx), fmt.Sprintf("lesson with playground at %d px", width))
			// +30 s: the TTL runs out and the key leaves the inspector.
			if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-pg-advance] button[value="30000"]`))); err != nil {
				t.Fatal(err)
			}
			browsertest.WaitFor(t, ctx, `![...document.querySelectorAll("[data-pg-keys] td")].some(td => td.textContent === "lock:invoice:7")`)
			// The transcript says what the clock did: which key expired.
			browsertest.WaitFor(t, ctx, `document.querySelector("[data-pg-transcript] li:last-child").textContent === "lock:invoice:7 expired"`)
			notice, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-pg-transcript] li:nth-last-child(2)`)))
			if !strings.Contains(notice, "moved forward 30 s") {
				t.Errorf("transcript line before the expired key = %q", notice)
			}
		})
	}
	browsertest.Open(t, ctx, ts.URL+"/playground", 1280, 900)
	browsertest.Screenshot(t, ctx, "playground-page-1280")
	browsertest.RequireNoSerious(t, browsertest.Axe(t, ctx), "/playground")
}
