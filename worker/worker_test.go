package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/fakeclock"
	"github.com/locklab/locklab/playground"
)

// testModeEnv makes the test binary a worker when it starts it; see
// TestMain.
const testModeEnv = "LOCKLAB_WORKER_TEST"

// boomLine is a line that makes a worker started in "boom" mode allocate
// until the operating system's limit stops it, as an input that got past
// the sandbox's own limits would.
const boomLine = "ECHO the-boom-line-allocates-without-bound"

// spinLine is a script that spins until its deadline. A worker started
// in "spin" mode writes spinSeen to its stderr when it reads one, which
// the supervisor logs: the signal that the script is with the worker.
const (
	spinMarker = "spin-until-the-deadline"
	spinLine   = `EVAL "local _ = '` + spinMarker + `' while true do end" 0`
	spinSeen   = "worker read the spinning script"
)

// TestMain lets the test binary act as `locklab sandbox-worker`, so that
// the tests run real worker processes without building the command.
func TestMain(m *testing.M) {
	switch os.Getenv(testModeEnv) {
	case "":
		os.Exit(m.Run())
	case "serve":
		os.Exit(serveForTest(os.Stdin, 256<<20))
	case "spin":
		// A worker that says on stderr when it has read spinLine, so a
		// test can wait for the script to be with the worker.
		os.Exit(serveForTest(&watchReader{r: os.Stdin, marker: spinMarker, seen: func() {
			fmt.Fprintln(os.Stderr, spinSeen)
		}}, 256<<20))
	case "boom":
		// A worker whose input can make it run out of memory for real.
		os.Exit(serveForTest(&watchReader{r: os.Stdin, marker: boomLine, seen: allocForever}, 128<<20))
	case "alloc":
		// Only the memory limit: allocate until it stops us.
		if err := LimitMemory(128 << 20); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		allocForever()
	}
	os.Exit(4)
}

