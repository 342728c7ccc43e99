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

// roomScreens are the widths the room is laid out for: a phone, a laptop
// and a desktop, each with its usual height.
var roomScreens = []struct{ width, height int64 }{{390, 844}, {1280, 800}, {1920, 1080}}

// viewportShot saves what the learner sees (the viewport, not the whole
// page) as name.png in $LOCKLAB_SCREENSHOTS, when set.
func viewportShot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("LOCKLAB_SCREENSHOTS")
	if dir == "" {
		return
	}
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), shot, 0o644); err != nil {
		t.Fatal(err)
	}
}

// inViewport is JavaScript that is true when the element js gives is
// entirely inside the viewport and not cut off by any ancestor that
// scrolls or clips (the transcript's scroller, the side column), so that
// the learner sees it.
func inViewport(js string) string {
	return fmt.Sprintf(`(() => {
		const el = (%s), r = el.getBoundingClientRect();
		if (!(r.width > 0 && r.height > 0 && r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth)) return false;
		for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
			if (getComputedStyle(p).overflowY === "visible" && getComputedStyle(p).overflowX === "visible") continue;
			const c = p.getBoundingClientRect();
			if (r.top < c.top - 1 || r.bottom > c.bottom + 1 || r.left < c.left - 1 || r.right > c.right + 1) return false;
		}
		return true;
	})()`, js)
}

func noOverflow(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	if over := text(t, ctx, `String(document.documentElement.scrollWidth - innerWidth)`); over != "0" {
		t.Errorf("%s: the page is %s px wider than the viewport", what, over)
	}
}

const (
	lastEntry   = `[...document.querySelectorAll("[data-pg-transcript] .pg-entry")].at(-1)`
	termInput   = `document.querySelector("[data-playground] input[name=line]")`
	firstRun    = `document.querySelector("[data-redis-cli] .cli-run:not(.cli-edit)")`
	roomToggle  = `document.querySelector("[data-room-toggle]")`
	entryCount  = `document.querySelectorAll("[data-pg-transcript] .pg-entry").length`
	firstLine   = "SET lock:invoice:7 3f9a1c NX PX 30000"
	firstLineIn = `.textContent.includes("SET lock:invoice:7 3f9a1c NX PX 30000")`
)

// TestRoomInBrowser lays the lesson out at phone, laptop and desktop
// widths, light and dark, with scripts on: from 1100 px the playground is
// beside the lesson, and after the first Run the terminal's input and the
// new reply are in view; on a phone the Run opens the docked drawer,
// whose input takes at least 90% of the screen's width, and the Run
// button stays in view above it. No page is wider than the screen, and
// axe finds nothing serious.
func TestRoomInBrowser(t *testing.T) {
	ts := newTestServer(t)
	ctx := browsertest.New(t)
	for _, scheme := range []string{"light", "dark"} {
		for _, sc := range roomScreens {
			name := fmt.Sprintf("%d-%s", sc.width, scheme)
			t.Run(name, func(t *testing.T) {
				browsertest.ColorScheme(t, ctx, scheme)
				browsertest.Open(t, ctx, ts.URL+"/topics/distributed-locks", sc.width, sc.height)
				browsertest.WaitFor(t, ctx, `document.querySelectorAll(".cli-run").length >= 6 && !document.querySelector("[data-cli-forms]")`)
				browsertest.WaitFor(t, ctx, `document.readyState === "complete" && document.fonts.status === "loaded"`)
				noOverflow(t, ctx, name)
				wide := sc.width >= 1100
				if wide {
					beside := text(t, ctx, `String(document.querySelector("[data-room-side]").getBoundingClientRect().left >= document.querySelector(".room-main").getBoundingClientRect().right)`)
					if beside != "true" {
						t.Error("the playground is not beside the lesson")
					}
					if hidden := text(t, ctx, `String(getComputedStyle(`+roomToggle+`).display === "none")`); hidden != "true" {
						t.Error("the drawer's toggle shows beside the lesson")
					}
				} else {
					if v := text(t, ctx, roomToggle+`.getAttribute("aria-expanded")`); v != "false" {
						t.Errorf("drawer toggle aria-expanded = %s before any Run; want false", v)
					}
					browsertest.WaitFor(t, ctx, inViewport(roomToggle))
				}
				before := text(t, ctx, `String(`+entryCount+`)`)
				clickJS(t, ctx, firstRun)
				browsertest.WaitFor(t, ctx, fmt.Sprintf(`%s > %s && %s%s && %s.querySelector(".pg-out").textContent !== ""`, entryCount, before, lastEntry, firstLineIn, lastEntry))
				if !wide {
					browsertest.WaitFor(t, ctx, roomToggle+`.getAttribute("aria-expanded") === "true"`)
					ratio := text(t, ctx, `String(`+termInput+`.getBoundingClientRect().width / innerWidth)`)
					var r float64
					fmt.Sscan(ratio, &r)
					if r < 0.9 {
						t.Errorf("the drawer's input is %.2f of the screen's width; want at least 0.90", r)
					}
					// The Run button that opened the drawer is above it,
					// not under it.
					above := text(t, ctx, `String(document.activeElement.getBoundingClientRect().bottom <= document.querySelector("[data-room-side]").getBoundingClientRect().top + 1)`)
					if above != "true" {
						t.Error("after the Run the focused Run button is under the drawer")
					}
				}
				browsertest.WaitFor(t, ctx, inViewport(termInput))
				browsertest.WaitFor(t, ctx, inViewport(lastEntry))
				noOverflow(t, ctx, name+" after a Run")
				viewportShot(t, ctx, "lesson-run-"+name)
				browsertest.RequireNoSerious(t, browsertest.Axe(t, ctx), "lesson after a Run at "+name)
				if !wide {
					// Escape closes the drawer.
					if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Escape)); err != nil {
						t.Fatal(err)
					}
					browsertest.WaitFor(t, ctx, roomToggle+`.getAttribute("aria-expanded") === "false" && getComputedStyle(document.querySelector("[data-room-panel]")).display === "none"`)
				}
				browsertest.Screenshot(t, ctx, "lesson-full-"+name)
			})
		}
	}
}

