package browsertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// WaitTimeout bounds how long WaitFor waits for a condition.
const WaitTimeout = 30 * time.Second

// WaitFor waits until the JavaScript expression js is truthy on the page,
// or fails the test after WaitTimeout. It evaluates js from here every
// pollEvery rather than with chromedp.Poll, whose polling and timeout run
// on the page's own timers and animation frames: those do not run while
// the page's scripts are off (Scripts(false)), and a no-script test whose
// condition was false at the first look then waited for its whole
// context. An expression that throws (an element not there yet) counts as
// false, and an evaluation that a navigation cuts short is tried again on
// the new page.
func WaitFor(t *testing.T, ctx context.Context, js string) {
	t.Helper()
	expr := fmt.Sprintf(`(() => { try { return !!(%s); } catch (e) { return false; } })()`, js)
	deadline := time.Now().Add(WaitTimeout)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		switch {
		case err == nil && ok:
			return
		case ctx.Err() != nil:
			t.Fatalf("waiting for %s: %v", js, ctx.Err())
		case time.Now().After(deadline):
			t.Fatalf("timed out after %v waiting for %s (last error: %v)", WaitTimeout, js, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(pollEvery):
		}
	}
}

// pollEvery is how often WaitFor looks: about a frame.
const pollEvery = 15 * time.Millisecond

// Scripts turns the page's JavaScript on or off, for the pages' no-script
// paths. It holds for the tab until changed.
func Scripts(t *testing.T, ctx context.Context, on bool) {
	t.Helper()
	if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: !on}); err != nil {
		t.Fatalf("turn scripts on=%v: %v", on, err)
	}
}
