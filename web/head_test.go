package web

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestHEADAnswersAsGETWithoutABody checks that a page, an asset, a read-only
// API and the health check answer HEAD with GET's status and headers and no
// body, and that a missing page's HEAD is still a 404.
func TestHEADAnswersAsGETWithoutABody(t *testing.T) {
	ts := newTestServer(t)
	_, home := get(t, ts.URL, "/")
	css := assetVersion.FindString(home)
	if css == "" {
		t.Fatal("the home page links no versioned style sheet")
	}
	for _, path := range []string{
		"/", "/topics/distributed-locks", "/race", "/race/present", "/playground", "/lab",
		"/progress", "/healthz", "/api/race/scenarios", "/api/topics/distributed-locks/quiz",
		"/static/" + css + "css", "/topics/no-such-topic", "/api/no-such-endpoint", "/race/",
	} {
		resp, body := get(t, ts.URL, path)
		head, got := fetch(t, http.MethodHead, ts.URL, path)
		if head.StatusCode != resp.StatusCode {
			t.Errorf("HEAD %s = %d; GET answers %d", path, head.StatusCode, resp.StatusCode)
		}
		if len(got) != 0 {
			t.Errorf("HEAD %s sent a body of %d bytes", path, len(got))
		}
		for _, h := range []string{"Content-Type", "Cache-Control", "Content-Security-Policy", "Vary", "Location"} {
			if g, w := head.Header.Values(h), resp.Header.Values(h); strings.Join(g, ", ") != strings.Join(w, ", ") {
				t.Errorf("HEAD %s: %s = %q; GET sends %q", path, h, g, w)
			}
		}
		// Only a page's length is the same: an error names the method, and
		// net/http sends no Content-Length for an empty HEAD answer.
		if cl := resp.Header.Get("Content-Length"); resp.StatusCode == http.StatusOK && head.Header.Get("Content-Length") != cl {
			t.Errorf("HEAD %s: Content-Length %q; GET sends %q", path, head.Header.Get("Content-Length"), cl)
		}
		if resp.StatusCode == http.StatusOK && len(body) == 0 {
			t.Errorf("GET %s sent no body, so this comparison shows nothing", path)
		}
	}
}

// TestEveryReadRouteTakesHEAD walks the route table: every GET route has a
// HEAD twin, except the event streams, whose HEAD would hold a connection
// open; writes take no HEAD.
func TestEveryReadRouteTakesHEAD(t *testing.T) {
	s := newAdminServer(t)
	byPath := routeTable(s)
	gets := 0
	for path, methods := range byPath {
		stream := strings.HasSuffix(path, "/events")
		switch {
		case methods[http.MethodGet] && stream && methods[http.MethodHead]:
			t.Errorf("%s is an event stream and takes HEAD", path)
		case methods[http.MethodGet] && !stream && !methods[http.MethodHead]:
			t.Errorf("GET %s has no HEAD", path)
		case methods[http.MethodHead] && !methods[http.MethodGet]:
			t.Errorf("HEAD %s has no GET", path)
		}
		if methods[http.MethodGet] {
			gets++
		}
	}
	if gets < 20 {
		t.Fatalf("only %d GET routes in the table; the walk saw too little", gets)
	}

	// A HEAD of a stream answers at once, and not as a stream.
	base := newServerFor(t, s)
	client := &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, path := range []string{"/admin/workshops/ABCDEF/events", "/api/workshop/events"} {
		req, _ := http.NewRequest(http.MethodHead, base+path, nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("HEAD %s: %v", path, err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK || strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			t.Errorf("HEAD %s = %d %s; want a refusal", path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
}
