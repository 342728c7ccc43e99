package attack

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/testenv"
)

// buildServer builds ./cmd/locklab into dir and returns the binary, or
// returns $LOCKLAB_SERVER_BIN if set (as the load generator's end-to-end
// test does). It is built without the race detector even when the tests
// run with -race: the detector multiplies memory and CPU, and those are
// what the suite measures.
func buildServer(t *testing.T, dir string) string {
	t.Helper()
	if bin := os.Getenv("LOCKLAB_SERVER_BIN"); bin != "" {
		return bin
	}
	gobin := testenv.LookPath(t, "install Go from https://go.dev/dl/", "go")
	bin := filepath.Join(dir, "locklab")
	build := exec.Command(gobin, "build", "-o", bin, "./cmd/locklab")
	build.Dir = testenv.RepoRoot(t)
	build.Env = withoutRace(os.Environ())
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/locklab: %v\n%s", err, out)
	}
	return bin
}

// withoutRace drops -race from GOFLAGS, should the caller have put it
// there.
func withoutRace(env []string) []string {
	var out []string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GOFLAGS="); ok {
			var keep []string
			for _, f := range strings.Fields(v) {
				if f != "-race" {
					keep = append(keep, f)
				}
			}
			kv = "GOFLAGS=" + strings.Join(keep, " ")
		}
		out = append(out, kv)
	}
	return out
}

// server is one Lock Lab process under attack.
type server struct {
	name string
	base string // http://127.0.0.1:PORT
	addr string // 127.0.0.1:PORT
	cmd  *exec.Cmd
	log  *logWatch
}

// pid is the server process's id; its sandbox workers are its children.
func (s *server) pid() int { return s.cmd.Process.Pid }

// startServer runs bin on a free loopback port with a fresh data
// directory, JSON logs on stderr (which the suite reads for server-side
// latencies) and 127.0.0.1 as a trusted proxy, so that the suite's
// bystander learners can come from addresses of their own. env holds
// LOCKLAB_* settings; the caller's own are not passed on.
func startServer(t *testing.T, bin, name string, env map[string]string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(bin, append([]string{
		"-addr", "127.0.0.1:0", "-data", t.TempDir(), "-log-format", "json",
		"-trusted-proxies", "127.0.0.1",
	}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LOCKLAB_") && !strings.HasPrefix(kv, "REDIS_URL=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	s := &server{name: name, cmd: cmd, log: newLogWatch()}
	scanned := make(chan struct{})
	go func() { s.log.scan(stderr); close(scanned) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		<-scanned
	})
	urls := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`http://127\.0\.0\.1:\d+`)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u := re.FindString(sc.Text()); u != "" {
				urls <- u
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout) // the server must never block on stdout
	}()
	select {
	case s.base = <-urls:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s server did not print its URL within 30s; log:\n%s", name, s.log.text())
	}
	s.addr = strings.TrimPrefix(s.base, "http://")
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(s.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s server: /healthz did not answer 200 within 30s (%v); log:\n%s", name, err, s.log.text())
		}
		time.Sleep(50 * time.Millisecond) // polling a process we do not control
	}
}

// logWatch keeps a server's log lines and the latency the server logged
// for each request, by URI (with its query string, which the suite uses
// to mark requests).
type logWatch struct {
	mu      sync.Mutex
	lines   []string
	latency map[string]time.Duration
	changed chan struct{} // closed and replaced on every line
}

func newLogWatch() *logWatch {
	return &logWatch{latency: map[string]time.Duration{}, changed: make(chan struct{})}
}

// scan reads log lines from r until it ends.
func (w *logWatch) scan(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		var rec struct {
			Msg     string `json:"msg"`
			URI     string `json:"uri"`
			Latency int64  `json:"latency"`
		}
		marked := strings.Contains(line, "m=") && json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "request"
		w.mu.Lock()
		w.lines = append(w.lines, line)
		if marked {
			w.latency[rec.URI] = time.Duration(rec.Latency)
		}
		close(w.changed)
		w.changed = make(chan struct{})
		w.mu.Unlock()
	}
	_, _ = io.Copy(io.Discard, r)
}

// serverLatency returns the latency the server logged for the request to
// uri, waiting up to wait for its log line.
func (w *logWatch) serverLatency(uri string, wait time.Duration) (time.Duration, bool) {
	timeout := time.After(wait)
	for {
		w.mu.Lock()
		d, ok := w.latency[uri]
		changed := w.changed
		w.mu.Unlock()
		if ok {
			return d, true
		}
		select {
		case <-changed:
		case <-timeout:
			return 0, false
		}
	}
}

// text is the whole log so far.
func (w *logWatch) text() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.lines, "\n")
}

// grep returns the log lines that contain s.
func (w *logWatch) grep(s string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, l := range w.lines {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return out
}