// TestRoomDrawerByKeyboard opens and closes the drawer on a phone-sized
// screen from the keyboard: Tab reaches the Run buttons and the toggle,
// each with a visible focus ring; Enter on the toggle opens the drawer
// with the focus in the terminal's input, Escape closes it with the focus
// back on the toggle. A tap on the toggle opens it too. At 1280 px Tab
// reaches the Run buttons and the input.
func TestRoomDrawerByKeyboard(t *testing.T) {
	ts := newTestServer(t)
	ctx := browsertest.New(t)
	browsertest.ColorScheme(t, ctx, "light")
	for _, width := range []int64{390, 1280} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			browsertest.Open(t, ctx, ts.URL+"/topics/distributed-locks", width, 844)
			browsertest.WaitFor(t, ctx, `document.querySelectorAll(".cli-run").length >= 6`)
			reached := map[string]bool{}
			for i := 0; i < 400 && len(reached) < 2; i++ {
				if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
					t.Fatal(err)
				}
				what := text(t, ctx, `(() => { const a = document.activeElement; if (!a) return ""; if (a.matches(".cli-run:not(.cli-edit)")) return "run"; if (a.matches("[data-room-toggle]")) return "toggle"; if (a.matches("[data-playground] input[name=line]")) return "input"; return "" })()`)
				if what == "" || reached[what] {
					continue
				}
				if ring := text(t, ctx, `getComputedStyle(document.activeElement).outlineStyle`); ring == "none" {
					t.Errorf("%s has the focus with no visible outline", what)
				}
				reached[what] = true
			}
			want := []string{"run", "toggle"}
			if width >= 1100 {
				want = []string{"run", "input"}
			}
			for _, w := range want {
				if !reached[w] {
					t.Errorf("Tab never reached the %s", w)
				}
			}
			if width >= 1100 {
				return
			}
			if err := chromedp.Do(ctx, chromedp.Focus(chromedp.JSPath(roomToggle)), chromedp.KeyEvent(kb.Enter)); err != nil {
				t.Fatal(err)
			}
			browsertest.WaitFor(t, ctx, roomToggle+`.getAttribute("aria-expanded") === "true" && document.activeElement === `+termInput)
			if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.JSPath(termInput), "PING"+kb.Enter)); err != nil {
				t.Fatal(err)
			}
			browsertest.WaitFor(t, ctx, lastEntry+`.querySelector(".pg-out").textContent === "PONG"`)
			browsertest.WaitFor(t, ctx, inViewport(lastEntry))
			viewportShot(t, ctx, "drawer-typed-390")
			if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Escape)); err != nil {
				t.Fatal(err)
			}
			browsertest.WaitFor(t, ctx, roomToggle+`.getAttribute("aria-expanded") === "false" && document.activeElement === `+roomToggle)
			// A tap (a click) opens it again.
			clickJS(t, ctx, roomToggle)
			browsertest.WaitFor(t, ctx, roomToggle+`.getAttribute("aria-expanded") === "true"`)
			clickJS(t, ctx, roomToggle)
			browsertest.WaitFor(t, ctx, roomToggle+`.getAttribute("aria-expanded") === "false"`)
		})
	}
}

