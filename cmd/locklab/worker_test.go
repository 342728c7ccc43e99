package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locklab/locklab/lab"
)

// execAs runs a playground line as learner over the HTTP API and returns
// the status and the output.
func execAs(t *testing.T, base, learner, line string) (int, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"line": line, "client": "A"})
	req, _ := http.NewRequest("POST", base+"/api/playground/exec", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.AddCookie(&http.Cookie{Name: "_csrf", Value: "TestTokenAbcdefghijklmnopqrstuvw"})
	req.Header.Set("X-CSRF-Token", "TestTokenAbcdefghijklmnopqrstuvw")
	req.AddCookie(&http.Cookie{Name: "locklab_learner", Value: learner})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("exec %q: %v", line, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var res struct {
		Output string `json:"output"`
	}
	json.Unmarshal(b, &res)
	if resp.StatusCode != 200 {
		return resp.StatusCode, string(b)
	}
	return resp.StatusCode, res.Output
}

// sandboxWorkers returns the pids of this process's children that are
// sandbox workers.
func sandboxWorkers(t *testing.T) []int {
	t.Helper()
	tasks, _ := filepath.Glob("/proc/self/task/*/children")
	var pids []int
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, field := range strings.Fields(string(b)) {
			pid, _ := strconv.Atoi(field)
			cmdline, _ := os.ReadFile("/proc/" + field + "/cmdline")
			if strings.Contains(string(cmdline), "sandbox-worker") {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// TestRunWithSandboxWorkers: by default the server runs the playground in
// two worker processes of its own binary; killing them does not lose a
// learner's keys.
func TestRunWithSandboxWorkers(t *testing.T) {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("needs /proc")
	}
	base, _, stop := startServer(t, nil, "-rate-limit", "0")
	const learner = "workerlearner012345678"
	if code, out := execAs(t, base, learner, "SET lock:invoice:7 3f9a1c PX 30000"); code != 200 || out != "OK" {
		t.Fatalf("SET = %d %q; want OK", code, out)
	}
	pids := sandboxWorkers(t)
	if len(pids) != 2 {
		t.Fatalf("sandbox workers %v; want 2", pids)
	}
	// The workers take the server's -gc-percent (gctune.go), 400 by
	// default (the server's settings here are all defaults).
	const gc = "400"
	for _, pid := range pids {
		cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if !strings.Contains(string(cmdline), "\x00-gc-percent\x00"+gc+"\x00") {
			t.Errorf("worker %d runs %q; want -gc-percent %s", pid, strings.ReplaceAll(string(cmdline), "\x00", " "), gc)
		}
	}
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	var code int
	var out string
	for range 50 { // the first request may find its worker restarting
		if code, out = execAs(t, base, learner, "GET lock:invoice:7"); out == `"3f9a1c"` {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code != 200 || out != `"3f9a1c"` {
		t.Errorf("GET after the workers were killed = %d %q; want the key", code, out)
	}
	if err := stop(); err != nil {
		t.Errorf("run after cancel = %v", err)
	}
	if left := sandboxWorkers(t); len(left) != 0 {
		t.Errorf("sandbox workers %v still running after the server stopped", left)
	}
}

// TestRunInProcessSandboxes: LOCKLAB_SANDBOX_WORKERS=0 keeps the sandboxes
// in the server process.
func TestRunInProcessSandboxes(t *testing.T) {
	base, _, _ := startServer(t, map[string]string{"LOCKLAB_SANDBOX_WORKERS": "0"})
	if code, out := execAs(t, base, "inprocesslearner012345", "PING"); code != 200 || out != "PONG" {
		t.Errorf("PING = %d %q; want PONG", code, out)
	}
	if pids := sandboxWorkers(t); len(pids) != 0 {
		t.Errorf("sandbox workers %v; want none", pids)
	}
}

func TestWorkerFlags(t *testing.T) {
	for _, tt := range []struct {
		args    []string
		env     map[string]string
		workers int
		memory  int64
		err     string
	}{
		{args: nil, workers: 2, memory: 256 << 20},
		{args: []string{"-sandbox-workers", "0"}, workers: 0, memory: 256 << 20},
		{args: []string{"-sandbox-workers", "4", "-worker-memory", "1GiB"}, workers: 4, memory: 1 << 30},
		{env: map[string]string{"LOCKLAB_SANDBOX_WORKERS": "3", "LOCKLAB_WORKER_MEMORY": "512M"}, workers: 3, memory: 512 << 20},
		{args: []string{"-worker-memory", "67108864"}, workers: 2, memory: 64 << 20},
		{args: []string{"-worker-memory", "16MiB"}, err: "at least 32MiB"},
		{args: []string{"-worker-memory", "lots"}, err: "not a size"},
		{args: []string{"-sandbox-workers", "-1"}, err: "between 0"},
		{env: map[string]string{"LOCKLAB_SANDBOX_WORKERS": "two"}, err: "LOCKLAB_SANDBOX_WORKERS"},
	} {
		getenv := func(k string) string { return tt.env[k] }
		cfg, err := parseFlags(append([]string{"locklab"}, tt.args...), getenv, io.Discard)
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("parseFlags(%q, %v) error = %v; want %q", tt.args, tt.env, err, tt.err)
			}
		case err != nil:
			t.Errorf("parseFlags(%q, %v): %v", tt.args, tt.env, err)
		case cfg.workers != tt.workers || cfg.workerMemory != tt.memory:
			t.Errorf("parseFlags(%q, %v) = %d workers of %d bytes; want %d of %d", tt.args, tt.env, cfg.workers, cfg.workerMemory, tt.workers, tt.memory)
		}
	}
}

// TestLabChecker: the lock lab's checks run in the sandbox workers when
// there are some, else in this process, and give lab.Check's report
// either way.
func TestLabChecker(t *testing.T) {
	req, b := lab.Request{Recipe: lab.Textbook(), Seed: 2}, lab.Budget{Random: 2}
	want, err := lab.Check(context.Background(), req, b)
	if err != nil {
		t.Fatal(err)
	}
	want.CPUMS = 0
	wantJSON, _ := json.Marshal(want)
	for _, tt := range []struct {
		workers string
		inProc  bool
	}{{"1", false}, {"0", true}} {
		cfg, err := parseFlags([]string{"locklab", "-sandbox-workers", tt.workers}, func(string) string { return "" }, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		sb, err := newSandboxes(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
		if err != nil {
			t.Fatal(err)
		}
		checker := newLabChecker(sb)
		if _, ok := checker.(*lab.InProcess); ok != tt.inProc {
			t.Errorf("-sandbox-workers %s: the lab checker is %T; want in process: %v", tt.workers, checker, tt.inProc)
		}
		got, err := checker.CheckLab(context.Background(), req, b)
		got.CPUMS = 0
		if gotJSON, _ := json.Marshal(got); err != nil || string(gotJSON) != string(wantJSON) {
			t.Errorf("-sandbox-workers %s: CheckLab = %s, %v; want %s", tt.workers, gotJSON, err, wantJSON)
		}
		if _, err := checker.CheckLab(context.Background(), lab.Request{}, b); !errors.Is(err, lab.ErrBadRecipe) {
			t.Errorf("-sandbox-workers %s: CheckLab(empty recipe) = %v; want ErrBadRecipe", tt.workers, err)
		}
		sb.Close()
	}
}

func TestSandboxWorkerRefusesABadGCPercent(t *testing.T) {
	for _, v := range []string{"-1", "10001", "x"} {
		err := sandboxWorker(context.Background(), []string{"-gc-percent", v}, func(string) string { return "" }, strings.NewReader(""), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "gc-percent") {
			t.Errorf("sandbox-worker -gc-percent %s = %v; want an error naming -gc-percent", v, err)
		}
	}
}
