package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/testenv"

	"github.com/locklab/locklab/internal/redistest"
)

// TestMain lets the test binary act as the locklab binary, so a test can
// run the real server in a child process and SIGKILL it, and so that the
// servers the tests run start the test binary as their sandbox workers.
func TestMain(m *testing.M) {
	if os.Getenv("LOCKLAB_TEST_AS_MAIN") == "1" || len(os.Args) > 1 && os.Args[1] == "sandbox-worker" {
		main()
		return
	}
	os.Exit(m.Run())
}

// answerAs posts an answer with the given learner cookie ("" for a new
// learner) and returns the status and the learner id the server used.
func answerAs(t *testing.T, base, learner, question, choice string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/api/topics/distributed-locks/quiz/"+question, strings.NewReader(`{"choice":"`+choice+`"}`))
	req.Header.Set("Content-Type", "application/json")
	// The double-submit CSRF check: the same value in cookie and header.
	req.AddCookie(&http.Cookie{Name: "_csrf", Value: "TestTokenAbcdefghijklmnopqrstuvw"})
	req.Header.Set("X-CSRF-Token", "TestTokenAbcdefghijklmnopqrstuvw")
	if learner != "" {
		req.AddCookie(&http.Cookie{Name: "locklab_learner", Value: learner})
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, learner, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, c := range resp.Cookies() {
		if c.Name == "locklab_learner" {
			learner = c.Value
		}
	}
	return resp.StatusCode, learner, string(body)
}

type progressJSON struct {
	Right  int    `json:"right"`
	Total  int    `json:"total"`
	Status string `json:"status"`
}

func progressOf(t *testing.T, base, learner string) progressJSON {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/api/topics/distributed-locks/quiz", nil)
	req.AddCookie(&http.Cookie{Name: "locklab_learner", Value: learner})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Progress progressJSON `json:"progress"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out.Progress
}

// startChild runs the server as a child process on dataDir and returns its
// URL and the process.
func startChild(t *testing.T, dataDir string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-addr", "127.0.0.1:0", "-data", dataDir)
	cmd.Env = append(os.Environ(), "LOCKLAB_TEST_AS_MAIN=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u := regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(sc.Text()); u != "" {
				urls <- u
			}
		}
	}()
	select {
	case u := <-urls:
		return u, cmd
	case <-time.After(15 * time.Second):
		t.Fatal("child server did not start")
		return "", nil
	}
}

// TestAcknowledgedAnswersSurviveSIGKILL sends a burst of answers, kills the
// server with SIGKILL the moment they are acknowledged, restarts it on the
// same data directory and finds every acknowledged answer.
func TestAcknowledgedAnswersSurviveSIGKILL(t *testing.T) {
	testenv.Slow(t, "failover")
	dataDir := t.TempDir()
	base, cmd := startChild(t, dataDir)

	const learners = 30
	rights := []struct{ q, c string }{{"gc-pause", "fencing"}, {"release-script", "other-holder"}, {"nightly-report", "efficiency"}}
	type acked struct {
		learner string
		right   int
	}
	results := make([]acked, learners)
	var wg sync.WaitGroup
	for i := range learners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := ""
			// Learner i answers (i % 3) + 1 questions right.
			for _, r := range rights[:i%3+1] {
				code, got, body := answerAs(t, base, id, r.q, r.c)
				if code != 200 {
					t.Errorf("learner %d: answer %s = %d %s", i, r.q, code, body)
					return
				}
				id = got
				results[i].right++
			}
			results[i].learner = id
		}()
	}
	wg.Wait()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	base2, _ := startChild(t, dataDir)
	total := 0
	for i, r := range results {
		if r.learner == "" {
			continue
		}
		if p := progressOf(t, base2, r.learner); p.Right != r.right {
			t.Errorf("learner %d: %d right after restart; %d were acknowledged", i, p.Right, r.right)
		}
		total += r.right
	}
	t.Logf("%d acknowledged answers from %d learners all found after SIGKILL and restart", total, learners)
}

// TestRedisOutage stops Redis under a running server: lessons keep
// working, answering fails within a second with a clear message, and once
// Redis is back saving works again without a restart.
func TestRedisOutage(t *testing.T) {
	srv := redistest.StartServer(t)
	base, _, _ := startServer(t, map[string]string{"REDIS_URL": "redis://" + srv.Addr})
	code, learner, body := answerAs(t, base, "", "gc-pause", "fencing")
	if code != 200 {
		t.Fatalf("answer = %d %s", code, body)
	}
	srv.Stop()
	start := time.Now()
	code, _, body = answerAs(t, base, learner, "release-script", "other-holder")
	if took := time.Since(start); code != 503 || !strings.Contains(body, "can't be saved right now") || took > time.Second {
		t.Errorf("answer with Redis down = %d %s after %v; want 503 within 1s", code, body, took)
	}
	if c, _ := fetch(t, base+"/topics/distributed-locks"); c != 200 {
		t.Errorf("lesson with Redis down = %d", c)
	}
	redistest.StartOnPort(t, srv.Port)
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, _, body = answerAs(t, base, learner, "release-script", "other-holder")
		if code == 200 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code != 200 {
		t.Errorf("after Redis came back: %d %s", code, body)
	}
}
