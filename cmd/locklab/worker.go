package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/lab"
	"github.com/locklab/locklab/playground"
	"github.com/locklab/locklab/web"
	"github.com/locklab/locklab/worker"
)

// defaultWorkerMemory is each sandbox worker's memory limit unless
// -worker-memory says otherwise.
const defaultWorkerMemory = 256 << 20

// sandboxes is what the server needs of the playground: the web layer's
// API, the number of live sandboxes for the metrics, the idle sweep and
// the shutdown. *playground.Manager and *worker.Supervisor both have it.
type sandboxes interface {
	web.Playground
	Len() int
	Sweep(now time.Time) int
	Close()
}

// labChecksPerCore is how many lab checks run at once on one sandbox
// worker, or one core of this process. More than one, so that a learner's
// short check starts at once beside long ones and shares the core with
// them, rather than waiting seconds for a slot; each check's CPU budget
// still bounds what it takes.
const labChecksPerCore = 3

// newLabChecker returns where the lock lab's checks run: in the sandbox
// workers when sb is their supervisor, as a learner's recipe is untrusted
// input on the playground's engine; else in this process.
func newLabChecker(sb sandboxes) web.LabChecker {
	if s, ok := sb.(*worker.Supervisor); ok {
		return s
	}
	return lab.NewInProcess(labChecksPerCore * runtime.GOMAXPROCS(0))
}

// labSlots is how many lab checks run at once: labChecksPerCore per
// sandbox worker, or per core of this process.
func labSlots(cfg *config) int {
	if cfg.workers > 0 {
		return labChecksPerCore * cfg.workers
	}
	return labChecksPerCore * runtime.GOMAXPROCS(0)
}

// newSandboxes starts the playground: the workers and their supervisor,
// or with -sandbox-workers 0 a Manager in this process. With copies set,
// learners' sandboxes are shared with the other replicas through it.
func newSandboxes(cfg config, logger *slog.Logger, copies playground.SandboxCopies) (sandboxes, error) {
	opts := playground.Options{
		IdleTimeout: cfg.idle, MaxSandboxes: cfg.sandboxes, SandboxCopies: copies, Logger: logger,
		MaxDataBytes: int(min(cfg.memory.sandboxData, math.MaxInt32)), MaxPerAddress: cfg.memory.perAddress,
	}
	opts.Limits.Script.Timeout = cfg.security.scriptTimeout
	if cfg.workers == 0 {
		return playground.NewManager(opts), nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("sandbox workers: find this program to start it again: %w (or use -sandbox-workers 0)", err)
	}
	// On Linux, /proc/self/exe is this very program even after its file
	// is replaced by an upgrade, so a restarted worker speaks the same
	// protocol as the server.
	if _, err := os.Stat("/proc/self/exe"); err == nil {
		exe = "/proc/self/exe"
	}
	memory := strconv.FormatInt(cfg.workerMemory, 10)
	gc := strconv.Itoa(cfg.memory.gcPercent)
	s, err := worker.NewSupervisor(worker.Options{
		Workers: cfg.workers, LabChecks: labSlots(&cfg),
		Command: func() *exec.Cmd {
			return exec.Command(exe, "sandbox-worker", "-memory", memory, "-gc-percent", gc)
		},
		Playground: opts,
		Logger:     logger,
	})
	if err != nil {
		return nil, fmt.Errorf("%w (or use -sandbox-workers 0)", err)
	}
	return s, nil
}

// sandboxWorker is `locklab sandbox-worker`: one worker process of the
// playground, which the server starts. It speaks the worker protocol on
// stdin and stdout and exits when its stdin ends, as it does when the
// server exits.
func sandboxWorker(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	fset := flag.NewFlagSet("sandbox-worker", flag.ContinueOnError)
	fset.SetOutput(stderr)
	memory := byteSize(defaultWorkerMemory)
	fset.Var(&memory, "memory", "memory limit of this process, such as 256MiB (env LOCKLAB_WORKER_MEMORY)")
	// The server passes its own -gc-percent; 0 leaves GOGC to the runtime.
	gcPercent := fset.Int("gc-percent", 0, "most GOGC of this process while its live heap is small, as the server's -gc-percent; 0 leaves GOGC to the Go runtime")
	fset.Usage = func() {
		fmt.Fprintf(stderr, "Usage: locklab sandbox-worker [-memory SIZE]\n\nRuns playground sandboxes for a Lock Lab server, which starts it; not for use by hand.\n\nFlags:\n")
		fset.PrintDefaults()
	}
	if err := setFromEnv(fset, getenv); err != nil {
		return err
	}
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	// Ctrl-C in a terminal reaches the whole process group; the worker
	// stays until the server, shutting down, closes its stdin.
	signal.Ignore(os.Interrupt)
	if err := checkGCPercent(*gcPercent); err != nil {
		return err
	}
	if err := worker.LimitMemory(int64(memory)); err != nil {
		return err
	}
	defer tuneGC(*gcPercent, workerGCFloor(int64(memory)))()
	return worker.Serve(ctx, stdin, stdout, stderr)
}

// byteSize is a flag for a number of bytes: 268435456, 256MiB, 1GiB (K, M
// and G mean KiB, MiB and GiB too).
type byteSize int64

func (b *byteSize) String() string {
	switch n := int64(*b); {
	case n >= 1<<30 && n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + "GiB"
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "MiB"
	default:
		return strconv.FormatInt(n, 10)
	}
}

func (b *byteSize) Set(s string) error {
	num, unit := s, int64(1)
	for _, u := range []struct {
		suffixes []string
		size     int64
	}{
		{[]string{"GiB", "G"}, 1 << 30},
		{[]string{"MiB", "M"}, 1 << 20},
		{[]string{"KiB", "K"}, 1 << 10},
	} {
		for _, suffix := range u.suffixes {
			if rest, ok := strings.CutSuffix(s, suffix); ok {
				num, unit = rest, u.size
				break
			}
		}
		if unit != 1 {
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
	if err != nil || n < 0 || n > (1<<50)/unit {
		return fmt.Errorf("%q is not a size such as 256MiB", s)
	}
	*b = byteSize(n * unit)
	return nil
}
