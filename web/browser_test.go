package web

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/locklab/locklab/internal/browsertest"
)

// TestPagesInBrowser opens the home page, the lesson and the 404 page in
// headless Chromium on a phone and a laptop, saves screenshots, and checks
// that axe-core finds no serious or critical problems.
func TestPagesInBrowser(t *testing.T) {
	ts := newTestServer(t)
	ctx := browsertest.New(t)
	for _, pg := range []struct{ name, path, wantH1 string }{
		{"home", "/", "Redis path"},
		{"lesson", "/topics/distributed-locks", "Distributed locks and their caveats"},
		{"notfound", "/no/such/page", "Page not found"},
	} {
		for _, vp := range []struct {
			name          string
			width, height int64
			scheme        string
		}{{"phone", 375, 812, "light"}, {"laptop", 1280, 800, "light"}, {"laptop-dark", 1280, 800, "dark"}} {
			t.Run(pg.name+"-"+vp.name, func(t *testing.T) {
				browsertest.ColorScheme(t, ctx, vp.scheme)
				browsertest.Open(t, ctx, ts.URL+pg.path, vp.width, vp.height)
				h1, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("h1")))
				if err != nil || h1 != pg.wantH1 {
					t.Errorf("h1 = %q, %v; want %q", h1, err, pg.wantH1)
				}
				// Nothing may be wider than the viewport: a phone reader
				// must never scroll sideways.
				overflow, err := chromedp.Run(ctx, chromedp.Evaluate[int64](`document.documentElement.scrollWidth - window.innerWidth`))
				if err != nil || overflow > 0 {
					t.Errorf("page is %d px wider than the %d px viewport (err %v)", overflow, vp.width, err)
				}
				browsertest.Screenshot(t, ctx, fmt.Sprintf("%s-%s", pg.name, vp.name))
				browsertest.RequireNoSerious(t, browsertest.Axe(t, ctx), pg.path)
			})
		}
	}
}
