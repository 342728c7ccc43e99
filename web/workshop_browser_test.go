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
