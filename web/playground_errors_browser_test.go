package web

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/locklab/locklab/internal/browsertest"
)

// TestPlaygroundErrorsInBrowser checks how the terminal shows what goes
// wrong: a Redis error reply looks like an error, a line past the
// playground's 64 KiB limit gets the playground's own refusal (not a
// complaint about the JSON body) with the line echoed, and the keys that
// only the script provides are described only when it runs; in light and
// dark, at phone and desktop widths.
func TestPlaygroundErrorsInBrowser(t *testing.T) {
	ts := newTestServer(t)
	ctx := browsertest.New(t)
	for _, scheme := range []string{"light", "dark"} {
		for _, width := range []int64{390, 1920} {
			t.Run(fmt.Sprintf("%s-%d", scheme, width), func(t *testing.T) {
				browsertest.ColorScheme(t, ctx, scheme)
				browsertest.Open(t, ctx, ts.URL+"/playground", width, 900)
				browsertest.WaitFor(t, ctx, `!document.querySelector("[data-pg-js-hint]").hidden`)
				input := chromedp.CSS(`[data-playground] input[name=line]`)
				if err := chromedp.Do(ctx, chromedp.Click(input), chromedp.SendKeys(input, "GET"+kb.Enter)); err != nil {
					t.Fatal(err)
				}
				last := `[...document.querySelectorAll("[data-pg-transcript] .pg-out")].at(-1)`
				browsertest.WaitFor(t, ctx, last+`?.classList.contains("pg-out-error") && `+last+`.textContent.startsWith("(error) ERR wrong number of arguments")`)
				// A 70 KB paste: the browser keeps one character past the
				// limit, and the playground refuses the line clearly.
				long := "SET k " + strings.Repeat("x", 70<<10)
				js := fmt.Sprintf(`(() => { const i = document.querySelector("[data-playground] input[name=line]"); i.value = %q; i.form.requestSubmit(); return true })()`, long[:64<<10+1])
				if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js)); err != nil {
					t.Fatal(err)
				}
				browsertest.WaitFor(t, ctx, last+`?.textContent === "(error) ERR the playground takes lines of at most 64 KiB"`)
				browsertest.WaitFor(t, ctx, `[...document.querySelectorAll("[data-pg-transcript] .pg-cmd")].at(-1).textContent.includes("SET k xxx") && [...document.querySelectorAll("[data-pg-transcript] .pg-cmd")].at(-1).textContent.endsWith("(65537 characters in all)")`)
				browsertest.ElementScreenshot(t, ctx, "[data-playground]", fmt.Sprintf("playground-errors-%s-%d", scheme, width))
				browsertest.RequireNoSerious(t, browsertest.Axe(t, ctx), fmt.Sprintf("playground with errors, %s, %d px", scheme, width))
			})
		}
	}
}
