package web

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/locklab/locklab/internal/browsertest"
	"github.com/locklab/locklab/internal/fakeclock"
	"github.com/locklab/locklab/limit"
)

// TestNotSavedInBrowser: a newcomer whose address has no newcomers left
// today answers with the page's script; the answer is graded in place and
// a notice under it says their progress is not saved.
func TestNotSavedInBrowser(t *testing.T) {
	cfg := testConfig(t)
	clk := fakeclock.New(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	cfg.Newcomers = limit.NewNewcomers(limit.Memory{Now: clk.Now}, limit.Rates{Writes: 1000}, 1)
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	// Another learner of the same address takes the day's one newcomer.
	if code, a, body := newLearner(t, ts.URL).answer("gc-pause", "fencing"); code != 200 || a.NotSaved != "" {
		t.Fatalf("the day's first newcomer = %d %s; want saved", code, body)
	}

	ctx := browsertest.New(t)
	browsertest.Open(t, ctx, ts.URL+"/topics/distributed-locks#check-yourself", 1280, 900)
	sel := `#question-gc-pause`
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(sel+` input[value="fencing"]`)),
		chromedp.Click(chromedp.CSS(sel+` button[type=submit]`)),
	); err != nil {
		t.Fatal(err)
	}
	notice := fmt.Sprintf(`document.querySelector(%q)`, sel+` [data-feedback] [data-not-saved]`)
	browsertest.WaitFor(t, ctx, notice+` !== null`)
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("`+sel+` [data-feedback]").textContent`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(text, "Right.") || !strings.Contains(text, "Your progress is not being saved") {
		t.Errorf("feedback = %q; want the answer graded and the notice", text)
	}
	browsertest.RequireNoSerious(t, browsertest.Axe(t, ctx), "lesson with the not-saved notice")
}
