package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/locklab/locklab/internal/loadgen"
)

// errMissed is run's error when -strict is given and a target was missed.
var errMissed = errors.New("targets missed (see the report)")

// run parses args (args[0] is the program name), simulates the workshop
// and writes the report to stdout; progress lines go to stderr. The
// target URLs default to $LOCKLAB_URL, then http://127.0.0.1:8080.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fset := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fset.SetOutput(stderr)
	defURL := getenv("LOCKLAB_URL")
	if defURL == "" {
		defURL = "http://127.0.0.1:8080"
	}
	urls := &listFlag{values: []string{defURL}}
	fset.Var(urls, "url", "base URLs of the Lock Lab server's replicas, comma-separated or with the flag repeated; each learner's requests go to them in turn (env LOCKLAB_URL)")
	pids := &listFlag{}
	fset.Var(pids, "pid", "processes whose memory (with their children's) is sampled and summed, comma-separated or with the flag repeated: the replicas and their redis-server; none finds the processes listening on the URLs' ports")
	var (
		allowRemote = fset.Bool("allow-remote", false, "allow a target that is not on a loopback address")
		learners    = fset.Int("learners", 300, "learners in the workshop, hostile ones included")
		duration    = fset.Duration("duration", 5*time.Minute, "how long the workshop lasts")
		rate        = fset.Float64("rate", 1, "requests per second per learner (jittered between 0.5x and 1.5x the interval)")
		hostile     = fset.Float64("hostile", 0.01, "fraction of learners sending hostile scripts")
		forwarded   = fset.Bool("forwarded-for", false, "send each learner's own X-Forwarded-For address (from 198.18.0.0/15, the benchmarking range), as a load balancer would; start the server with -trusted-proxies 127.0.0.1 so it counts learners by it")
		seed        = fset.Uint64("seed", 1, "seed for pacing, tokens and the choice of hostile learners")
		ramp        = fset.Duration("ramp", 5*time.Second, "learners join at random times within this span (at most -duration)")
		timeout     = fset.Duration("timeout", 5*time.Second, "client timeout for one request")
		sampleEvery = fset.Duration("sample", 500*time.Millisecond, "memory sampling period")
		progress    = fset.Duration("progress", 30*time.Second, "print a progress line to stderr this often (0 for none)")
		p99         = fset.Duration("p99", 100*time.Millisecond, "target: p99 latency of every well-behaved route under this")
		maxRSS      = fset.Int("max-rss-mb", 512, "target: the peak memory of the sampled processes and their children, summed, under this many MB")
		strict      = fset.Bool("strict", false, "exit with status 1 when a target is missed")
		adminToken  = fset.String("admin-token", getenv("LOCKLAB_ADMIN_TOKEN"), "the server's admin token: adds the poll phase (a workshop every well-behaved learner joins, keeping its event stream open, and a poll they all answer) (env LOCKLAB_ADMIN_TOKEN)")
		pollAt      = fset.Duration("poll-at", 0, "with -admin-token, when the poll opens after the start (default: 10 s after the ramp)")
	)
	fset.Usage = func() {
		fmt.Fprintf(stderr, "Usage: %s [flags]\n\nSimulates a Lock Lab workshop against a running server and reports latency, errors and memory.\n\nFlags:\n", args[0])
		fset.PrintDefaults()
	}
	if err := fset.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fset.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (see -h)", fset.Arg(0))
	}
	targets, err := loadgen.CheckTargets(urls.values, *allowRemote)
	if err != nil {
		return err
	}
	pidList, err := loadgen.ParsePIDs(pids.values)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	res, err := loadgen.Run(ctx, loadgen.Config{
		Targets: targets, Learners: *learners, Duration: *duration, Rate: *rate,
		Hostile: *hostile, ForwardedFor: *forwarded, Seed: *seed, Ramp: min(*ramp, *duration), Timeout: *timeout,
		PIDs: pidList, SampleEvery: *sampleEvery, Proc: loadgen.Proc{Root: "/proc"},
		Progress: stderr, ProgressEvery: *progress,
		AdminToken: *adminToken, PollAt: pollTime(*pollAt, min(*ramp, *duration)),
	})
	if err != nil {
		return fmt.Errorf("load %s: %w", strings.Join(urls.values, ","), err)
	}
	verdict, err := res.WriteReport(stdout, loadgen.Targets{P99: *p99, PeakRSS: int64(*maxRSS) << 20})
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if *strict && !verdict.Pass {
		return errMissed
	}
	return nil
}

// pollTime is when the poll opens: at, or else 10 s after the ramp, when
// every learner has joined.
func pollTime(at, ramp time.Duration) time.Duration {
	if at > 0 {
		return at
	}
	return ramp + 10*time.Second
}

// listFlag is a flag that may be repeated, each value a comma-separated
// list; the first value given replaces the default.
type listFlag struct {
	values []string
	set    bool
}

func (f *listFlag) String() string {
	if f == nil {
		return ""
	}
	return strings.Join(f.values, ",")
}

func (f *listFlag) Set(v string) error {
	if !f.set {
		f.values, f.set = nil, true
	}
	f.values = append(f.values, v)
	return nil
}
