package web

import (
	"fmt"
	"image/png"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/locklab/locklab/internal/browsertest"
)

// TestCarryInBrowser carries progress from a "phone" to a "laptop" in
// headless Chromium with JavaScript off, as a reader without it would:
// answer with the form, get a code, scan its QR code (decoded from the
// screenshot), open the link and take the progress. Each state is looked
// at on a phone and a laptop, light and dark, and checked with axe-core.
func TestCarryInBrowser(t *testing.T) {
	ts := newTestServer(t)
	ctx := browsertest.New(t)
	jsOn := true
	scripts := func(on bool) {
		t.Helper()
		browsertest.Scripts(t, ctx, on)
		jsOn = on
	}
	// axe runs as a script: it is let run for the check, on the page as
	// it was loaded.
	axe := func(what string) {
		t.Helper()
		off := !jsOn
		if off {
			scripts(true)
		}
		browsertest.RequireNoSerious(t, browsertest.Axe(t, ctx), what)
		if off {
			scripts(false)
		}
	}
	views := []struct {
		name          string
		width, height int64
		scheme        string
	}{{"phone", 390, 844, "light"}, {"phone-dark", 390, 844, "dark"}, {"laptop", 1280, 800, "light"}, {"laptop-dark", 1280, 800, "dark"}}
	look := func(path, name string) {
		t.Helper()
		for _, vp := range views {
			browsertest.ColorScheme(t, ctx, vp.scheme)
			browsertest.Open(t, ctx, ts.URL+path, vp.width, vp.height)
			browsertest.Screenshot(t, ctx, fmt.Sprintf("carry-%s-%s", name, vp.name))
			axe(path + " (" + name + ", " + vp.name + ")")
			overflow, err := chromedp.Run(ctx, chromedp.Evaluate[int64](`document.documentElement.scrollWidth - window.innerWidth`))
			if err != nil || overflow > 0 {
				t.Errorf("%s at %d px is %d px too wide (%v)", name, vp.width, overflow, err)
			}
		}
	}

	scripts(false)
	browsertest.ColorScheme(t, ctx, "light")
	browsertest.Open(t, ctx, ts.URL+"/topics/distributed-locks", 1280, 800)
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#question-gc-pause input[value="fencing"]`)),
		chromedp.Click(chromedp.CSS(`#question-gc-pause button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#question-gc-pause .feedback-right`)),
	); err != nil {
		t.Fatalf("answer with the form: %v", err)
	}
	look("/progress", "before")
	browsertest.Open(t, ctx, ts.URL+"/progress", 390, 844)
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`form[action="/progress/code"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`.carry-code`)),
	); err != nil {
		t.Fatalf("Get a code: %v", err)
	}
	code, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`.carry-code`)))
	link, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`.carry-link-line a`)))
	if !displayedCode.MatchString(code) || link != ts.URL+"/carry/"+code {
		t.Fatalf("code %q, link %q; want a code and its link", code, link)
	}
	look("/progress", "code")
	// The QR code, as the phone's screen shows it, scans as the link. A
	// phone draws three device pixels to a CSS pixel; at one, the code's
	// modules are 5 or 6 pixels wide by turns, which a scanner can misjudge
	// (a CI run read one code as 19 modules wide).
	if err := chromedp.Do(ctx,
		chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(3)),
		chromedp.Navigate(ts.URL+"/progress"),
		chromedp.WaitReady(chromedp.CSS("body")),
	); err != nil {
		t.Fatalf("open /progress as a phone: %v", err)
	}
	f, err := os.Open(browsertest.ElementScreenshot(t, ctx, ".carry-qr", "carry-qr"))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got := decodeQR(t, img); got != link {
		t.Errorf("QR code on screen scans as %q; want %q", got, link)
	}

	// The laptop: another browser, with a saved answer of its own.
	if _, err := chromedp.Call(ctx, network.ClearBrowserCookies, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	browsertest.Open(t, ctx, ts.URL+"/topics/distributed-locks", 1280, 800)
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#question-nightly-report input[value="efficiency"]`)),
		chromedp.Click(chromedp.CSS(`#question-nightly-report button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#question-nightly-report .feedback-right`)),
	); err != nil {
		t.Fatalf("laptop answer: %v", err)
	}
	path := strings.TrimPrefix(link, ts.URL)
	look(path, "link")
	browsertest.Open(t, ctx, ts.URL+path, 1280, 800)
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`form[action="/progress/carry"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`.notice-ok`)),
	); err != nil {
		t.Fatalf("Use this progress here: %v", err)
	}
	look("/progress?done=1", "done")
	browsertest.Open(t, ctx, ts.URL+"/topics/distributed-locks", 1280, 800)
	if text, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`.quiz-progress`))); !strings.Contains(text, "2 of 3") {
		t.Errorf("laptop's quiz after carrying says %q; want 2 of 3 (the phone's and its own)", text)
	}
	// The used code is refused, with the message at the field.
	browsertest.Open(t, ctx, ts.URL+path, 390, 844)
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`form[action="/progress/carry"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`#carry-error`)),
	); err != nil {
		t.Fatalf("used code: %v", err)
	}
	browsertest.Screenshot(t, ctx, "carry-used-phone")
	axe(path + " (used)")
	scripts(true)
	look("/progress", "with-js")
}