func serveForTest(stdin io.Reader, memory int64) int {
	if err := LimitMemory(memory); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	if err := Serve(context.Background(), stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// sink keeps allocations alive.
var sink [][]byte

func allocForever() {
	for range 1 << 20 { // 1 TiB: the limit stops it long before
		b := make([]byte, 1<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		sink = append(sink, b)
	}
}

// watchReader passes the worker's input through and calls seen each time
// it reads marker.
type watchReader struct {
	r      io.Reader
	marker string
	seen   func()
	tail   []byte
}

func (w *watchReader) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	w.tail = append(w.tail, p[:n]...)
	if bytes.Contains(w.tail, []byte(w.marker)) {
		w.seen()
		w.tail = w.tail[:0]
	}
	if len(w.tail) > len(w.marker) {
		w.tail = append(w.tail[:0], w.tail[len(w.tail)-len(w.marker):]...)
	}
	return n, err
}

// workerCommand starts the test binary as a worker in mode.
func workerCommand(mode string) func() *exec.Cmd {
	return func() *exec.Cmd {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(runtimeEnv(), testModeEnv+"="+mode)
		return cmd
	}
}

// newFakeClock is the tests' shared fake clock at its fixed start.
func newFakeClock() *fakeclock.Clock { return fakeclock.New(time.Time{}) }

func newTestSupervisor(t *testing.T, opts Options) *Supervisor {
	t.Helper()
	if opts.Command == nil {
		opts.Command = workerCommand("serve")
	}
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	s, err := NewSupervisor(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// learnersOn returns n learner names whose sandboxes live in worker i of
// a supervisor with workers workers.
func learnersOn(i, workers, n int, prefix string) []string {
	var out []string
	for j := 0; len(out) < n && j < 10_000; j++ {
		name := fmt.Sprintf("%s-%d", prefix, j)
		h := fnv.New32a()
		h.Write([]byte(name))
		if int(h.Sum32()%uint32(workers)) == i {
			out = append(out, name)
		}
	}
	return out
}

type step struct {
	learner string
	client  playground.Client
	line    string
	want    string
}

func runSteps(t *testing.T, s *Supervisor, steps []step) {
	t.Helper()
	for _, st := range steps {
		res, _ := s.Exec(context.Background(), st.learner, st.client, st.line)
		if res.Output != st.want {
			t.Errorf("%s %s> %s = %q; want %q", st.learner, st.client, st.line, res.Output, st.want)
		}
	}
}

// TestWorkerCannotStartWorkers: a process started as a worker refuses to
// start workers itself.
func TestWorkerCannotStartWorkers(t *testing.T) {
	t.Setenv(ChildEnv, "1")
	if _, err := NewSupervisor(Options{Command: workerCommand("serve")}); err == nil {
		t.Error("NewSupervisor in a worker succeeded; want an error")
	}
}

// TestNotAWorker: a command that is not a worker fails at start.
func TestNotAWorker(t *testing.T) {
	for _, argv := range [][]string{{"/bin/echo", "hello"}, {"cat"}, {"sleep", "0.1"}} {
		_, err := NewSupervisor(Options{Command: func() *exec.Cmd { return exec.Command(argv[0], argv[1:]...) }})
		if err == nil {
			t.Errorf("NewSupervisor with %q succeeded; want an error", argv)
		}
	}
}

// TestMemoryLimit: under LimitMemory, a process that allocates without
// bound dies of Go's out-of-memory error, near the limit, instead of
// taking the host's memory.
func TestMemoryLimit(t *testing.T) {
	cmd := workerCommand("alloc")()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 && exit.ExitCode() != raceOOMStatus {
		t.Fatalf("allocating child: %v; want exit status 2 (Go fatal error)\n%.2000s", err, stderr.String())
	}
	if !isOOM(stderr.String()) {
		t.Errorf("allocating child's stderr:\n%.2000s\nwant an out of memory error", stderr.String())
	}
	// The limit counts from the data the process had mapped at the start,
	// some of it never touched, so the peak varies; it is bounded.
	rss := exit.SysUsage().(*syscall.Rusage).Maxrss << 10
	if rss > 512<<20*raceMemoryFactor {
		t.Errorf("allocating child peaked at %d MiB; want about the 128 MiB limit", rss>>20)
	}
	t.Logf("peaked at %d MiB, died after %v: %s", rss>>20, time.Since(start).Round(time.Millisecond), firstLine(stderr.String(), "allocate", "out of memory"))
}

// raceOOMStatus is the exit status of a process whose race detector could
// not map its shadow memory, which under the race detector is often the
// first allocation the limit refuses.
const raceOOMStatus = 66

// isOOM reports whether a worker's error output tells of running out of
// memory.
func isOOM(stderr string) bool {
	return strings.Contains(stderr, "out of memory") ||
		raceMemoryFactor > 1 && strings.Contains(stderr, "ThreadSanitizer failed to allocate")
}

func firstLine(s string, substrs ...string) string {
	for _, line := range strings.Split(s, "\n") {
		for _, sub := range substrs {
			if strings.Contains(line, sub) {
				return line
			}
		}
	}
	return ""
}

// TestQuick: the reading goroutine runs only commands of bounded cost,
// as the command table declares them; anything it cannot tell for sure
// goes to the sandbox's own goroutine.
func TestQuick(t *testing.T) {
	for _, tt := range []struct {
		line string
		want bool
	}{
		{"SET k v", true},
		{"  get k", true},
		{"\tPING", true},
		{"PING", true},
		{"LPOP l", true},
		{"LPOP l 1000000", false},
		{"LPOP l ", true},
		{"EVAL \"while true do end\" 0", false},
		{"eval x 0", false},
		{"\"SET\" k v", true}, // read as Exec reads it
		{"\"SET k v", false},  // Exec refuses it, unbalanced
		{"SET\"x\" k", false},
		{"5 SET k v", false},
		{"LRANGE l 0 -1", false},
		{"KEYS *", false},
		{"EXEC", false},
		{"", false},
		{"   ", false},
		// Many keys or fields, or big values, cost what they are.
		{"MGET a b c d e f g h", true},
		{"MGET " + strings.Repeat("k ", 999), false},
		{"HMGET h " + strings.Repeat("f ", 998), false},
		{"MSET a 1 b 2 c 3 d 4 e 5", false},
		{"SET k " + strings.Repeat("v", 600), false},
	} {
		if got := quick(&request{Op: opExec, Line: tt.line}); got != tt.want {
			t.Errorf("quick(%q) = %v; want %v", tt.line, got, tt.want)
		}
	}
}
