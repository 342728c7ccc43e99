package web

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/locklab/locklab/internal/browsertest"
)

// block is the JavaScript for the lesson's i-th redis-cli example block.
func block(i int) string { return fmt.Sprintf(`document.querySelectorAll("[data-redis-cli]")[%d]`, i) }

// clickJS clicks, as a person would (the focus moves to it), the element
// a JavaScript expression gives.
func clickJS(t *testing.T, ctx context.Context, js string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.JSPath(js))); err != nil {
		t.Fatalf("click %s: %v", js, err)
	}
}

// resultShows waits until example block i shows the sandbox's reply out
// and, when same, that it is the printed one.
func resultShows(t *testing.T, ctx context.Context, i int, out string, same bool) {
	t.Helper()
	r := block(i) + `.querySelector(".cli-result")`
	cond := fmt.Sprintf(`!%s.hidden && %s.querySelector(".cli-out").textContent === %q`, r, r, out)
	if same {
		cond += fmt.Sprintf(` && %s.textContent.includes("as printed") && !%s.querySelector(".cli-restart")`, r, r)
	} else {
		cond += fmt.Sprintf(` && !!%s.querySelector(".cli-why") && !!%s.querySelector(".cli-restart")`, r, r)
	}
	browsertest.WaitFor(t, ctx, cond)
}

func text(t *testing.T, ctx context.Context, js string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return s
}

// focusIsNotLost fails the test if the focus fell to the page's body, as
// it does when a focused button is disabled or removed.
func focusIsNotLost(t *testing.T, ctx context.Context, after string) {
	t.Helper()
	if tag := text(t, ctx, `document.activeElement ? document.activeElement.tagName + "." + document.activeElement.className : "none"`); strings.HasPrefix(tag, "BODY") || tag == "none" {
		t.Errorf("after %s the focus is on %s; want it on the control", after, tag)
	}
}

