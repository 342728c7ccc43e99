package web

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/locklab/locklab/internal/browsertest"
)

// TestNodesInBrowser drives the learner's five nodes as a learner does:
// the node selector of the terminal, the node panel's buttons, the
// terminal's own node lines, and a five-node example of the lesson, with
// and without JavaScript, at the three widths, light and dark.
func TestNodesInBrowser(t *testing.T) {
	ts := newTestServer(t)
	ctx := browsertest.New(t)
	typeLine := func(line string) {
		t.Helper()
		input := chromedp.CSS(`[data-playground] input[name=line]`)
		if err := chromedp.Do(ctx, chromedp.Click(input), chromedp.SendKeys(input, line+kb.Enter)); err != nil {
			t.Fatal(err)
		}
	}
	lastOutput := func() string {
		return text(t, ctx, `[...document.querySelectorAll("[data-pg-transcript] .pg-out")].at(-1)?.textContent ?? ""`)
	}
	nodeItem := func(n int) string {
		return fmt.Sprintf(`document.querySelectorAll("[data-pg-nodes] li")[%d]`, n-1)
	}
	setSelect := func(sel, value string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(sel), value)); err != nil {
			t.Fatalf("set %s to %s: %v", sel, value, err)
		}
	}

	browsertest.ColorScheme(t, ctx, "light")
	browsertest.Open(t, ctx, ts.URL+"/playground", 1280, 900)
	browsertest.WaitFor(t, ctx, `document.querySelectorAll("[data-pg-nodes] li").length === 5`)
	if s := text(t, ctx, nodeItem(3)+`.textContent.trim()`); s != "@3 not started" {
		t.Errorf("node 3 before any line = %q", s)
	}

	// The selector sends a line to node 3; the inspector says which node
	// holds the key, and the panel that node 3 runs.
	setSelect(`[data-pg-target]`, "3")
	typeLine("SET lock:report a71c NX PX 30000")
	browsertest.WaitFor(t, ctx, `[...document.querySelectorAll("[data-pg-keys-rows] tr")].some(tr => tr.cells[0].textContent === "@3 lock:report")`)
	browsertest.WaitFor(t, ctx, nodeItem(3)+`.textContent.includes("running")`)
	if cmd := text(t, ctx, `[...document.querySelectorAll("[data-pg-transcript] .pg-cmd")].at(-1).textContent`); !strings.Contains(cmd, "@3 SET lock:report") {
		t.Errorf("the transcript shows %q; want the line with its @3", cmd)
	}

	// The panel stops node 3: its key leaves the inspector, and a line
	// to it finds the connection closed, then refused.
	setSelect(`[data-pg-node-form] select[name=node]`, "3")
	clickJS(t, ctx, `document.querySelector('[data-pg-node-form] button[value="stop"]')`)
	browsertest.WaitFor(t, ctx, nodeItem(3)+`.textContent.includes("stopped")`)
	browsertest.WaitFor(t, ctx, `![...document.querySelectorAll("[data-pg-keys-rows] tr")].some(tr => tr.cells[0].textContent.startsWith("@3"))`)
	typeLine("GET lock:report")
	browsertest.WaitFor(t, ctx, fmt.Sprintf(`[...document.querySelectorAll("[data-pg-transcript] .pg-out")].at(-1)?.textContent === %q`, "Error: Server closed the connection"))
	typeLine("GET lock:report")
	browsertest.WaitFor(t, ctx, fmt.Sprintf(`[...document.querySelectorAll("[data-pg-transcript] .pg-out")].at(-1)?.textContent === %q`, "Could not connect to Redis at node 3: Connection refused"))

	// Started again with its data; then its clock jumps past the TTL.
	clickJS(t, ctx, `document.querySelector('[data-pg-node-form] input[name=persist]')`)
	clickJS(t, ctx, `document.querySelector('[data-pg-node-form] button[value="start"]')`)
	browsertest.WaitFor(t, ctx, nodeItem(3)+`.textContent.includes("running")`)
	browsertest.WaitFor(t, ctx, `[...document.querySelectorAll("[data-pg-keys-rows] tr")].some(tr => tr.cells[0].textContent === "@3 lock:report")`)
	for range 4 {
		clickJS(t, ctx, `document.querySelector('[data-pg-node-form] button[value="10000"]')`)
	}
	browsertest.WaitFor(t, ctx, nodeItem(3)+`.textContent.includes("clock +40 s")`)
	browsertest.WaitFor(t, ctx, `[...document.querySelectorAll("[data-pg-transcript] li")].some(li => li.textContent === "lock:report expired")`)

	// The terminal's own lines, and @all with its verdict.
	setSelect(`[data-pg-target]`, "1")
	typeLine("node 5 stop")
	browsertest.WaitFor(t, ctx, nodeItem(5)+`.textContent.includes("stopped")`)
	typeLine("@all SET lock:all a71c NX PX 30000")
	browsertest.WaitFor(t, ctx, `[...document.querySelectorAll("[data-pg-transcript] .pg-out")].at(-1)?.textContent.includes("Redlock: 4 of 5 nodes said OK, a majority (3 needed)")`)
	if out := lastOutput(); !strings.Contains(out, "@5 Could not connect to Redis at node 5: Connection refused") {
		t.Errorf("@all with node 5 stopped =\n%s", out)
	}
	browsertest.RequireNoSerious(t, browsertest.Axe(t, ctx), "playground with nodes, light")

	// A five-node example of the lesson runs as printed.
	browsertest.Open(t, ctx, ts.URL+"/topics/distributed-locks", 1280, 900)
	typeLine("node 5 start")
	browsertest.WaitFor(t, ctx, nodeItem(5)+`.textContent.includes("running")`)
	idx := text(t, ctx, `String([...document.querySelectorAll("[data-redis-cli]")].findIndex(b => b.textContent.includes("@all SET lock:report a71c")))`)
	run := fmt.Sprintf(`document.querySelectorAll("[data-redis-cli]")[%s].querySelector(".cli-run:not(.cli-edit)")`, idx)
	clickJS(t, ctx, run)
	res := fmt.Sprintf(`document.querySelectorAll("[data-redis-cli]")[%s].querySelector(".cli-result")`, idx)
	browsertest.WaitFor(t, ctx, res+`.textContent.includes("as printed")`)
}

