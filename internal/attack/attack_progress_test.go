package attack

import (
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/testenv"
)

// unavailableMessage is what the manual promises a learner whose progress
// cannot be saved right now (store.ErrUnavailable, a 503).
const unavailableMessage = "your progress can't be saved right now; please try again in a moment"

// newcomersPerDay is the limited server's -new-learners-per-address.
const newcomersPerDay = 500

// dataDir is the data directory s was started with (the last -data).
func dataDir(t *testing.T, s *server) string {
	t.Helper()
	dir := ""
	for i, a := range s.cmd.Args {
		if a == "-data" && i+1 < len(s.cmd.Args) {
			dir = s.cmd.Args[i+1]
		}
	}
	if dir == "" {
		t.Fatalf("%s server: no -data among its arguments %q", s.name, s.cmd.Args)
	}
	return dir
}

// diskUse is what the progress file of s takes on disk (its allocated
// blocks: bbolt sizes the file ahead in steps, but writes only the pages
// it uses).
func diskUse(t *testing.T, s *server) int64 {
	t.Helper()
	fi, err := os.Stat(filepath.Join(dataDir(t, s), "progress.db"))
	if err != nil {
		t.Fatalf("%s server: %v", s.name, err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Blocks * 512
	}
	return fi.Size()
}

// quizAnswer is the part of POST /api/topics/{slug}/quiz/{question} the
// attacks read.
type quizAnswer struct {
	Correct  bool   `json:"correct"`
	NotSaved string `json:"not_saved"`
	Progress struct {
		Right int `json:"right"`
	} `json:"progress"`
}

// floodTally counts what a flood of newcomers got.
type floodTally struct {
	mu                       sync.Mutex
	statuses                 map[int]int
	saved, notSaved, refused int
	firstBad                 string
}

// newcomerFlood sends n cookieless right answers from the address from,
// workers at a time: each is a new learner, as a script that drops its
// cookies would be. The double-submit CSRF token is any value sent both
// as the cookie and the header, so no request is needed before.
func newcomerFlood(s *server, from string, n, workers int) *floodTally {
	ft := &floodTally{statuses: map[int]int{}}
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			req, _ := http.NewRequest("POST", s.base+"/api/topics/distributed-locks/quiz/gc-pause", strings.NewReader(`{"choice":"fencing"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Cookie", "_csrf=floodfloodfloodfloodfloodfloodfl")
			req.Header.Set("X-CSRF-Token", "floodfloodfloodfloodfloodfloodfl")
			req.Header.Set("X-Forwarded-For", from)
			resp, err := (&http.Client{Transport: transport, Timeout: ordinary + slack}).Do(req)
			var qa quizAnswer
			status := 0
			if err == nil {
				status = resp.StatusCode
				_ = json.NewDecoder(resp.Body).Decode(&qa)
				resp.Body.Close()
			}
			ft.mu.Lock()
			defer ft.mu.Unlock()
			ft.statuses[status]++
			switch {
			case status == http.StatusOK && qa.Correct && qa.NotSaved == "":
				ft.saved++
			case status == http.StatusOK && qa.Correct && strings.Contains(qa.NotSaved, "not being saved"):
				ft.notSaved++
			case status == http.StatusTooManyRequests && resp.Header.Get("Retry-After") != "":
				ft.refused++ // the per-address write limit
			case ft.firstBad == "":
				ft.firstBad = fmt.Sprintf("%d %v %+v", status, err, qa)
			}
		})
	}
	wg.Wait()
	return ft
}

// attackProgressFlood: one address creates new learners' progress as fast
// as it can, as a script that drops its cookies would (before: about 200
// new learners saved a second, some 7 GB a day kept 400 days). On the
// open server, with every limit off, each is saved: what each costs the
// disk. On the limited server the address has its day's allowance of
// newcomers saved, and no more: the others are still graded and told
// their progress is not saved, a learner of that address saved before
// still saves, a learner at another address still saves, and a second
// flood adds nothing to the disk.
func attackProgressFlood(t *testing.T, tg *target) {
	const attacker = "198.51.100.90"
	// Before: every newcomer saved.
	open0 := diskUse(t, tg.open)
	start := time.Now()
	ft := newcomerFlood(tg.open, attacker, 1000, 8)
	took := time.Since(start)
	openGrew := diskUse(t, tg.open) - open0
	perNewcomer := openGrew / int64(max(ft.saved, 1))
	t.Logf("open server (limits off): 1000 newcomers from one address in %v: statuses %v, %d saved; progress file +%d KB, %d bytes a newcomer: %.1f GB a day at this rate",
		took.Round(time.Millisecond), ft.statuses, ft.saved, openGrew>>10, perNewcomer,
		float64(perNewcomer)*float64(ft.saved)/took.Seconds()*86400/1e9)
	if ft.statuses[http.StatusInternalServerError] > 0 || ft.firstBad != "" {
		t.Errorf("open server: a newcomer's answer failed: %s", ft.firstBad)
	}

	s := tg.limited
	early := newBrowser(s)
	early.xff = attacker
	if a := early.postJSON("/api/topics/distributed-locks/quiz/gc-pause", map[string]string{"choice": "fencing"}, ordinary); a.status != http.StatusOK {
		t.Fatalf("a learner of the attacker's address before the flood = %s", a)
	}
	disk0, ctl0 := diskUse(t, s), diskUse(t, tg.control)
	from := time.Now()
	ft = newcomerFlood(s, attacker, 2000, 8)
	to := time.Now()
	disk1 := diskUse(t, s)
	t.Logf("limited server: 2000 newcomers from one address in %v: statuses %v; %d saved, %d graded but not saved, %d refused with Retry-After; progress file +%d KB",
		to.Sub(from).Round(time.Millisecond), ft.statuses, ft.saved, ft.notSaved, ft.refused, (disk1-disk0)>>10)
	if ft.firstBad != "" {
		t.Errorf("a newcomer got neither a graded answer nor a 429 with Retry-After: %s", ft.firstBad)
	}
	// The early learner took one of the day's allowance; concurrent
	// newcomers may each read the last one left.
	if ft.saved > newcomersPerDay-1+8 {
		t.Errorf("%d newcomers of one address were saved; want at most the day's allowance of %d", ft.saved, newcomersPerDay)
	}
	if ft.notSaved == 0 {
		t.Error("no newcomer was told their progress is not saved")
	}
	tg.mon.checkPings(t, s, from, to, "progress flood")

	// A learner of that address saved before still saves, once the
	// address's write limit lets them through, as a browser would retry.
	var qa quizAnswer
	a := retryAfter(func() answer {
		return early.postJSON("/api/topics/distributed-locks/quiz/release-script", map[string]string{"choice": "other-holder"}, ordinary)
	})
	if err := json.Unmarshal(a.body, &qa); a.status != http.StatusOK || err != nil || qa.NotSaved != "" || qa.Progress.Right != 2 {
		t.Errorf("the learner saved before the flood answers again = %s; want saved, 2 right", a)
	}
	// A learner at another address saves, and finds it saved.
	other := newBrowser(s)
	other.xff = "203.0.113.90"
	a = other.postJSON("/api/topics/distributed-locks/quiz/gc-pause", map[string]string{"choice": "fencing"}, ordinary)
	if err := json.Unmarshal(a.body, &qa); a.status != http.StatusOK || err != nil || qa.NotSaved != "" {
		t.Errorf("a newcomer at another address = %s; want saved", a)
	}
	var quiz struct {
		Progress struct {
			Right int `json:"right"`
		} `json:"progress"`
	}
	if err := json.Unmarshal(other.get("/api/topics/distributed-locks/quiz").body, &quiz); err != nil || quiz.Progress.Right != 1 {
		t.Errorf("the newcomer at another address reads back %d right (%v); want 1", quiz.Progress.Right, err)
	}

	// A second flood, the allowance spent: nothing more on disk than
	// the idle control server adds over the same time, give or take a
	// few pages.
	disk2, ctl1 := diskUse(t, s), diskUse(t, tg.control)
	ft = newcomerFlood(s, attacker, 1000, 8)
	grew, ctlGrew := diskUse(t, s)-disk2, diskUse(t, tg.control)-ctl1
	t.Logf("limited server, allowance spent: 1000 more newcomers: statuses %v; %d saved, %d not saved; progress file +%d KB (control +%d KB; since before the floods, limited +%d KB, control +%d KB)",
		ft.statuses, ft.saved, ft.notSaved, grew>>10, ctlGrew>>10, (diskUse(t, s)-disk0)>>10, (diskUse(t, tg.control)-ctl0)>>10)
	if ft.saved > 8 {
		t.Errorf("with the day's allowance spent, %d more newcomers were saved; want none (or the few concurrent ones)", ft.saved)
	}
	if limit := ctlGrew + 64<<10; grew > limit {
		t.Errorf("with the day's allowance spent, the progress file grew %d KB; want at most %d KB (the control's growth and 64 KB)", grew>>10, limit>>10)
	}
}

// retryAfter sends a request again, up to three times, after the wait a
// 429 names in Retry-After.
func retryAfter(send func() answer) answer {
	a := send()
	for range 3 {
		if a.status != http.StatusTooManyRequests {
			break
		}
		wait, err := strconv.Atoi(a.header.Get("Retry-After"))
		if err != nil {
			break
		}
		time.Sleep(time.Duration(wait) * time.Second) // as the server asked
		a = send()
	}
	return a
}

// fullDiskSize is the size of the tmpfs the full-disk server keeps its
// progress on.
const fullDiskSize = 4 << 20

// attackFullDisk starts a server whose data directory is a small tmpfs,
// saves a learner's progress, a carry code and a workshop, then fills
// the tmpfs. Before, 40 of 1,615 answers on a full disk were 500. Now
// every write answers 503 with the manual's message, or succeeds if it
// still fits in the file's free pages, never 500; the playground works;
// what was saved reads back; and once there is room again, answers are
// saved, with no restart.
func attackFullDisk(t *testing.T, tg *target) {
	if os.Geteuid() != 0 {
		testenv.Missing(t, "the full-disk attack mounts a tmpfs and needs root (uid %d)", os.Geteuid())
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", fullDiskSize)); err != nil {
		testenv.Missing(t, "cannot mount a tmpfs for the full-disk attack: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	s := startServer(t, tg.control.cmd.Path, "fulldisk", map[string]string{"LOCKLAB_ADMIN_TOKEN": adminToken},
		"-sandbox-workers", "0", "-rate-limit", "0", "-data", dir)
	ada := newBrowser(s)
	ada.xff = "203.0.113.50"
	if a := ada.postJSON("/api/topics/distributed-locks/quiz/gc-pause", map[string]string{"choice": "fencing"}, ordinary); a.status != http.StatusOK {
		t.Fatalf("ada's first answer = %s", a)
	}
	code, a := newCarryCode(ada)
	if a.status != http.StatusOK {
		t.Fatalf("ada's carry code = %s", a)
	}
	teacher, wcode := admin(t, s)

	// Fill the tmpfs.
	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill the tmpfs: %v", err)
			}
			break
		}
	}
	f.Close()

	statuses := map[string]map[int]int{}
	unavailable, bad := 0, []string{}
	check := func(what string, a answer) {
		t.Helper()
		if statuses[what] == nil {
			statuses[what] = map[int]int{}
		}
		statuses[what][a.status]++
		switch {
		case a.err != nil || a.status >= 500 && a.status != http.StatusServiceUnavailable:
			bad = append(bad, fmt.Sprintf("%s: %s", what, a))
		case a.status == http.StatusServiceUnavailable:
			unavailable++
			if !strings.Contains(strings.ToLower(html.UnescapeString(string(a.body))), unavailableMessage) {
				bad = append(bad, fmt.Sprintf("%s: 503 without the manual's message: %s", what, a))
			}
		}
	}
	// Newcomers' answers until the disk refuses one: the first writes
	// may still fit in the file's free pages.
	saved := 0
	for i := range 200 {
		b := newBrowser(s)
		b.xff = fmt.Sprintf("198.51.100.%d", 100+i%50)
		a := b.postJSON("/api/topics/distributed-locks/quiz/gc-pause", map[string]string{"choice": "fencing"}, ordinary)
		check("newcomer's answer", a)
		if a.status != http.StatusOK {
			break
		}
		saved++
	}
	if saved == 200 {
		t.Fatal("200 newcomers' answers were saved on a full disk; want 503")
	}
	newcomer := newBrowser(s)
	newcomer.xff = "198.51.100.99"
	textbook := labRecipe{
		Acquire: []string{"SET {key} {token} NX PX {ttl}"},
		Release: []string{`EVAL "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end" 1 {key} {token}`},
	}
	for _, w := range []struct {
		what string
		do   func() answer
	}{
		{"saved learner's answer", func() answer {
			return ada.postJSON("/api/topics/distributed-locks/quiz/release-script", map[string]string{"choice": "other-holder"}, ordinary)
		}},
		{"saved learner's answer, form", func() answer {
			return ada.postForm("/topics/distributed-locks/quiz/nightly-report", url.Values{"choice": {"efficiency"}})
		}},
		{"newcomer's answer, form", func() answer {
			return newcomer.postForm("/topics/distributed-locks/quiz/gc-pause", url.Values{"choice": {"fencing"}})
		}},
		{"solved lab challenge", func() answer {
			return ada.postJSON("/api/lab/check", map[string]any{"recipe": textbook, "challenge": "plain-del"}, 30*time.Second)
		}},
		{"new carry code", func() answer { _, a := newCarryCode(ada); return a }},
		{"adopt a carry code", func() answer {
			return newcomer.postJSON("/api/progress/carry", map[string]string{"code": code.Code}, ordinary)
		}},
		{"new workshop", func() answer { return teacher.postForm("/admin/workshops", url.Values{"title": {"Full"}}) }},
		{"join a workshop", func() answer {
			return newcomer.postForm("/join", url.Values{"code": {wcode}, "nickname": {"Newcomer"}})
		}},
		{"end a workshop", func() answer { return teacher.postForm("/admin/workshops/"+wcode+"/end", url.Values{}) }},
	} {
		check(w.what, w.do())
	}
	// The playground works: only the topics it starts are not saved.
	pg, _ := newcomer.exec("fulldisk", "SET k v", ordinary)
	if pg.status != http.StatusOK {
		t.Errorf("a newcomer's playground command on a full disk = %s; want 200", pg)
	}
	t.Logf("on a full disk (a %d MiB tmpfs): %d answers 503 with the message; by write: %v", fullDiskSize>>20, unavailable, statuses)
	for _, b := range bad {
		t.Errorf("on a full disk: %s", b)
	}
	// A later request's log line means the lines before it are written.
	fence := newcomer.get(mark("/healthz", "fence"))
	if _, ok := s.log.serverLatency(fence.uri, 5*time.Second); !ok {
		t.Error("the server logged no line for GET /healthz")
	}
	if n := len(s.log.grep(`"status":500`)); n > 0 {
		t.Errorf("the server logged %d requests answered 500 on a full disk", n)
	}

	// What was saved reads back.
	var quiz struct {
		Progress struct {
			Right int `json:"right"`
		} `json:"progress"`
	}
	if a := ada.get("/api/topics/distributed-locks/quiz"); a.status != http.StatusOK || json.Unmarshal(a.body, &quiz) != nil || quiz.Progress.Right < 1 {
		t.Errorf("ada's progress on a full disk = %s; want her answer read back", a)
	}
	if a := ada.get("/topics/distributed-locks"); a.status != http.StatusOK {
		t.Errorf("the lesson on a full disk = %s; want 200", a)
	}

	// Room again: saved, with no restart.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	var qa quizAnswer
	a = ada.postJSON("/api/topics/distributed-locks/quiz/release-script", map[string]string{"choice": "other-holder"}, ordinary)
	if err := json.Unmarshal(a.body, &qa); a.status != http.StatusOK || err != nil || qa.Progress.Right < 2 {
		t.Errorf("ada's answer with room again = %s; want saved", a)
	}
}
