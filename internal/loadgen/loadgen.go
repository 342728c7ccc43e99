// Package loadgen simulates a Lock Lab workshop against a running server:
// many learners, each with their own cookies, read the lesson, drive the
// playground as clients A and B, play the GC-pause race and answer the
// quiz at about one request a second, while a few hostile learners send
// scripts meant to hang or exhaust the sandbox. It records the latency of
// every request by route, checks every answer a well-behaved learner gets
// against what the lesson says it must be, and samples the server's
// memory, so that a run can be held against the course's targets.
//
// It only loads servers on this machine unless told otherwise, and every
// loop it runs ends by itself: learners stop at the deadline and after a
// bounded number of requests.
package loadgen

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Config says what workshop to simulate against which server.
type Config struct {
	Target   *url.URL      // the server's base URL, checked with CheckTarget
	Learners int           // learners in the workshop, hostile ones included
	Duration time.Duration // how long the workshop lasts
	Rate     float64       // requests per second per learner
	Hostile  float64       // fraction of learners that are hostile, 0 to 1
	// ForwardedFor gives each learner an address of its own in
	// X-Forwarded-For, as a load balancer in front of the server would.
	ForwardedFor bool
	Seed         uint64        // seeds the learners' pacing, tokens and choices
	Ramp         time.Duration // learners join at random times within this span
	Timeout      time.Duration // client timeout for one request

	// PID is the server process whose memory, with its children's, is
	// sampled. Zero means: find the process listening on Target's port.
	PID int
	// SampleEvery is the memory sampling period.
	SampleEvery time.Duration
	// Proc reads process information; Proc{Root: "/proc"} on Linux.
	Proc Proc

	// AdminToken, if set, adds the poll phase: the run starts a workshop
	// that every well-behaved learner joins first, and PollAt after the
	// start an instructor opens a poll that the whole room answers.
	AdminToken string
	PollAt     time.Duration

	// Progress, if not nil, gets a line every ProgressEvery.
	Progress      io.Writer
	ProgressEvery time.Duration
}

// Result is what a run measured.
type Result struct {
	Config          Config
	Elapsed         time.Duration
	Interrupted     bool // the run was stopped before its duration
	WellBehaved     int  // number of well-behaved learners
	HostileLearners int
	Requests        Summary // well-behaved learners' requests
	Hostile         Summary // hostile learners' requests, ordinary ones included
	Usage           Usage
	Poll            *PollResult // the poll phase, when there was one
}

// Usage is what sampling the server's process tree, and the load
// generator itself, found.
type Usage struct {
	PID       int
	Source    string // how PID was found
	Warning   string // doubts about PID, such as another process listening on the port
	Err       error  // why the server could not be sampled, if it could not
	Samples   int
	Peak      int64         // highest summed RSS, in bytes
	PeakAt    time.Duration // since the start
	PeakProcs int           // processes in the tree at the peak
	MaxProcs  int           // most processes seen in the tree
	Last      int64         // RSS at the last sample
	// CPU is the CPU time the server's tree used between the first and
	// the last sample, over Span.
	CPU, Span time.Duration
	SelfPeak  int64         // the load generator's own peak RSS
	SelfCPU   time.Duration // the load generator's CPU time over the run
	// MachineCPU is the CPU time all processes of the machine used over
	// Span, on CPUs processors: what neither the server nor the load
	// generator used came from other programs competing with them.
	MachineCPU time.Duration
	CPUs       int
}

