package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/locklab/locklab/internal/browsertest"
)

// TestPlaygroundOneRequestPerLine counts what the page asks the server: a
// typed line is one request, whose answer carries the key inspector's
// rows; a key whose TTL runs out leaves the inspector without another;
// a clock advance is one request, whose answer carries the transcript's
// notices and the rows, as the server renders them for the page without
// JavaScript.
func TestPlaygroundOneRequestPerLine(t *testing.T) {
	s, err := New(testConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var asked []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/") {
			mu.Lock()
			asked = append(asked, r.Method+" "+r.URL.Path)
			mu.Unlock()
		}
		s.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	since := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := asked
		asked = nil
		return out
	}
	ctx := browsertest.New(t)
	browsertest.Open(t, ctx, ts.URL+"/playground", 1280, 900)
	browsertest.WaitFor(t, ctx, `!document.querySelector("[data-pg-keys-toggle]").hidden`) // the script is running
	if got := since(); len(got) != 0 {
		t.Errorf("the page asked %q as it loaded; want nothing, it comes with its rows", got)
	}
	input := chromedp.CSS(`[data-playground] input[name=line]`)
	typeLine := func(line string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Click(input), chromedp.SendKeys(input, line+kb.Enter)); err != nil {
			t.Fatal(err)
		}
	}
	row := func(key string) string {
		return fmt.Sprintf(`[...document.querySelectorAll("[data-pg-keys-rows] tr")].some(tr => tr.cells[0].textContent === %q)`, key)
	}
	one := func(what, want string) {
		t.Helper()
		if got := since(); !slices.Equal(got, []string{want}) {
			t.Errorf("%s: the page asked %q; want one %s", what, got, want)
		}
	}

	typeLine("SET lock:invoice:7 3f9a1c NX PX 30000")
	browsertest.WaitFor(t, ctx, row("lock:invoice:7"))
	one("a typed SET", "POST /api/playground/exec")
	// A TTL that runs out on the page: the row goes, and nothing is asked.
	typeLine("SET short v PX 400")
	browsertest.WaitFor(t, ctx, row("short"))
	browsertest.WaitFor(t, ctx, "!"+row("short")+` && document.querySelectorAll("[data-pg-keys-rows] tr").length === 1`)
	one("a SET whose TTL then ran out", "POST /api/playground/exec")
	typeLine("GET lock:invoice:7")
	browsertest.WaitFor(t, ctx, `[...document.querySelectorAll("[data-pg-transcript] .pg-out")].pop().textContent === '"3f9a1c"'`)
	one("a typed GET", "POST /api/playground/exec")

	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-pg-advance] button[value="30000"]`))); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, ctx, `document.querySelector("[data-pg-transcript] li:last-child").textContent === "lock:invoice:7 expired" && !`+row("lock:invoice:7"))
	one("+30 s", "POST /api/playground/advance")
	// The notices are the server's markup, as the page without JavaScript
	// shows them.
	got := text(t, ctx, `[...document.querySelectorAll("[data-pg-transcript] li.pg-notice")].map(li => li.outerHTML).join("")`)
	if want := `<li class="pg-notice">The sandbox clock moved forward 30 s.</li><li class="pg-notice">lock:invoice:7 expired</li>`; got != want {
		t.Errorf("the advance's notices = %s; want %s", got, want)
	}
	if empty := text(t, ctx, `String(document.querySelector("[data-pg-empty]").hidden)`); empty != "false" {
		t.Errorf("with no keys left, the inspector's empty note is hidden: %s", empty)
	}
}
