package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locklab/locklab/content"
	"github.com/locklab/locklab/internal/testenv"
)

// startServer calls run on a free port and waits until /healthz answers.
// It returns the base URL and a stop function that returns run's error.
func startServer(t *testing.T, env map[string]string, args ...string) (string, *testenv.SyncBuffer, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr := &testenv.SyncBuffer{}, &testenv.SyncBuffer{}
	if env["REDIS_URL"] != "" && env["LOCKLAB_SECRET"] == "" {
		// Replicas sharing Redis share a signing key, as operators set it.
		env["LOCKLAB_SECRET"] = "test-signing-key-0123456789"
	}
	dataDir := env["LOCKLAB_DATA"]
	if dataDir == "" {
		dataDir = t.TempDir()
	}
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, append([]string{"locklab", "-addr", "127.0.0.1:0", "-data", dataDir}, args...), func(k string) string { return env[k] }, stdout, stderr)
	}()
	urlRE := regexp.MustCompile(`http://127\.0\.0\.1:\d+`)
	deadline := time.Now().Add(10 * time.Second)
	var base, health string
	for health != "200 OK" && time.Now().Before(deadline) {
		select {
		case err := <-errc:
			cancel()
			t.Fatalf("run returned early: %v\nstderr: %s", err, stderr)
		default:
		}
		if base = urlRE.FindString(stdout.String()); base != "" {
			resp, err := http.Get(base + "/healthz")
			if err != nil {
				health = err.Error()
			} else {
				resp.Body.Close()
				health = resp.Status
			}
			if health == "200 OK" {
				break
			}
		}
		time.Sleep(20 * time.Millisecond) // the poll's interval; run has no readiness signal but /healthz
	}
	switch {
	case base == "":
		cancel()
		t.Fatalf("server did not print its URL; stdout %q stderr %q", stdout, stderr)
	case health != "200 OK":
		cancel()
		log := stderr.String()
		t.Fatalf("GET %s/healthz did not answer 200 within 10 s (last: %s); stderr ends %q", base, health, log[max(0, len(log)-1000):])
	}
	var once sync.Once
	var runErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-errc:
			case <-time.After(15 * time.Second):
				t.Error("run did not return after cancel")
			}
		})
		return runErr
	}
	t.Cleanup(func() { _ = stop() })
	return base, stderr, stop
}

func fetch(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestRunServesTheCourse(t *testing.T) {
	base, stderr, stop := startServer(t, nil)
	for _, tt := range []struct {
		path   string
		status int
		want   string
	}{
		{"/healthz", 200, "ok"},
		{"/", 200, "Distributed locks and their caveats"},
		{"/topics/distributed-locks", 200, "SET lock:invoice:7 3f9a1c NX PX 30000"},
		{"/nope", 404, "Page not found"},
		{"/carry/K7QM-4TXP", 200, `value="K7QM-4TXP"`},
	} {
		code, body := fetch(t, base+tt.path)
		if code != tt.status || !strings.Contains(body, tt.want) {
			t.Errorf("GET %s = %d %.100q; want %d containing %q", tt.path, code, body, tt.status, tt.want)
		}
	}
	if err := healthcheck(context.Background(), []string{"-addr", strings.TrimPrefix(base, "http://")}, func(string) string { return "" }, io.Discard); err != nil {
		t.Errorf("healthcheck against a running server = %v", err)
	}
	if err := stop(); err != nil {
		t.Errorf("run after cancel = %v; want nil (graceful shutdown)", err)
	}
	// One structured log line per request.
	logs := stderr.String()
	if n := strings.Count(logs, "msg=request"); n < 4 {
		t.Errorf("%d request log lines; want at least 4:\n%s", n, logs)
	}
	if !strings.Contains(logs, "uri=/nope status=404") {
		t.Errorf("log lacks the 404 line:\n%s", logs)
	}
	// A carry link is logged without its code.
	if !strings.Contains(logs, "uri=/carry/… status=200") || strings.Contains(logs, "K7QM") {
		t.Errorf("log shows a carry code, or lacks the redacted line:\n%s", logs)
	}
}

func TestRunAddrFromEnv(t *testing.T) {
	// The flags are not given here, so the environment decides.
	dataDir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout := &testenv.SyncBuffer{}
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, []string{"locklab"}, func(k string) string {
			return map[string]string{"LOCKLAB_ADDR": "127.0.0.1:0", "LOCKLAB_LOG_FORMAT": "json", "LOCKLAB_DATA": dataDir}[k]
		}, stdout, io.Discard)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(stdout.String(), "http://127.0.0.1:") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(stdout.String(), "http://127.0.0.1:") {
		t.Fatalf("stdout = %q; want the URL from LOCKLAB_ADDR", stdout)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Errorf("run = %v", err)
	}
}

func TestRunFailsFast(t *testing.T) {
	broken := t.TempDir()
	if err := os.CopyFS(broken, content.Embedded()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(broken, "lessons", "distributed-locks.md"), []byte("---\nslug: distributed-locks\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown flag", []string{"-bogus"}, "flag provided but not defined"},
		{"stray argument", []string{"serve"}, `unexpected argument "serve"`},
		{"missing content dir", []string{"-content", filepath.Join(broken, "nope")}, "not a directory"},
		{"broken content", []string{"-content", broken}, `lessons/distributed-locks.md: front matter: missing "title"`},
		{"bad log format", []string{"-log-format", "xml"}, "want text or json"},
		{"port in use", []string{"-addr", "127.0.0.1:-1"}, "listen"},
		{"public URL with a path", []string{"-public-url", "https://a.example/locks"}, "-public-url"},
		{"carry TTL too short", []string{"-carry-ttl", "10s"}, "-carry-ttl"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := run(context.Background(), append([]string{"locklab", "-data", t.TempDir()}, tt.args...), func(string) string { return "" }, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("run(%q) = %v; want an error containing %q", tt.args, err, tt.want)
			}
		})
	}
}

func TestRunContentDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, content.Embedded()); err != nil {
		t.Fatal(err)
	}
	base, _, _ := startServer(t, nil, "-content", dir)
	file := filepath.Join(dir, "lessons", "distributed-locks.md")
	src, _ := os.ReadFile(file)
	if err := os.WriteFile(file, []byte(strings.Replace(string(src), "### The debate", "### The debate, revised", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, body := fetch(t, base+"/topics/distributed-locks"); !strings.Contains(body, "The debate, revised") {
		t.Error("an edit under -content did not show on reload")
	}
}

func TestHealthcheckFailsWithoutServer(t *testing.T) {
	err := healthcheck(context.Background(), []string{"-addr", "127.0.0.1:1"}, func(string) string { return "" }, io.Discard)
	if err == nil {
		t.Error("healthcheck against a closed port = nil; want an error")
	}
}

func TestDisplayURL(t *testing.T) {
	for _, tt := range []struct{ addr, want string }{
		{"[::]:8080", "http://localhost:8080"},
		{"0.0.0.0:8080", "http://localhost:8080"},
		{"127.0.0.1:9000", "http://127.0.0.1:9000"},
	} {
		if got := displayURL(fakeAddr(tt.addr)); got != tt.want {
			t.Errorf("displayURL(%q) = %q; want %q", tt.addr, got, tt.want)
		}
	}
}

type fakeAddr string

func (a fakeAddr) Network() string { return "tcp" }
func (a fakeAddr) String() string  { return string(a) }