// TestRoomWithoutJavaScript reads the lesson with scripts off at each
// width, light and dark: it reads top to bottom, each example has a form
// that runs it, and the redirected page shows the reply in the terminal,
// in view. No page is wider than the screen, and axe finds nothing
// serious.
func TestRoomWithoutJavaScript(t *testing.T) {
	ts := newTestServer(t)
	ctx := browsertest.New(t)
	browsertest.Scripts(t, ctx, false)
	for _, scheme := range []string{"light", "dark"} {
		for _, sc := range roomScreens {
			name := fmt.Sprintf("%d-%s-nojs", sc.width, scheme)
			t.Run(name, func(t *testing.T) {
				browsertest.ColorScheme(t, ctx, scheme)
				browsertest.Open(t, ctx, ts.URL+"/topics/distributed-locks", sc.width, sc.height)
				browsertest.WaitFor(t, ctx, `document.readyState === "complete"`)
				noOverflow(t, ctx, name)
				if n := text(t, ctx, `String(document.querySelectorAll("[data-cli-forms] button[name=line]").length === document.querySelectorAll("[data-redis-cli] .cli-cmd").length)`); n != "true" {
					t.Error("not every example command has a button that runs it")
				}
				// The drawer's toggle needs the script; the playground
				// is on the page, open.
				if shown := text(t, ctx, `String(`+roomToggle+`.hidden && getComputedStyle(document.querySelector("[data-room-panel]")).display !== "none")`); shown != "true" {
					t.Error("without scripts the playground is not shown, or its toggle is")
				}
				browsertest.Screenshot(t, ctx, "lesson-full-"+name)
				// axe runs as a script: it is let run for the check, on
				// the page as it was loaded without the page's scripts.
				browsertest.Scripts(t, ctx, true)
				browsertest.RequireNoSerious(t, browsertest.Axe(t, ctx), "lesson without scripts at "+name)
				browsertest.Scripts(t, ctx, false)
				// Run the first example: A takes the lock, or is told
				// (nil) while an earlier pass's lock lives; either way
				// the page shows the sandbox's reply to that line.
				if err := chromedp.Do(ctx, chromedp.Click(chromedp.JSPath(`document.querySelectorAll("[data-cli-forms] button")[0]`))); err != nil {
					t.Fatal(err)
				}
				browsertest.WaitFor(t, ctx, `location.hash === "#pg-lesson-terminal" && document.readyState === "complete" && `+lastEntry+firstLineIn)
				out := text(t, ctx, lastEntry+`.querySelector(".pg-out").textContent`)
				if out != "OK" && out != "(nil)" {
					t.Errorf("the reply shown after the form = %q; want OK or (nil)", out)
				}
				browsertest.WaitFor(t, ctx, inViewport(lastEntry))
				browsertest.WaitFor(t, ctx, inViewport(termInput))
				noOverflow(t, ctx, name+" after the form")
				viewportShot(t, ctx, "lesson-after-form-"+name)
			})
		}
	}
}

// TestRacePlayBeforeSettings opens the race page at each width: Play
// comes before the settings, in the page's order and on the screen, and
// nothing is wider than the screen.
func TestRacePlayBeforeSettings(t *testing.T) {
	ts := newTestServer(t)
	ctx := browsertest.New(t)
	browsertest.ColorScheme(t, ctx, "light")
	for _, sc := range roomScreens {
		t.Run(fmt.Sprint(sc.width), func(t *testing.T) {
			browsertest.Open(t, ctx, ts.URL+"/race", sc.width, sc.height)
			browsertest.WaitFor(t, ctx, `!document.querySelector("[data-race-player]").hidden`)
			play, settings := `document.querySelector("[data-act=play]")`, `document.querySelector("[data-race-settings]")`
			order := text(t, ctx, fmt.Sprintf(`String(!!(%s.compareDocumentPosition(%s) & Node.DOCUMENT_POSITION_FOLLOWING) && %s.getBoundingClientRect().bottom <= %s.getBoundingClientRect().top)`, play, settings, play, settings))
			if order != "true" {
				t.Error("the settings come before Play")
			}
			noOverflow(t, ctx, fmt.Sprintf("race at %d", sc.width))
			viewportShot(t, ctx, fmt.Sprintf("race-%d", sc.width))
		})
	}
}

// TestProgressInNav follows the site header's Progress link from every
// kind of page: one click reaches the progress page.
func TestProgressInNav(t *testing.T) {
	ts := newTestServer(t)
	ctx := browsertest.New(t)
	for _, path := range []string{"/", "/topics/distributed-locks", "/race", "/playground", "/lab", "/progress"} {
		browsertest.Open(t, ctx, ts.URL+path, 1280, 800)
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`nav[aria-label=Site] a[href="/progress"]`))); err != nil {
			t.Fatalf("%s: click Progress: %v", path, err)
		}
		browsertest.WaitFor(t, ctx, `location.pathname === "/progress" && document.readyState === "complete"`)
		if h1 := text(t, ctx, `document.querySelector("h1").textContent`); !strings.Contains(h1, "another device") && !strings.Contains(strings.ToLower(h1), "progress") {
			t.Errorf("from %s the Progress link led to a page titled %q", path, h1)
		}
	}
}