// Run simulates the workshop until cfg.Duration has passed or ctx ends,
// and returns the measurements. It fails only if the run cannot start: a
// refused or unreachable target or a bad configuration. Errors the server
// makes during the run are part of the Result.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	res := &Result{Config: cfg}
	u := &res.Usage
	u.PID, u.Source, u.Err = cfg.serverPID()
	if cfg.PID > 0 {
		// A -pid that is not running is a mistake to stop at, not a
		// run without memory figures.
		if _, err := cfg.Proc.TreeUsage(cfg.PID); err != nil {
			return nil, fmt.Errorf("-pid %d: %w", cfg.PID, err)
		}
		u.Warning = cfg.checkListener()
	}

	transport := &http.Transport{
		// Never a proxy: the load must go where the loopback check said.
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: cfg.Timeout, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        2 * cfg.Learners,
		MaxIdleConnsPerHost: 2 * cfg.Learners,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   true,
	}
	defer transport.CloseIdleConnections()
	if err := waitHealthy(ctx, &http.Client{Transport: transport, Timeout: cfg.Timeout}, cfg.Target); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, math.MaxUint32))
	nHostile := int(math.Round(float64(cfg.Learners) * cfg.Hostile))
	hostile := make(map[int]bool, nHostile)
	for _, i := range rng.Perm(cfg.Learners)[:nHostile] {
		hostile[i] = true
	}
	res.HostileLearners, res.WellBehaved = nHostile, cfg.Learners-nHostile

	routes := LockLabRoutes()
	wellRec, hostileRec := NewRecorder(3), NewRecorder(3)
	start := time.Now()
	deadline := start.Add(cfg.Duration)
	interval := time.Duration(float64(time.Second) / cfg.Rate)
	// The jitter is at least half an interval, so a learner sends at most
	// two requests per interval; the bound only matters if clocks misbehave.
	maxRequests := int(2*cfg.Duration.Seconds()*cfg.Rate) + 10

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var sampler sync.WaitGroup
	sampler.Go(func() { res.Usage.sample(runCtx, cfg, start, wellRec, hostileRec) })

	var board *pollBoard
	var teacher sync.WaitGroup
	if cfg.AdminToken != "" {
		in, err := newInstructor(cfg, transport)
		if err != nil {
			return nil, err
		}
		code, err := in.startWorkshop(ctx)
		if err != nil {
			return nil, err
		}
		board, res.Poll = &pollBoard{}, &PollResult{Workshop: code}
		teacher.Go(func() { in.runPoll(runCtx, cfg, start, code, board, res.Poll) })
	}

	var wg sync.WaitGroup
	for i := range cfg.Learners {
		jar, err := cookiejar.New(nil)
		if err != nil {
			return nil, fmt.Errorf("cookie jar: %w", err)
		}
		l := &learner{
			id: i, hostile: hostile[i], base: cfg.Target, routes: routes,
			client: &http.Client{
				Transport: transport, Jar: jar, Timeout: cfg.Timeout,
				CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
			},
			rng: rand.New(rand.NewPCG(cfg.Seed, uint64(i))),
			rec: wellRec,
		}
		if cfg.ForwardedFor {
			l.forwardedFor = benchmarkAddr(i)
		}
		if l.hostile {
			l.rec, l.payloads = hostileRec, hostilePayloads()
		} else if board != nil {
			l.poll = &pollState{board: board}
			l.queue = l.joinSteps(res.Poll.Workshop, board)
		}
		joins := start.Add(time.Duration(l.rng.Float64() * float64(cfg.Ramp)))
		wg.Go(func() { l.run(ctx, joins, deadline, interval, maxRequests) })
	}
	wg.Wait()
	stop()
	sampler.Wait()
	teacher.Wait()
	if res.Poll != nil {
		res.Poll.Joined = int(board.joined.Load())
	}

	res.Elapsed = time.Since(start)
	res.Interrupted = ctx.Err() != nil
	res.Requests, res.Hostile = wellRec.Summary(), hostileRec.Summary()
	return res, nil
}

func (cfg Config) validate() error {
	switch {
	case cfg.Target == nil:
		return fmt.Errorf("no target URL")
	case cfg.Learners < 1:
		return fmt.Errorf("learners = %d; want at least 1", cfg.Learners)
	case cfg.Duration <= 0:
		return fmt.Errorf("duration = %v; want more than 0", cfg.Duration)
	case !(cfg.Rate > 0 && cfg.Rate <= 1000):
		return fmt.Errorf("rate = %v; want more than 0 and at most 1000 requests per second per learner", cfg.Rate)
	case !(cfg.Hostile >= 0 && cfg.Hostile <= 1):
		return fmt.Errorf("hostile = %v; want a fraction from 0 to 1", cfg.Hostile)
	case cfg.Ramp < 0 || cfg.Ramp > cfg.Duration:
		return fmt.Errorf("ramp = %v; want from 0 to the duration", cfg.Ramp)
	case cfg.Timeout <= 0:
		return fmt.Errorf("timeout = %v; want more than 0", cfg.Timeout)
	case cfg.SampleEvery <= 0:
		return fmt.Errorf("sample period = %v; want more than 0", cfg.SampleEvery)
	case cfg.AdminToken != "" && (cfg.PollAt < cfg.Ramp || cfg.PollAt+pollAnswerTime(cfg) >= cfg.Duration):
		return fmt.Errorf("poll at %v: want it after the ramp (%v) and %v before the end (%v), so that the room can answer", cfg.PollAt, cfg.Ramp, pollAnswerTime(cfg), cfg.Duration)
	}
	return nil
}

// serverPID returns cfg.PID, or else the process listening on the
// target's port.
func (cfg Config) serverPID() (int, string, error) {
	if cfg.PID > 0 {
		return cfg.PID, "-pid", nil
	}
	port := cfg.Target.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[cfg.Target.Scheme]
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return 0, "", fmt.Errorf("port %q: %w", port, err)
	}
	if !IsLoopback(cfg.Target.Hostname()) {
		return 0, "", fmt.Errorf("the server is not on this machine; pass -pid")
	}
	pid, err := cfg.Proc.ListenerPID(n)
	if err != nil {
		return 0, "", fmt.Errorf("find the server: %w; pass -pid", err)
	}
	return pid, fmt.Sprintf("listener of port %d", n), nil
}