// TestLessonExamplesSlowReader is the learner who reads slowly: A's Run,
// the sandbox clock moved past the lock's TTL, then B's Run. The page shows
// B's actual reply with the reason, and "Run this example from the start"
// makes the sandbox give the printed replies again. Pressing A's Run twice
// is explained and mended the same way, and Edit puts a line in the
// terminal's prompt as its client.
func TestLessonExamplesSlowReader(t *testing.T) {
	ts := newTestServer(t)
	ctx := browsertest.New(t)
	browsertest.ColorScheme(t, ctx, "light")
	open := func(width int64) {
		t.Helper()
		browsertest.Open(t, ctx, ts.URL+"/topics/distributed-locks", width, 900)
		browsertest.WaitFor(t, ctx, `document.querySelectorAll(".cli-run").length >= 6`)
	}
	runButton := func(i int) string { return block(i) + `.querySelector(".cli-run:not(.cli-edit)")` }
	restart := func(i int) string { return block(i) + `.querySelector(".cli-restart")` }

	open(1280)
	// Slow reader: A takes the lock, 30 s pass, B asks.
	clickJS(t, ctx, runButton(0))
	resultShows(t, ctx, 0, "OK", true)
	focusIsNotLost(t, ctx, "A's Run")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-pg-advance] button[value="30000"]`))); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, ctx, `[...document.querySelectorAll("[data-pg-transcript] li")].some(li => li.textContent === "lock:invoice:7 expired")`)
	focusIsNotLost(t, ctx, "+30 s")
	clickJS(t, ctx, runButton(1))
	resultShows(t, ctx, 1, "OK", false)
	if actual := text(t, ctx, block(1)+`.querySelector(".cli-actual").textContent`); actual != "Your sandbox: OK · the lesson prints (nil)" {
		t.Errorf("B's reply line = %q", actual)
	}
	why := text(t, ctx, block(1)+`.querySelector(".cli-why").textContent`)
	for _, want := range []string{"lock:invoice:7 had expired", "since A> SET lock:invoice:7 3f9a1c NX PX 30000", "when it had 30 s to live"} {
		if !strings.Contains(why, want) {
			t.Errorf("B's reason = %q; want it to mention %q", why, want)
		}
	}
	if strings.Contains(why, "\n") {
		t.Errorf("B's reason %q is more than one line", why)
	}
	browsertest.ElementScreenshot(t, ctx, "[data-redis-cli]:has(.cli-restart)", "example-off-1280")
	// From the start: the example's key is deleted and its lines run again.
	clickJS(t, ctx, restart(1))
	resultShows(t, ctx, 0, "OK", true)
	resultShows(t, ctx, 1, "(nil)", true)
	focusIsNotLost(t, ctx, "Run this example from the start")
	transcript := text(t, ctx, `document.querySelector("[data-pg-transcript]").textContent`)
	if !strings.Contains(transcript, "DEL lock:invoice:7") {
		t.Errorf("the transcript does not show the DEL that started the example over: %q", transcript)
	}
	// The release now answers as printed.
	clickJS(t, ctx, runButton(2))
	resultShows(t, ctx, 2, "(integer) 1", true)

	// A's Run again, on a fresh page: the sandbox still holds the lock
	// from the page before.
	clickJS(t, ctx, runButton(0))
	resultShows(t, ctx, 0, "OK", true)
	open(390)
	clickJS(t, ctx, runButton(0))
	resultShows(t, ctx, 0, "(nil)", false)
	if why := text(t, ctx, block(0)+`.querySelector(".cli-why").textContent`); !strings.Contains(why, "outside this example changed lock:invoice:7") {
		t.Errorf("A's Run on a new page over an old lock: reason = %q", why)
	}
	clickJS(t, ctx, restart(0))
	resultShows(t, ctx, 0, "OK", true)
	// A MULTI typed as A would queue the restart's DEL: the learner is told.
	typeLine := func(line string) {
		t.Helper()
		input := chromedp.CSS(`[data-playground] input[name=line]`)
		if err := chromedp.Do(ctx, chromedp.Click(input), chromedp.SendKeys(input, line+kb.Enter)); err != nil {
			t.Fatal(err)
		}
		browsertest.WaitFor(t, ctx, fmt.Sprintf(`[...document.querySelectorAll("[data-pg-transcript] .pg-cmd")].at(-1)?.textContent.endsWith(%q)`, line))
	}
	typeLine("MULTI")
	clickJS(t, ctx, runButton(0))
	resultShows(t, ctx, 0, "QUEUED", false)
	if why := text(t, ctx, block(0)+`.querySelector(".cli-why").textContent`); !strings.Contains(why, "MULTI open") {
		t.Errorf("A's Run inside a MULTI: reason = %q", why)
	}
	clickJS(t, ctx, restart(0))
	browsertest.WaitFor(t, ctx, block(0)+`.querySelector(".cli-why")?.textContent.includes("DISCARD")`)
	typeLine("DISCARD")
	clickJS(t, ctx, restart(0))
	resultShows(t, ctx, 0, "OK", true)

	// Pressing A's Run twice, on a fresh page and sandbox. On a phone
	// the playground is a drawer: it is opened for the reset, and closed
	// again, so that the Run opens it.
	open(390)
	clickJS(t, ctx, `document.querySelector("[data-room-toggle]")`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-pg-reset] button`))); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, ctx, `document.querySelector("[data-pg-transcript]").textContent.includes("was reset")`)
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Escape)); err != nil {
		t.Fatal(err)
	}
	clickJS(t, ctx, runButton(0))
	resultShows(t, ctx, 0, "OK", true)
	clickJS(t, ctx, runButton(0))
	resultShows(t, ctx, 0, "(nil)", false)
	if why := text(t, ctx, block(0)+`.querySelector(".cli-why").textContent`); !strings.Contains(why, "ran already") {
		t.Errorf("A's second run: reason = %q; want it to say the line already ran", why)
	}
	browsertest.ElementScreenshot(t, ctx, "[data-redis-cli]", "example-twice-390")
	clickJS(t, ctx, restart(0))
	resultShows(t, ctx, 0, "OK", true)
	focusIsNotLost(t, ctx, "Run this example from the start")
	// B's line pressed before A's in a new pass (out of order).
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-pg-reset] button`))); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, ctx, `document.querySelector("[data-pg-keys] tbody").children.length === 0`)
	clickJS(t, ctx, runButton(1))
	resultShows(t, ctx, 1, "OK", false)
	if why := text(t, ctx, block(1)+`.querySelector(".cli-why").textContent`); !strings.Contains(why, "Run the lines above first") {
		t.Errorf("B before A: reason = %q; want it to say the lines above have not run", why)
	}
	clickJS(t, ctx, restart(1))
	resultShows(t, ctx, 0, "OK", true)
	resultShows(t, ctx, 1, "(nil)", true)

	// Edit puts B's line in the prompt, as B.
	clickJS(t, ctx, block(1)+`.querySelector(".cli-edit")`)
	browsertest.WaitFor(t, ctx, `document.activeElement === document.querySelector("[data-playground] input[name=line]")`)
	state := text(t, ctx, `(() => { const f = document.querySelector("[data-pg-form]"); return [f.line.value, f.querySelector("input[name=client]:checked").value, document.querySelector("[data-pg-prompt]").textContent, f.line.placeholder, getComputedStyle(document.querySelector("[data-pg-prompt-label]")).color].join("|") })()`)
	if want := "SET lock:invoice:7 other NX PX 30000|B|B|SET lock:invoice:7 other NX PX 30000|"; !strings.HasPrefix(state, want) {
		t.Errorf("after Edit on B's line: line|client|prompt|placeholder|colour = %q; want %q…", state, want)
	}
	bColour := state[strings.LastIndex(state, "|")+1:]
	setA := `document.querySelector("[data-pg-form] input[name=client][value=A]")`
	clickJS(t, ctx, setA)
	aColour := text(t, ctx, `getComputedStyle(document.querySelector("[data-pg-prompt-label]")).color`)
	if aColour == bColour {
		t.Errorf("the A> and B> prompts have the same colour %s", aColour)
	}
	// Enter keeps the focus in the input.
	input := chromedp.CSS(`[data-playground] input[name=line]`)
	if err := chromedp.Do(ctx, chromedp.Click(input), chromedp.SendKeys(input, kb.End+" GET lock:invoice:7"+kb.Enter)); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, ctx, `[...document.querySelectorAll("[data-pg-transcript] .pg-out")].at(-1).textContent.startsWith("(error)")`)
	browsertest.WaitFor(t, ctx, `document.activeElement === document.querySelector("[data-playground] input[name=line]")`)
}

// TestPlaygroundLooks takes the screenshots of the playground at phone and
// laptop widths, light and dark, with a few commands run, checks them with
// axe-core, checks that every control is at least 24x24 CSS px, that the
// key inspector is beside the terminal on a wide screen and below it, with
// a toggle, on a phone, and that help fits the terminal.
func TestPlaygroundLooks(t *testing.T) {
	ts := newTestServer(t)
	ctx := browsertest.New(t)
	for _, scheme := range []string{"light", "dark"} {
		for _, width := range []int64{390, 1280} {
			t.Run(fmt.Sprintf("%s-%d", scheme, width), func(t *testing.T) {
				browsertest.ColorScheme(t, ctx, scheme)
				for _, page := range []string{"/playground", "/topics/distributed-locks"} {
					browsertest.Open(t, ctx, ts.URL+page, width, 900)
					browsertest.WaitFor(t, ctx, `!document.querySelector("[data-pg-keys-toggle]").hidden`)
					// On a phone the lesson's playground is a drawer: open it.
					if page != "/playground" && width < 1100 {
						clickJS(t, ctx, `document.querySelector("[data-room-toggle]")`)
					}
					input := chromedp.CSS(`[data-playground] input[name=line]`)
					// The lines go in one at a time, each after the reply
					// to the one before (typing is tested elsewhere).
					for i, line := range []string{"FLUSHALL", "SET lock:invoice:7 3f9a1c NX PX 30000", "SET fence:invoice:7 33", "help"} {
						js := fmt.Sprintf(`(() => { const i = document.querySelector("[data-playground] input[name=line]"); i.value = %q; i.form.requestSubmit(); return true })()`, line)
						if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js)); err != nil {
							t.Fatal(err)
						}
						browsertest.WaitFor(t, ctx, fmt.Sprintf(`document.querySelectorAll("[data-pg-transcript] .pg-out").length >= %d`, i+1))
					}
					if err := chromedp.Do(ctx, chromedp.Click(input)); err != nil {
						t.Fatal(err)
					}
					browsertest.WaitFor(t, ctx, `[...document.querySelectorAll("[data-pg-transcript] .pg-out")].at(-1)?.textContent.startsWith("Lock Lab playground")`)
					browsertest.WaitFor(t, ctx, `document.querySelector("[data-pg-keys] tbody").children.length === 2`)
					name := strings.Trim(strings.ReplaceAll(page, "/", "-"), "-")
					browsertest.ElementScreenshot(t, ctx, "[data-playground]", fmt.Sprintf("%s-playground-%s-%d", name, scheme, width))
					if page != "/playground" {
						drawer := width < 1100
						if drawer {
							// The Run opens the drawer again, then Escape
							// closes it for the example's picture.
							if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Escape)); err != nil {
								t.Fatal(err)
							}
						}
						clickJS(t, ctx, block(0)+`.querySelector(".cli-run")`)
						browsertest.WaitFor(t, ctx, "!"+block(0)+`.querySelector(".cli-result").hidden`)
						if drawer {
							browsertest.WaitFor(t, ctx, `document.querySelector("[data-room-toggle]").getAttribute("aria-expanded") === "true"`)
							if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Escape)); err != nil {
								t.Fatal(err)
							}
						}
						browsertest.ElementScreenshot(t, ctx, "[data-redis-cli]", fmt.Sprintf("example-%s-%d", scheme, width))
						if drawer {
							clickJS(t, ctx, `document.querySelector("[data-room-toggle]")`)
						}
					}
					browsertest.RequireNoSerious(t, browsertest.Axe(t, ctx), fmt.Sprintf("%s, %s, %d px", page, scheme, width))
					small := text(t, ctx, `[...document.querySelectorAll("[data-playground] button, [data-playground] input:not([type=hidden]), [data-playground] a, [data-redis-cli] button")]
						.filter(e => e.getClientRects().length > 0)
						.map(e => [e, e.getBoundingClientRect()])
						.filter(([e, r]) => r.width < 24 || r.height < 24)
						.map(([e, r]) => (e.getAttribute("aria-label") || e.textContent || e.name || e.type).trim() + " " + Math.round(r.width) + "x" + Math.round(r.height)).join(", ")`)
					if small != "" {
						t.Errorf("%s at %d px: controls under 24x24 CSS px: %s", page, width, small)
					}
					// help: no line of it is wider than the terminal (no
					// sideways scroll), and the text has no column layout
					// that a narrow screen would wrap a second time.
					over := text(t, ctx, `(() => { const o = [...document.querySelectorAll("[data-pg-transcript] .pg-out")].at(-1); const s = document.querySelector("[data-pg-scroll]"); return o.scrollWidth > o.clientWidth + 1 || s.scrollWidth > s.clientWidth + 1 ? "overflows" : (/\n {4,}/.test(o.textContent) ? "indented columns" : "") })()`)
					if over != "" {
						t.Errorf("%s at %d px: help %s", page, width, over)
					}
					layout := text(t, ctx, `(() => { const t = document.querySelector(".pg-terminal").getBoundingClientRect(), k = document.querySelector(".pg-keys").getBoundingClientRect(); const toggle = document.querySelector("[data-pg-keys-toggle]"); return (k.left >= t.right - 1 && k.top < t.bottom ? "beside" : k.top >= t.bottom - 1 ? "below" : "overlapping") + "," + (toggle.getClientRects().length > 0 ? "toggle" : "no-toggle") })()`)
					want := "below,toggle"
					if width >= 1280 {
						want = "beside,no-toggle"
						if page != "/playground" {
							// The lesson's playground is a column beside
							// the lesson: the keys are below the terminal,
							// both in view.
							want = "below,no-toggle"
						}
					}
					if layout != want {
						t.Errorf("%s at %d px: key inspector %s; want %s", page, width, layout, want)
					}
				}
			})
		}
	}
	// The phone's toggle folds the inspector away and tells how many keys
	// it holds; the focus stays on it.
	browsertest.Open(t, ctx, ts.URL+"/playground", 390, 900)
	browsertest.WaitFor(t, ctx, `document.querySelector("[data-pg-keys] tbody").children.length === 2`)
	clickJS(t, ctx, `document.querySelector("[data-pg-keys-toggle]")`)
	browsertest.WaitFor(t, ctx, `document.querySelector("[data-pg-keys-panel]").getClientRects().length === 0 && document.querySelector("[data-pg-keys-toggle]").textContent === "Show keys (2)" && document.querySelector("[data-pg-keys-toggle]").getAttribute("aria-expanded") === "false"`)
	focusIsNotLost(t, ctx, "the keys toggle")
}

// TestPlaygroundOnTouch checks that a touch screen gets buttons for the
// history, and a hint that does not name keys it lacks.
func TestPlaygroundOnTouch(t *testing.T) {
	ts := newTestServer(t)
	ctx := browsertest.New(t)
	browsertest.ColorScheme(t, ctx, "light")
	// browsertest.Open sets a viewport without touch; this one has it.
	err := chromedp.Do(ctx,
		chromedp.EmulateViewport(390, 800, chromedp.EmulateTouch),
		chromedp.Navigate(ts.URL+"/playground"),
		chromedp.WaitReady(chromedp.CSS("body")),
	)
	if err != nil {
		t.Fatal(err)
	}
	if coarse := text(t, ctx, `String(matchMedia("(pointer: coarse)").matches)`); coarse != "true" {
		t.Skipf("this Chromium does not emulate a coarse pointer (pointer: coarse = %s)", coarse)
	}
	browsertest.WaitFor(t, ctx, `!document.querySelector("[data-pg-history]").hidden`)
	hint := text(t, ctx, `document.querySelector(".pg-hint").innerText`)
	if strings.Contains(hint, "Ctrl") || strings.Contains(hint, "Up and Down") || !strings.Contains(hint, "buttons") {
		t.Errorf("touch hint = %q; want the buttons, not keys", hint)
	}
	input := chromedp.CSS(`[data-playground] input[name=line]`)
	for _, line := range []string{"PING", "ECHO hi"} {
		if err := chromedp.Do(ctx, chromedp.Click(input), chromedp.SendKeys(input, line+kb.Enter)); err != nil {
			t.Fatal(err)
		}
	}
	browsertest.WaitFor(t, ctx, `[...document.querySelectorAll("[data-pg-transcript] .pg-out")].at(-1)?.textContent === '"hi"'`)
	clickJS(t, ctx, `document.querySelector("[data-pg-prev]")`)
	clickJS(t, ctx, `document.querySelector("[data-pg-prev]")`)
	if v := text(t, ctx, `document.querySelector("[data-playground] input[name=line]").value`); v != "PING" {
		t.Errorf("two presses of ↑ recalled %q; want PING", v)
	}
	clickJS(t, ctx, `document.querySelector("[data-pg-next]")`)
	if v := text(t, ctx, `document.querySelector("[data-playground] input[name=line]").value`); v != "ECHO hi" {
		t.Errorf("↓ recalled %q; want ECHO hi", v)
	}
	focusIsNotLost(t, ctx, "the history buttons")
	browsertest.ElementScreenshot(t, ctx, "[data-playground]", "playground-touch-390")
	browsertest.RequireNoSerious(t, browsertest.Axe(t, ctx), "playground on touch, 390 px")
}

// TestPlaygroundWithoutJavaScriptInBrowser posts the form with scripts
// off: the browser lands back at the terminal with the reply, and a
// reload does not send the command again.
func TestPlaygroundWithoutJavaScriptInBrowser(t *testing.T) {
	ts := newTestServer(t)
	ctx := browsertest.New(t)
	browsertest.Scripts(t, ctx, false)
	browsertest.ColorScheme(t, ctx, "light")
	browsertest.Open(t, ctx, ts.URL+"/topics/distributed-locks", 1280, 900)
	input := chromedp.CSS(`[data-playground] input[name=line]`)
	if err := chromedp.Do(ctx, chromedp.SendKeys(input, "INCR visits"+kb.Enter)); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, ctx, `location.hash === "#pg-lesson-terminal" && document.querySelector("[data-pg-transcript]").textContent.includes("(integer) 1")`)
	// The terminal is in view, not the top of the page.
	inView := text(t, ctx, `(() => { const r = document.querySelector(".pg-terminal").getBoundingClientRect(); return String(r.top >= -1 && r.top < innerHeight) })()`)
	if inView != "true" {
		t.Error("after the redirect the terminal is not in view")
	}
	// What the learner sees: the viewport, not the whole page.
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("LOCKLAB_SCREENSHOTS"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "lesson-nojs-after-post-1280.png"), shot, 0o644)
	}
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, ctx, `document.readyState === "complete"`)
	if err := chromedp.Do(ctx, chromedp.SendKeys(input, "GET visits"+kb.Enter)); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, ctx, `[...document.querySelectorAll("[data-pg-transcript] .pg-out")].at(-1)?.textContent === '"1"'`)
}
