package browsertest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestAxeFindsProblems proves the accessibility check can fail: a page with
// an unlabelled image and no document language must produce violations.
func TestAxeFindsProblems(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping browser test in -short mode")
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<!doctype html><html><head><title>bad</title></head><body><img src="/x.png"><button></button></body></html>`))
	}))
	defer ts.Close()
	ctx := New(t)
	Open(t, ctx, ts.URL, 800, 600)
	found := map[string]string{}
	for _, v := range Axe(t, ctx) {
		found[v.ID] = v.Impact
	}
	for _, id := range []string{"image-alt", "button-name", "html-has-lang"} {
		if found[id] == "" {
			t.Errorf("axe-core did not report %s; got %v", id, found)
		}
	}
	if found["image-alt"] != "critical" {
		t.Errorf("image-alt impact = %q; want critical", found["image-alt"])
	}
}

// TestWaitForWithScriptsOff checks that WaitFor sees a condition become
// true on a page whose scripts are off, where the page's own timers and
// animation frames do not run: only a look from outside sees the change.
func TestWaitForWithScriptsOff(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping browser test in -short mode")
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<!doctype html><html lang="en"><head><title>wait</title></head><body><p>here</p></body></html>`))
	}))
	defer ts.Close()
	ctx := New(t)
	Scripts(t, ctx, false)
	Open(t, ctx, ts.URL, 800, 600)
	start := time.Now()
	// False at the first look, true 300 ms later, with nothing on the
	// page changing.
	WaitFor(t, ctx, fmt.Sprintf("Date.now() > %d", time.Now().Add(300*time.Millisecond).UnixMilli()))
	if waited := time.Since(start); waited < 300*time.Millisecond || waited > 5*time.Second {
		t.Errorf("WaitFor returned after %v; want soon after 300 ms", waited)
	}
}
