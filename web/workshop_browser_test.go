package web

import (
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/locklab/locklab/internal/browsertest"
)

// TestWorkshopDashboardInBrowser signs an instructor in, starts a
// workshop, and watches the dashboard count a learner who joins and
// answers, live, without a reload.
func TestWorkshopDashboardInBrowser(t *testing.T) {
	base := newWorkshopServer(t)
	ctx := browsertest.New(t)
	browsertest.ColorScheme(t, ctx, "light")
	browsertest.Open(t, ctx, base+"/admin", 1280, 900)
	browsertest.RequireNoSerious(t, browsertest.Axe(t, ctx), "/admin sign-in")
	err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#admin-token"), adminToken),
		chromedp.Click(chromedp.CSS(`form[action="/admin/login"] button`)),
		chromedp.WaitVisible(chromedp.CSS("#ws-title")),
		chromedp.SendKeys(chromedp.CSS("#ws-title"), "Browser group"),
		chromedp.Click(chromedp.CSS(`form[action="/admin/workshops"] button`)),
		chromedp.WaitVisible(chromedp.CSS("[data-dashboard]")),
	)
	if err != nil {
		t.Fatal(err)
	}
	code, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(".join-code")))
	learner := newLearner(t, base)
	if c, _ := form(learner, "/join", url.Values{"code": {strings.TrimSpace(code)}, "nickname": {"Ada"}}); c != 200 {
		t.Fatalf("join = %d", c)
	}
	learner.answer("gc-pause", "fencing")
	browsertest.WaitFor(t, ctx, `document.querySelector('[data-tile="joined"]').textContent === "1"`)
	browsertest.WaitFor(t, ctx, `document.querySelector('[data-question-stat="gc-pause"] [data-first-right]').textContent === "1"`)
	browsertest.Screenshot(t, ctx, "workshop-dashboard-1280")
	browsertest.RequireNoSerious(t, browsertest.Axe(t, ctx), "workshop dashboard")
}

// TestWorkshopControlsInBrowser drives the dashboard's controls for who
// may join, with JavaScript on and off: the instructor closes joining (a
// newcomer is turned away), opens it again, and removes a participant
// from the list (who can then not join again). Every control is a form
// that works without scripts.
func TestWorkshopControlsInBrowser(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(map[bool]string{true: "scripts", false: "no-scripts"}[js], func(t *testing.T) {
			base := newWorkshopServer(t)
			ctx := browsertest.New(t)
			browsertest.Scripts(t, ctx, js)
			browsertest.ColorScheme(t, ctx, "light")
			browsertest.Open(t, ctx, base+"/admin", 1280, 900)
			err := chromedp.Do(ctx,
				chromedp.SendKeys(chromedp.CSS("#admin-token"), adminToken),
				chromedp.Click(chromedp.CSS(`form[action="/admin/login"] button`)),
				chromedp.WaitVisible(chromedp.CSS("#ws-title")),
				chromedp.SendKeys(chromedp.CSS("#ws-title"), "Controls group"),
				chromedp.Click(chromedp.CSS(`form[action="/admin/workshops"] button`)),
				chromedp.WaitVisible(chromedp.CSS("[data-dashboard]")),
			)
			if err != nil {
				t.Fatal(err)
			}
			code, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(".join-code")))
			code = strings.TrimSpace(code)
			dash := base + "/admin/workshops/" + code
			alice, mallory, bob := newLearner(t, base), newLearner(t, base), newLearner(t, base)
			for l, nick := range map[*learnerClient]string{alice: "Alice", mallory: "Mallory"} {
				if c, _ := form(l, "/join", url.Values{"code": {code}, "nickname": {nick}}); c != 200 {
					t.Fatalf("%s joins = %d", nick, c)
				}
			}
			browsertest.Open(t, ctx, dash, 1280, 900)
			browsertest.WaitFor(t, ctx, `document.querySelector("#ws-part-h").textContent.includes("(2)")`)
			if js {
				browsertest.Screenshot(t, ctx, "workshop-dashboard-participants-1280")
				browsertest.RequireNoSerious(t, browsertest.Axe(t, ctx), "workshop dashboard with participants")
			}

			// Close joining: a newcomer is turned away.
			if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#joining button"))); err != nil {
				t.Fatal(err)
			}
			browsertest.WaitFor(t, ctx, `document.querySelector("#joining").textContent.includes("Joining is closed.")`)
			if c, body := form(bob, "/join", url.Values{"code": {code}, "nickname": {"Bob"}}); c != 400 || !strings.Contains(body, "not taking new participants") {
				t.Errorf("a newcomer joins the closed workshop = %d", c)
			}
			if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#joining button"))); err != nil {
				t.Fatal(err)
			}
			browsertest.WaitFor(t, ctx, `document.querySelector("#joining").textContent.includes("Joining is open.")`)

			// Remove Mallory from the list.
			err = chromedp.Do(ctx, chromedp.Click(chromedp.Search(`//tr[td[normalize-space()="Mallory"]]//button`)))
			if err != nil {
				t.Fatal(err)
			}
			browsertest.WaitFor(t, ctx, `document.querySelector("#ws-part-h").textContent.includes("(1)") && document.querySelector("#participants [role=status]").textContent.includes("removed")`)
			if list, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#participants table"))); strings.Contains(list, "Mallory") || !strings.Contains(list, "Alice") {
				t.Errorf("participants after removing Mallory: %q", list)
			}
			browsertest.WaitFor(t, ctx, `document.querySelector('[data-tile="joined"]').textContent === "1"`)
			if c, body := form(mallory, "/join", url.Values{"code": {code}, "nickname": {"Mallory"}}); c != 400 || !strings.Contains(body, "removed you") {
				t.Errorf("Mallory joins again = %d", c)
			}
			if c, _ := form(bob, "/join", url.Values{"code": {code}, "nickname": {"Bob"}}); c != 200 {
				t.Errorf("a newcomer joins the reopened workshop = %d", c)
			}
		})
	}
}
