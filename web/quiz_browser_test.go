package web

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/locklab/locklab/internal/browsertest"
)

// TestQuizInBrowser answers one question wrong, then all three right with
// the page's own script, reloads, and expects the topic to be Completed.
func TestQuizInBrowser(t *testing.T) {
	ts := newTestServer(t)
	ctx := browsertest.New(t)
	browsertest.ColorScheme(t, ctx, "light")
	browsertest.Open(t, ctx, ts.URL+"/topics/distributed-locks#check-yourself", 1280, 900)

	answer := func(question, choice string) {
		t.Helper()
		sel := `#question-` + question
		err := chromedp.Do(ctx,
			chromedp.Click(chromedp.CSS(sel+` input[value="`+choice+`"]`)),
			chromedp.Click(chromedp.CSS(sel+` button[type=submit]`)),
		)
		if err != nil {
			t.Fatalf("answer %s with %s: %v", question, choice, err)
		}
	}
	// feedback waits for the question's live region to say something new.
	last := map[string]string{}
	feedback := func(question string) string {
		t.Helper()
		js := `document.querySelector("#question-` + question + ` [data-feedback]").textContent`
		browsertest.WaitFor(t, ctx, fmt.Sprintf(`(t => t.trim() !== "" && t !== %q)(%s)`, last[question], js))
		text, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("feedback for %s: %v", question, err)
		}
		last[question] = text
		return text
	}

	answer("gc-pause", "redlock")
	if fb := feedback("gc-pause"); !strings.HasPrefix(fb, "Not quite.") {
		t.Errorf("wrong answer feedback = %q", fb)
	}
	browsertest.Screenshot(t, ctx, "quiz-wrong-1280")
	// The URL did not change: the script answered through the API.
	if loc, _ := chromedp.Run(ctx, chromedp.Location()); strings.Contains(loc, "/quiz/") {
		t.Errorf("the form was posted (location %s); the script should have handled it", loc)
	}
	for _, a := range [][2]string{{"gc-pause", "fencing"}, {"release-script", "other-holder"}, {"nightly-report", "efficiency"}} {
		answer(a[0], a[1])
		if fb := feedback(a[0]); !strings.HasPrefix(fb, "Right.") {
			t.Errorf("feedback for %s = %q; want Right.", a[0], fb)
		}
	}
	progress, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("[data-quiz-progress]")))
	if !strings.Contains(progress, "All three right") {
		t.Errorf("progress line = %q", progress)
	}
	badge, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(".lesson-header [data-status]")))
	if !strings.Contains(badge, "Completed") {
		t.Errorf("header status before reload = %q", badge)
	}
	browsertest.RequireNoSerious(t, browsertest.Axe(t, ctx), "lesson after answering")
	browsertest.Screenshot(t, ctx, "quiz-done-1280")

	if err := chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitReady(chromedp.CSS("body"))); err != nil {
		t.Fatal(err)
	}
	badge, _ = chromedp.Run(ctx, chromedp.Text(chromedp.CSS(".lesson-header [data-status]")))
	if !strings.Contains(badge, "Completed") {
		t.Errorf("header status after reload = %q; want Completed", badge)
	}
	browsertest.Open(t, ctx, ts.URL+"/", 375, 812)
	home, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(".topic-card [data-status]")))
	if !strings.Contains(home, "Completed") {
		t.Errorf("home status = %q; want Completed", home)
	}
}
