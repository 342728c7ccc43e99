package browsertest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// WaitTimeout bounds how long WaitFor waits for a condition.
const WaitTimeout = 30 * time.Second

// WaitFor waits until the JavaScript expression js is truthy on the page,
// or fails the test after WaitTimeout. The browser evaluates it on every
// animation frame, so nothing here sleeps; an expression that throws (an
// element not there yet) counts as false, and a navigation meanwhile
// (which destroys the page's context) starts the wait again on the new
// page.
func WaitFor(t *testing.T, ctx context.Context, js string) {
	t.Helper()
	expr := fmt.Sprintf(`(() => { try { return !!(%s); } catch (e) { return false; } })()`, js)
	deadline := time.Now().Add(WaitTimeout)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			t.Fatalf("timed out after %v waiting for %s", WaitTimeout, js)
		}
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(left)))
		switch {
		case err == nil:
			return
		case errors.Is(err, chromedp.ErrPollingTimeout):
			t.Fatalf("timed out after %v waiting for %s", WaitTimeout, js)
		case ctx.Err() != nil:
			t.Fatalf("waiting for %s: %v", js, err)
		}
		// Any other error is the page going away under the poll.
	}
}

// Scripts turns the page's JavaScript on or off, for the pages' no-script
// paths. It holds for the tab until changed.
func Scripts(t *testing.T, ctx context.Context, on bool) {
	t.Helper()
	if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: !on}); err != nil {
		t.Fatalf("turn scripts on=%v: %v", on, err)
	}
}
