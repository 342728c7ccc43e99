package attack

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Workshops under attack: join codes guessed, a workshop filled from one
// address, and what a participant's commands cost the data directory.

// joinLimit and joinCodeLimit are the servers' default join limits (see
// limit.DefaultJoinRate and limit.DefaultWrongJoinCodes): joins a second
// per address, with bursts of twice that, and wrong codes a minute per
// address, with bursts of as many.
const (
	joinLimit     = 10
	joinCodeLimit = 10
)

// guessCode is the i-th code a guesser tries: six characters of the
// codes' alphabet, none of them a workshop's (the suite's codes are
// random; a clash is one in 31^6).
func guessCode(i int) string {
	const alphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
	b := []byte("ZZ")
	for n := i; len(b) < 6; n /= len(alphabet) {
		b = append(b, alphabet[n%len(alphabet)])
	}
	return string(b)
}

// guesses sends n wrong codes from b, by workers at once, half as join
// links and half as join forms; it returns the answers.
func guesses(b *browser, n, workers int) []answer {
	out := make([]answer, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				if i%2 == 0 {
					out[i] = b.get("/join/" + guessCode(i))
				} else {
					out[i] = b.postForm("/join", url.Values{"code": {guessCode(i)}, "nickname": {"guess"}})
				}
			}
		})
	}
	wg.Wait()
	return out
}

// attackJoinGuessing guesses join codes from one address, eight at a
// time: on the limited server the address gets 429 with Retry-After after
// a few wrong codes, and a learner from another address joins a real
// workshop all the same. The open server (no limits) shows how fast
// guesses are answered without them.
func attackJoinGuessing(t *testing.T, tg *target) {
	const n = 200
	open := newBrowser(tg.open)
	open.xff = "198.18.50.1"
	start := time.Now()
	before := guesses(open, n, 8)
	took := time.Since(start)
	wrong := 0
	for _, a := range before {
		if a.status == http.StatusNotFound || a.status == http.StatusBadRequest {
			wrong++
		}
	}
	t.Logf("open server (no limits): %d of %d wrong codes answered as such in %v, %.0f a second", wrong, n, took.Round(time.Millisecond), float64(wrong)/took.Seconds())

	s := tg.limited
	_, code := admin(t, s)
	guesser := newBrowser(s)
	guesser.xff = "198.18.50.2"
	start = time.Now()
	after := guesses(guesser, n, 8)
	took = time.Since(start)
	statuses := map[int]int{}
	answered, noRetry := 0, 0
	for _, a := range after {
		if a.err != nil {
			t.Fatalf("a guess: %v", a.err)
		}
		statuses[a.status]++
		switch {
		case a.status == http.StatusTooManyRequests && a.header.Get("Retry-After") == "":
			noRetry++
		case a.status == http.StatusTooManyRequests:
		case a.status >= 500:
			t.Errorf("a guess = %s; want no server error", a)
		default:
			answered++
		}
	}
	// The meter refills a guess every 6 s while the guesses go on.
	allowed := joinCodeLimit + int(took/(6*time.Second)) + 1
	t.Logf("limited server: %d wrong codes from one address in %v: statuses %v; %d answered (allowed %d)", n, took.Round(time.Millisecond), statuses, answered, allowed)
	if answered > allowed {
		t.Errorf("%d of %d wrong codes from one address were answered (statuses %v); want 429 after %d", answered, n, statuses, joinCodeLimit)
	}
	if noRetry > 0 {
		t.Errorf("%d answers 429 without Retry-After", noRetry)
	}

	// A learner at another address, meanwhile, joins with the right code
	// at once, on the limited server as on the idle control server.
	for _, srv := range []*server{s, tg.control} {
		wcode := code
		if srv == tg.control {
			_, wcode = admin(t, srv)
		}
		l := newBrowser(srv)
		l.xff = "198.18.50.3"
		link, joined := l.get("/join/"+wcode), l.postForm("/join", url.Values{"code": {wcode}, "nickname": {"Ada"}})
		t.Logf("%s server: a learner from another address: GET /join/CODE = %s, POST /join = %s", srv.name, link, joined)
		if link.status != http.StatusOK || joined.status != http.StatusSeeOther {
			t.Errorf("%s server: a learner from another address: join link %s, join %s; want 200 and 303", srv.name, link, joined)
		}
	}
}

// squat joins the workshop code from one address with n fresh browsers,
// eight at a time; it returns how many joined, how many were refused with
// 429 (and Retry-After), and how long it took.
func squat(t *testing.T, s *server, code, addr string, n int) (joined, refused int, took time.Duration) {
	t.Helper()
	var j, r, other atomic.Int64
	var next atomic.Int64
	var firstOther atomic.Value
	start := time.Now()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				b := newBrowser(s)
				b.xff = addr
				a := b.postForm("/join", url.Values{"code": {code}, "nickname": {fmt.Sprintf("seat %d", i)}})
				switch {
				case a.status == http.StatusSeeOther:
					j.Add(1)
				case a.status == http.StatusTooManyRequests && a.header.Get("Retry-After") != "":
					r.Add(1)
				default:
					other.Add(1)
					firstOther.CompareAndSwap(nil, a.String())
				}
			}
		})
	}
	wg.Wait()
	took = time.Since(start)
	if other.Load() > 0 {
		t.Logf("%s server: %d joins answered otherwise; first: %v", s.name, other.Load(), firstOther.Load())
	}
	return int(j.Load()), int(r.Load()), took
}

