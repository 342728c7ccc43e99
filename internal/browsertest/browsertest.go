// Package browsertest drives Debian's headless Chromium through chromedp
// for Lock Lab's page tests: it opens pages at a given width, saves
// screenshots, and runs axe-core accessibility checks on them.
package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/locklab/locklab/internal/testenv"
)

// New starts a headless Chromium for the test and returns a browser tab's
// context. The browser is closed when the test ends. A browser test takes
// seconds, so New skips it outside the slow tier (testenv.Slow).
func New(t *testing.T) context.Context {
	t.Helper()
	testenv.Slow(t, "browser")
	bin := testenv.LookPath(t, "Debian: apt-get install chromium", "chromium", "chromium-browser", "google-chrome")
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancelTab(); cancelAlloc() })
	// Axe is injected through the protocol; the site's CSP would refuse it.
	if _, err := chromedp.Call(ctx, page.SetBypassCSP, page.SetBypassCSPParams{Enabled: true}); err != nil {
		t.Fatalf("start chromium %s: %v", bin, err)
	}
	return ctx
}

// Open loads url in a viewport of the given width and waits for the page.
func Open(t *testing.T, ctx context.Context, url string, width, height int64) {
	t.Helper()
	err := chromedp.Do(ctx,
		chromedp.EmulateViewport(width, height),
		chromedp.Navigate(url),
		chromedp.WaitReady(chromedp.CSS("body")),
	)
	if err != nil {
		t.Fatalf("open %s at %dx%d: %v", url, width, height, err)
	}
}

// ColorScheme makes the page see the reader's preference: "light" or "dark".
func ColorScheme(t *testing.T, ctx context.Context, scheme string) {
	t.Helper()
	_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
	})
	if err != nil {
		t.Fatalf("emulate prefers-color-scheme %s: %v", scheme, err)
	}
}

// Screenshot saves a full-page PNG named name.png and returns its path. The
// file goes to the test's temp dir, or to $LOCKLAB_SCREENSHOTS when set, so a
// developer can keep the pictures and look at them.
func Screenshot(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	return save(t, name, png)
}

// ElementScreenshot saves a PNG of the first element matching the CSS
// selector, for a close look at one widget of a long page.
func ElementScreenshot(t *testing.T, ctx context.Context, selector, name string) string {
	t.Helper()
	// The page's stylesheet and fonts first: an element taken while they
	// load is the unstyled element (a QR code at the wrong size).
	WaitFor(t, ctx, `document.readyState === "complete" && document.fonts.status === "loaded"`)
	png, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(selector)))
	if err != nil {
		t.Fatalf("screenshot of %s: %v", selector, err)
	}
	return save(t, name, png)
}

func save(t *testing.T, name string, png []byte) string {
	t.Helper()
	dir := os.Getenv("LOCKLAB_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", p, len(png))
	return p
}

// Violation is one axe-core rule that failed on the page.
type Violation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target []any  `json:"target"`
		HTML   string `json:"html"`
	} `json:"nodes"`
}

func (v Violation) String() string {
	var targets []string
	for _, n := range v.Nodes {
		targets = append(targets, fmt.Sprint(n.Target...)+" "+n.HTML)
	}
	return fmt.Sprintf("%s (%s): %s\n    %s", v.ID, v.Impact, v.Help, strings.Join(targets, "\n    "))
}

// Axe runs axe-core on the current page and returns its violations.
func Axe(t *testing.T, ctx context.Context) []Violation {
	t.Helper()
	src := axeSource(t)
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](src)); err != nil {
		t.Fatalf("load axe-core: %v", err)
	}
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](
		`axe.run(document, {resultTypes: ["violations"]}).then(r => JSON.stringify(r.violations))`,
		chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("run axe-core: %v", err)
	}
	var vs []Violation
	if err := json.Unmarshal([]byte(raw), &vs); err != nil {
		t.Fatalf("axe-core result: %v", err)
	}
	return vs
}

// RequireNoSerious fails the test for every serious or critical violation,
// and logs the others.
func RequireNoSerious(t *testing.T, vs []Violation, page string) {
	t.Helper()
	for _, v := range vs {
		if v.Impact == "serious" || v.Impact == "critical" {
			t.Errorf("axe-core on %s: %s", page, v)
		} else {
			t.Logf("axe-core on %s (minor): %s", page, v)
		}
	}
}

var (
	axeOnce sync.Once
	axeJS   string
	axeErr  error
)

// axeSource returns axe.min.js from node_modules at the repository root,
// installing it with npm from package-lock.json the first time if needed.
func axeSource(t *testing.T) string {
	t.Helper()
	root := testenv.RepoRoot(t)
	file := filepath.Join(root, "node_modules", "axe-core", "axe.min.js")
	axeOnce.Do(func() {
		if _, err := os.Stat(file); err != nil {
			npm, lookErr := exec.LookPath("npm")
			if lookErr != nil {
				axeErr = fmt.Errorf("%s is missing and npm is not on PATH (run npm ci at the repository root)", file)
				return
			}
			cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund")
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				axeErr = fmt.Errorf("npm ci for axe-core: %v\n%s", err, out)
				return
			}
		}
		b, err := os.ReadFile(file)
		axeJS, axeErr = string(b), err
	})
	if axeErr != nil {
		testenv.Missing(t, "axe-core: %v", axeErr)
	}
	return axeJS
}
