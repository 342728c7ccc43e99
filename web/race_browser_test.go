package web

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/locklab/locklab/internal/browsertest"
)

// TestRaceInBrowser plays scenario 2 (a pause longer than the TTL) without
// fencing and then with it, to the end, and checks the verdict the page
// shows, and that a prediction is judged.
func TestRaceInBrowser(t *testing.T) {
	ts := newTestServer(t)
	ctx := browsertest.New(t)
	browsertest.ColorScheme(t, ctx, "light")
	for _, tt := range []struct {
		name, query, predict, want string
		width                      int64
	}{
		{"no-fencing", "scenario=gc-pause&fencing=false", "safe", "Two clients hold the lock at once", 1280},
		{"fencing", "scenario=gc-pause&fencing=true", "two-holders", "Two clients hold the lock at once", 375},
	} {
		t.Run(tt.name, func(t *testing.T) {
			browsertest.Open(t, ctx, ts.URL+"/race?"+tt.query, tt.width, 900)
			browsertest.WaitFor(t, ctx, `document.querySelector("[data-race-stage] svg") !== null`)
			verdictHidden, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector("[data-race-result]").hidden`))
			if !verdictHidden {
				t.Error("the verdict shows before the race is played")
			}
			err := chromedp.Do(ctx,
				chromedp.Click(chromedp.CSS(`[data-race-predict] input[value="`+tt.predict+`"]`)),
				chromedp.SetValue(chromedp.CSS(`[data-act=speed]`), "4"),
				chromedp.Click(chromedp.CSS(`[data-act=play]`)),
			)
			if err != nil {
				t.Fatal(err)
			}
			browsertest.Screenshot(t, ctx, fmt.Sprintf("race-%s-playing-%d", tt.name, tt.width))
			browsertest.WaitFor(t, ctx, `!document.querySelector("[data-race-result]").hidden`)
			verdict, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("[data-race-verdict]")))
			if !strings.Contains(verdict, tt.want) {
				t.Errorf("verdict = %q; want %q", verdict, tt.want)
			}
			right := tt.predict == "two-holders"
			if got := strings.Contains(verdict, "You predicted this"); got != right {
				t.Errorf("prediction judged %v; want %v (verdict text %q)", got, right, verdict)
			}
			items, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`[...document.querySelectorAll("[data-race-transcript] li")].filter(li => !li.hidden).length`))
			if items < 5 {
				t.Errorf("%d transcript lines shown at the end; want all", items)
			}
			browsertest.Screenshot(t, ctx, fmt.Sprintf("race-%s-%d", tt.name, tt.width))
			browsertest.RequireNoSerious(t, browsertest.Axe(t, ctx), "/race "+tt.name)
		})
	}
}

// TestRacePresenterView opens the projector view, plays it from the
// keyboard alone, and checks it for accessibility problems.
func TestRacePresenterView(t *testing.T) {
	ts := newTestServer(t)
	ctx := browsertest.New(t)
	browsertest.ColorScheme(t, ctx, "dark")
	browsertest.Open(t, ctx, ts.URL+"/race/present?scenario=fencing", 1920, 1080)
	browsertest.WaitFor(t, ctx, `document.querySelector("[data-race-stage] svg") !== null`)
	// Keyboard only: focus the widget, then step to the end with the arrow key.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector("[data-race]").focus(), true`)); err != nil {
		t.Fatal(err)
	}
	for range 40 {
		if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.ArrowRight)); err != nil {
			t.Fatal(err)
		}
	}
	browsertest.WaitFor(t, ctx, `!document.querySelector("[data-race-result]").hidden`)
	verdict, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("[data-race-verdict]")))
	if !strings.Contains(verdict, "Two clients hold the lock at once") {
		t.Errorf("presenter verdict = %q", verdict)
	}
	browsertest.Screenshot(t, ctx, "race-present-1920-dark")
	browsertest.RequireNoSerious(t, browsertest.Axe(t, ctx), "/race/present")
}
