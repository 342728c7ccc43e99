package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/testenv"
)

// workshopRoom is a running server with a workshop that learners have
// joined: each learner's client holds their cookies.
type workshopRoom struct {
	t        *testing.T
	base     string
	code     string
	learners []*http.Client
}

// roomCSRF is the CSRF cookie every client of a room sends, and sends
// back in X-CSRF-Token, as the course's JavaScript does.
const roomCSRF = "TestTokenAbcdefghijklmnopqrstuvw"

// newRoomClient is a browser of base with the CSRF cookie set.
func newRoomClient(t *testing.T, base string) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	u, _ := url.Parse(base)
	jar.SetCookies(u, []*http.Cookie{{Name: "_csrf", Value: roomCSRF}})
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// roomPost posts a form and returns the status and Location.
func roomPost(c *http.Client, base, path, form string, hdr http.Header) (int, string, error) {
	req, _ := http.NewRequest("POST", base+path, strings.NewReader(form))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-CSRF-Token", roomCSRF)
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Location"), nil
}

// joinRoom starts a workshop on base as its instructor (token) and has n
// learners join it, a few at a time.
func joinRoom(t *testing.T, base, token string, n int) *workshopRoom {
	t.Helper()
	status, loc, err := roomPost(newRoomClient(t, base), base, "/admin/workshops", "title=Shutdown", http.Header{"Authorization": {"Bearer " + token}})
	code, ok := strings.CutPrefix(loc, "/admin/workshops/")
	if err != nil || status != http.StatusSeeOther || !ok {
		t.Fatalf("start a workshop = %d, Location %q, %v", status, loc, err)
	}
	room := &workshopRoom{t: t, base: base, code: code, learners: make([]*http.Client, n)}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				c := newRoomClient(t, base)
				status, _, err := roomPost(c, base, "/join", fmt.Sprintf("code=%s&nickname=learner%d", code, i), nil)
				if err == nil && status != http.StatusSeeOther {
					err = fmt.Errorf("learner %d joins = %d; want 303", i, status)
				}
				if err != nil {
					errs <- err
					continue
				}
				room.learners[i] = c
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return room
}

// openStream opens learner i's event stream and waits for its first
// event, so that the stream is being served when it returns.
func (r *workshopRoom) openStream(i int) (*bufio.Reader, io.Closer, error) {
	resp, err := r.learners[i].Get(r.base + "/api/workshop/events")
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, nil, fmt.Errorf("learner %d's events = %d; want 200", i, resp.StatusCode)
	}
	br := bufio.NewReader(resp.Body)
	if line, err := br.ReadString('\n'); err != nil || line != "event: state\n" {
		resp.Body.Close()
		return nil, nil, fmt.Errorf("learner %d's first line = %q, %v; want the state event", i, line, err)
	}
	return br, resp.Body, nil
}

// TestShutdownClosesEventStreams runs a workshop of 300 learners, each
// page holding its event stream, and stops the server as SIGTERM does:
// every stream must be told when to reconnect (the SSE retry field) and
// closed, and run must return nil. Shutdown waits up to 10 s for requests
// in flight and returns an error when that runs out, so nil says it did
// not wait for the streams' end: they ended because they were closed.
func TestShutdownClosesEventStreams(t *testing.T) {
	const (
		token    = "shutdown-test-admin-token-0123"
		learners = 300
	)
	base, stderr, stop := startServer(t, map[string]string{"LOCKLAB_ADMIN_TOKEN": token},
		"-sandbox-workers", "0", "-rate-limit", "0",
		"-max-conns-per-address", "0", "-max-idle-conns-per-address", "0",
		"-max-streams-per-address", "1000", "-max-participants", "1000")
	room := joinRoom(t, base, token, learners)

	streams := make([]*bufio.Reader, learners)
	bodies := make([]io.Closer, learners)
	var wg sync.WaitGroup
	errs := make(chan error, learners)
	for i := range learners {
		wg.Go(func() {
			br, body, err := room.openStream(i)
			if err != nil {
				errs <- err
				return
			}
			streams[i], bodies[i] = br, body
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, b := range bodies {
			b.Close()
		}
	})

	// Each stream is read to its end while the server stops.
	retry := regexp.MustCompile(`\nretry: \d+\n\n$`)
	ends := make([]chan string, learners)
	for i, br := range streams {
		ends[i] = make(chan string, 1)
		go func() {
			rest, err := io.ReadAll(br)
			switch {
			case err != nil:
				ends[i] <- fmt.Sprintf("stream %d broke: %v", i, err)
			case !retry.MatchString("\n" + string(rest)):
				ends[i] <- fmt.Sprintf("stream %d ended with %q; want a retry field", i, rest)
			default:
				ends[i] <- ""
			}
		}()
	}

	began := time.Now()
	err := stop()
	took := time.Since(began)
	t.Logf("with %d event streams open, run returned %v after the cancel", learners, took.Round(time.Millisecond))
	if err != nil {
		t.Fatalf("run after cancel = %v; want nil (the streams closed, no wait for the timeout)\nstderr ends %s", err, tail(stderr.String(), 2000))
	}
	deadline := time.After(testenv.HangGuard)
	for i := range ends {
		select {
		case msg := <-ends[i]:
			if msg != "" {
				t.Error(msg)
			}
		case <-deadline:
			t.Fatalf("stream %d still open after run returned", i)
		}
	}
	if !strings.Contains(stderr.String(), "msg=\"shut down\"") {
		t.Errorf("the log does not say the server shut down:\n%s", tail(stderr.String(), 2000))
	}
	// Slow tier: the whole shutdown fits in the 2 s a container platform
	// can be given for it.
	if testenv.SlowTier() && took > 2*time.Second {
		t.Errorf("shutdown with %d streams open took %v; want under 2s", learners, took)
	}
}

// tail is the last n bytes of s.
func tail(s string, n int) string { return s[max(0, len(s)-n):] }