// TestNodesLook shows the node panel at the three widths, light and
// dark: no overflow, axe-clean, and a screenshot of each to look at.
func TestNodesLook(t *testing.T) {
	ts := newTestServer(t)
	ctx := browsertest.New(t)
	for _, w := range []int64{390, 1280, 1920} {
		for _, scheme := range []string{"light", "dark"} {
			browsertest.ColorScheme(t, ctx, scheme)
			browsertest.Open(t, ctx, ts.URL+"/playground", w, 900)
			browsertest.WaitFor(t, ctx, `document.querySelectorAll("[data-pg-nodes] li").length === 5`)
			if over := text(t, ctx, `String(document.documentElement.scrollWidth > window.innerWidth)`); over != "false" {
				t.Errorf("the playground with nodes overflows at %d px (%s)", w, scheme)
			}
			browsertest.ElementScreenshot(t, ctx, "[data-pg-keys-box]", fmt.Sprintf("nodes-panel-%d-%s", w, scheme))
			if scheme == "dark" && w == 390 {
				browsertest.RequireNoSerious(t, browsertest.Axe(t, ctx), fmt.Sprintf("playground with nodes, %d px dark", w))
			}
		}
	}
}

// TestNodesWithoutJavaScript: the panel's form and the selector post,
// and the page they lead back to says what they did.
func TestNodesWithoutJavaScript(t *testing.T) {
	ts := newTestServer(t)
	ctx := browsertest.New(t)
	nodeItem := func(n int) string {
		return fmt.Sprintf(`document.querySelectorAll("[data-pg-nodes] li")[%d]`, n-1)
	}
	setSelect := func(sel, value string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(sel), value)); err != nil {
			t.Fatalf("set %s to %s: %v", sel, value, err)
		}
	}
	browsertest.Scripts(t, ctx, false)
	browsertest.Open(t, ctx, ts.URL+"/playground", 390, 900)
	setSelect(`[data-pg-node-form] select[name=node]`, "2")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-pg-node-form] button[value="stop"]`))); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, ctx, `[...document.querySelectorAll("[data-pg-transcript] li")].some(li => li.textContent.startsWith("Node 2 stopped"))`)
	browsertest.WaitFor(t, ctx, nodeItem(2)+`.textContent.includes("stopped")`)
	setSelect(`[data-pg-target]`, "all")
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(`[data-playground] input[name=line]`), "PING"), chromedp.Click(chromedp.CSS(`[data-pg-form] button[type=submit]`))); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, ctx, `[...document.querySelectorAll("[data-pg-transcript] .pg-out")].some(o => o.textContent.includes("@2 Could not connect to Redis at node 2"))`)
	browsertest.ElementScreenshot(t, ctx, "[data-playground]", "nodes-nojs-390")
	// axe-core is a script: it runs with scripts on, on the page as it
	// was without them.
	browsertest.Scripts(t, ctx, true)
	browsertest.RequireNoSerious(t, browsertest.Axe(t, ctx), "playground with nodes, no JavaScript")
}