// attackJoinSquatting fills a workshop from one address with fresh
// cookies, eight joins at a time. On the open server (no limits) all 500
// places go in moments; on the limited server the address gets 429 after
// its burst, so the workshop keeps its places, and a learner from another
// address joins.
func attackJoinSquatting(t *testing.T, tg *target) {
	const places = 500
	_, openCode := admin(t, tg.open)
	joined, _, took := squat(t, tg.open, openCode, "198.18.51.1", places)
	t.Logf("open server (no limits): one address took %d of %d places in %v", joined, places, took.Round(time.Millisecond))

	s := tg.limited
	adm, code := admin(t, s)
	start := time.Now()
	joined, refused, took := squat(t, s, code, "198.18.51.2", places)
	allowed := 2*joinLimit + int(took.Seconds()*joinLimit) + 1
	t.Logf("limited server: one address tried %d joins in %v: %d joined, %d refused with 429 (allowed %d)", places, took.Round(time.Millisecond), joined, refused, allowed)
	if joined > allowed || refused == 0 {
		t.Errorf("one address: %d of %d joins let in, %d refused; want 429 after a burst of %d", joined, places, refused, 2*joinLimit)
	}
	l := newBrowser(s)
	l.xff = "198.18.51.3"
	if a := l.postForm("/join", url.Values{"code": {code}, "nickname": {"Ada"}}); a.status != http.StatusSeeOther {
		t.Errorf("a learner from another address joins = %s; want 303", a)
	}
	tg.mon.checkPings(t, s, start, time.Now(), "limited server, join squatting")
	var d struct {
		Joined int `json:"joined"`
	}
	if err := firstStats(adm, code, &d); err != nil {
		t.Fatal(err)
	}
	if d.Joined != joined+1 || d.Joined >= places {
		t.Errorf("dashboard: %d joined; want the squatter's %d and the learner, far from full", d.Joined, joined)
	}
}

// firstStats reads the first stats event of a workshop's dashboard
// stream into v.
func firstStats(adm *browser, code string, v any) error {
	req, _ := http.NewRequest("GET", adm.srv.base+"/admin/workshops/"+code+"/events", nil)
	c := &http.Client{Transport: transport, Jar: adm.jar, Timeout: 10 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	buf := make([]byte, 0, 64<<10)
	chunk := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if i := bytes.Index(buf, []byte("event: stats\ndata: ")); i >= 0 {
			rest := buf[i+len("event: stats\ndata: "):]
			if j := bytes.IndexByte(rest, '\n'); j >= 0 {
				return json.Unmarshal(rest[:j], v)
			}
		}
		if err != nil {
			return fmt.Errorf("no stats event: %w", err)
		}
	}
}

// writeBytes is what the server process has written to storage so far
// (/proc/PID/io write_bytes: the pages of its files it dirtied; its log
// goes to a pipe and does not count).
func writeBytes(t *testing.T, s *server) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", s.pid()))
	if err != nil {
		t.Fatalf("%s: %v", s.name, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "write_bytes: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("%s: no write_bytes in /proc/PID/io", s.name)
	return 0
}

// attackWorkshopWrites measures what one learner's playground commands
// cost the server's data directory, as bytes written to storage per
// command, in windows of equal length: a learner in no workshop, one
// whose cookie names a workshop they have not joined, and a participant.
// Each window lasts long enough for a participant's batch to be written
// (5 s, and the flusher's tick). A participant's command must cost under
// 4 KiB; the cookie alone, no more than a learner in no workshop.
func attackWorkshopWrites(t *testing.T, tg *target) {
	const (
		commands = 500
		window   = 9 * time.Second
	)
	s := tg.open
	adm, code := admin(t, s)
	measure := func(name string, b *browser) float64 {
		t.Helper()
		if a, out := b.exec("warm-"+name, "PING", ordinary); out != "PONG" {
			t.Fatalf("%s: first PING = %s", name, a)
		}
		start, w0 := time.Now(), writeBytes(t, s)
		for range commands {
			if a, out := b.exec(name, "PING", ordinary); out != "PONG" {
				t.Fatalf("%s: PING = %s", name, a)
			}
		}
		// A window of the same length for everyone: the background
		// (sweeps, the bystander) costs each the same.
		time.Sleep(time.Until(start.Add(window)))
		per := float64(writeBytes(t, s)-w0) / commands
		t.Logf("%s: %.0f bytes written per command (%d commands, %v window)", name, per, commands, window)
		return per
	}
	alone := newBrowser(s)
	outsider := newBrowser(s)
	u, _ := url.Parse(s.base)
	outsider.jar.SetCookies(u, []*http.Cookie{{Name: "locklab_workshop", Value: code}})
	member := newBrowser(s)
	if a := member.postForm("/join", url.Values{"code": {code}, "nickname": {"Writer"}}); a.status != http.StatusSeeOther {
		t.Fatalf("join = %s", a)
	}
	none, cookie, participant := measure("no-workshop", alone), measure("non-member", outsider), measure("participant", member)
	t.Logf("bytes written per command: participant %.0f, cookie naming the workshop %.0f, no workshop %.0f (issue 29 before: 38 KiB, 26 KiB, 0.3 KiB)", participant, cookie, none)
	if participant >= 4096 {
		t.Errorf("a participant's command wrote %.0f bytes; want under 4 KiB", participant)
	}
	if cookie > none+512 {
		t.Errorf("a cookie naming a workshop costs %.0f bytes a command, a learner in none %.0f; want the cookie to write nothing", cookie, none)
	}
	var d struct {
		Commands int `json:"commands"`
	}
	if err := firstStats(adm, code, &d); err != nil {
		t.Fatal(err)
	}
	if d.Commands != commands+1 {
		t.Errorf("dashboard: %d commands; want the participant's %d and none of the outsider's", d.Commands, commands+1)
	}
}
