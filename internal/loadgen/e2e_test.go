package loadgen

import (
	"bufio"
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/testenv"
)

// startServer runs the locklab binary on a free loopback port and returns
// its base URL and process. The binary is $LOCKLAB_SERVER_BIN if set, or
// else built from ./cmd/locklab.
func startServer(t *testing.T, env ...string) (string, *exec.Cmd) {
	t.Helper()
	bin := os.Getenv("LOCKLAB_SERVER_BIN")
	if bin == "" {
		gobin := testenv.LookPath(t, "install Go from https://go.dev/dl/", "go")
		bin = filepath.Join(t.TempDir(), "locklab")
		build := exec.Command(gobin, "build", "-o", bin, "./cmd/locklab")
		build.Dir = testenv.RepoRoot(t)
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build ./cmd/locklab: %v\n%s", err, out)
		}
	}
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-data", t.TempDir(), "-log-format", "json")
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		re := regexp.MustCompile(`http://127\.0\.0\.1:\d+`)
		for sc.Scan() {
			if u := re.FindString(sc.Text()); u != "" {
				urls <- u
				break
			}
		}
		for sc.Scan() { // keep draining so the server never blocks on stdout
		}
	}()
	select {
	case u := <-urls:
		return u, cmd
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not print its URL within 10s")
	}
	return "", nil
}

// TestWorkshopAgainstRealServer runs a small, fast workshop against the
// real server: every answer a well-behaved learner gets must be what the
// lesson says, hostile learners included.
func TestWorkshopAgainstRealServer(t *testing.T) {
	testenv.Slow(t, "load")
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("skipping: no /proc file system (Linux only)")
	}
	base, server := startServer(t)
	target, err := CheckTarget(base, false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := Run(ctx, Config{
		Targets: []*url.URL{target}, Learners: 10, Duration: 5 * time.Second, Rate: 10, Hostile: 0.1,
		Seed: 7, Ramp: time.Second, Timeout: 5 * time.Second,
		SampleEvery: 100 * time.Millisecond, Proc: Proc{Root: "/proc"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests.All.Errors != 0 {
		t.Errorf("well-behaved learners got %d errors in %d requests; first: %q", res.Requests.All.Errors, res.Requests.All.Count, res.Requests.ErrorSamples)
	}
	if res.WellBehaved != 9 || res.HostileLearners != 1 || res.Hostile.All.Count == 0 {
		t.Errorf("learners: %d well-behaved, %d hostile with %d requests; want 9 and 1 with some", res.WellBehaved, res.HostileLearners, res.Hostile.All.Count)
	}
	counts := make(map[string]int)
	for _, rs := range res.Requests.Routes {
		counts[rs.Route] = rs.Count
	}
	for _, route := range []string{
		"GET /topics/{slug}", "GET /static/*", "POST /api/playground/reset",
		"POST /api/playground/exec", "GET /api/playground/keys", "POST /api/playground/advance",
		"GET /api/race/scenarios", "GET /api/race/{id}", "GET /api/topics/{slug}/quiz",
		"POST /api/topics/{slug}/quiz/{question}", "GET /healthz",
	} {
		if counts[route] == 0 {
			t.Errorf("route %q got no requests; routes: %v", route, counts)
		}
	}
	// Without Config.PIDs the server is found by its port.
	if m := res.Usage; m.Err != nil || len(m.Procs) != 1 || m.Procs[0].PID != server.Process.Pid || m.Samples == 0 || m.Peak <= 0 {
		t.Errorf("Usage = %+v, %d samples, peak %d, error %v; want pid %d sampled", m.Procs, m.Samples, m.Peak, m.Err, server.Process.Pid)
	}
}

// TestWorkshopPollAgainstRealServer runs the poll phase: every
// well-behaved learner joins the workshop and keeps its event stream
// open, and when the instructor opens a poll every stream delivers it and
// the whole room predicts within a few seconds, each counted once. The
// server is named twice, as 127.0.0.1 and as localhost, so that requests
// alternate between two targets whose cookies a browser would keep
// apart: the learners' sessions must carry over.
func TestWorkshopPollAgainstRealServer(t *testing.T) {
	testenv.Slow(t, "load")
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("skipping: no /proc file system (Linux only)")
	}
	const token = "loadgen-admin-token-0123456789"
	base, _ := startServer(t, "LOCKLAB_ADMIN_TOKEN="+token)
	targets, err := CheckTargets([]string{base, strings.Replace(base, "127.0.0.1", "localhost", 1)}, false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := Run(ctx, Config{
		Targets: targets, Learners: 12, Duration: 9 * time.Second, Rate: 4, Hostile: 0.1,
		Seed: 3, Ramp: time.Second, Timeout: 5 * time.Second,
		SampleEvery: 100 * time.Millisecond, Proc: Proc{Root: "/proc"},
		AdminToken: token, PollAt: 3 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests.All.Errors != 0 {
		t.Errorf("well-behaved learners got %d errors in %d requests; first: %q", res.Requests.All.Errors, res.Requests.All.Count, res.Requests.ErrorSamples)
	}
	p := res.Poll
	if p == nil || p.Err != nil || p.ID == "" || p.Joined != res.WellBehaved || p.Total != p.Joined || p.Answered != p.Joined || !p.Revealed {
		t.Fatalf("poll = %+v; want all %d well-behaved learners joined, counted once and revealed", p, res.WellBehaved)
	}
	if len(res.ByReplica.Routes) != 2 {
		t.Errorf("requests by replica: %+v; want two replicas", res.ByReplica.Routes)
	}
	if s := res.Streams; s == nil || s.Learners != p.Joined || s.Open != s.Learners || s.Failed != 0 || s.EndedEarly != 0 || s.Delivered != p.Joined {
		t.Errorf("streams = %+v; want all %d joined learners' streams open to the end, each delivering the poll", s, p.Joined)
	}
	if m := res.Usage; len(m.Procs) != 1 {
		t.Errorf("Usage.Procs = %+v; want the one server, found once by its port", m.Procs)
	}
	v := res.Check(Targets{P99: time.Hour, PeakRSS: 1 << 40})
	if !v.Pass {
		t.Errorf("verdict: %q", v.Reasons)
	}
	// A poll whose counts are off fails the verdict.
	p.Answered--
	if res.Check(Targets{P99: time.Hour, PeakRSS: 1 << 40}).Pass {
		t.Error("a poll missing an answer passed the verdict")
	}
}