// checkListener returns a warning when the process listening on the
// target's port is neither cfg.PID nor one of its descendants: the
// memory sampled would then not be the server's.
func (cfg Config) checkListener() string {
	port, err := strconv.Atoi(cfg.Target.Port())
	if err != nil || !IsLoopback(cfg.Target.Hostname()) {
		return ""
	}
	listener, err := cfg.Proc.ListenerPID(port)
	if err != nil {
		return "" // best effort: the listener may belong to another user
	}
	tree, err := cfg.Proc.Tree(cfg.PID)
	if err != nil || slices.Contains(tree, listener) {
		return ""
	}
	return fmt.Sprintf("port %d is served by pid %d, which is not -pid %d or one of its children", port, listener, cfg.PID)
}

// waitHealthy asks /healthz until it answers 200, for up to about five
// seconds, so a run does not start against a server still starting up.
func waitHealthy(ctx context.Context, client *http.Client, base *url.URL) error {
	var last error
	for range 20 {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base.String()+"/healthz", nil)
		if err != nil {
			return fmt.Errorf("health check: %w", err)
		}
		resp, err := client.Do(req)
		if err == nil {
			io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<10))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		last = err
		if !sleepUntil(ctx, time.Now().Add(250*time.Millisecond)) {
			break
		}
	}
	return fmt.Errorf("health check of %s/healthz: %w", base, last)
}

// sample reads the RSS and CPU time of the server's process tree every
// cfg.SampleEvery until ctx ends, and writes a progress line every
// cfg.ProgressEvery.
func (u *Usage) sample(ctx context.Context, cfg Config, start time.Time, well, hostile *Recorder) {
	tick := time.NewTicker(cfg.SampleEvery)
	defer tick.Stop()
	selfCPU0, _ := cfg.Proc.CPU(os.Getpid())
	machine0, _, machineErr := cfg.Proc.MachineCPU()
	var cpu0 time.Duration
	var first time.Time
	lastProgress := start
	// The progress line shows what other programs used since the last one.
	var last struct{ server, self, machine time.Duration }
	// One sample per period, plus slack for learners finishing their last
	// request after the deadline; cancelling ctx ends it sooner.
	maxSamples := int((cfg.Duration+cfg.Timeout)/cfg.SampleEvery) + 2
	for range maxSamples {
		now := time.Now()
		if u.Err == nil {
			tu, err := cfg.Proc.TreeUsage(u.PID)
			if err != nil {
				u.Err = fmt.Errorf("sample pid %d: %w", u.PID, err)
			} else {
				if u.Samples == 0 {
					cpu0, first = tu.CPU, now
				}
				u.Samples++
				u.Last = tu.RSS
				u.CPU, u.Span = tu.CPU-cpu0, now.Sub(first)
				u.MaxProcs = max(u.MaxProcs, tu.Procs)
				if tu.RSS > u.Peak {
					u.Peak, u.PeakAt, u.PeakProcs = tu.RSS, now.Sub(start), tu.Procs
				}
			}
		}
		if self, err := cfg.Proc.RSS(os.Getpid()); err == nil {
			u.SelfPeak = max(u.SelfPeak, self)
		}
		if cpu, err := cfg.Proc.CPU(os.Getpid()); err == nil {
			u.SelfCPU = cpu - selfCPU0
		}
		if machineErr == nil {
			if busy, cpus, err := cfg.Proc.MachineCPU(); err == nil {
				u.MachineCPU, u.CPUs = busy-machine0, cpus
			}
		}
		if cfg.Progress != nil && cfg.ProgressEvery > 0 && now.Sub(lastProgress) >= cfg.ProgressEvery {
			span := now.Sub(lastProgress)
			lastProgress = now
			w := well.TakeWindow()
			hn, _ := hostile.Counts()
			others := (u.MachineCPU - last.machine) - (u.CPU - last.server) - (u.SelfCPU - last.self)
			last.server, last.self, last.machine = u.CPU, u.SelfCPU, u.MachineCPU
			fmt.Fprintf(cfg.Progress, "loadgen: %v: well-behaved since last line: %d requests, p99 %s, max %s, %d errors; %d hostile requests in all; server RSS %s; other programs %.2f cores\n",
				now.Sub(start).Round(time.Second), w.Count, ms(w.P99), ms(w.Max), w.Errors, hn, u.progressRSS(), cores(others, span))
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (u *Usage) progressRSS() string {
	if u.Err != nil || u.Samples == 0 {
		return "unknown"
	}
	return fmt.Sprintf("%s (peak %s)", MB(u.Last), MB(u.Peak))
}

// MB formats a byte count in megabytes (2^20 bytes).
func MB(n int64) string {
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
}

// benchmarkAddr is learner i's address in 198.18.0.0/15, the range set
// aside for benchmarks: it only ever appears in a header.
func benchmarkAddr(i int) string {
	return fmt.Sprintf("198.%d.%d.%d", 18+(i>>16)&1, (i>>8)&0xff, i&0xff)
}
