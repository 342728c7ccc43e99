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

// Config says what workshop to simulate against which servers.
type Config struct {
	// Targets are the base URLs of the server's replicas, checked with
	// CheckTargets. Each learner sends its requests to them in turn,
	// learner i starting at Targets[i mod n], as a load balancer without
	// sticky sessions would: the replicas must share their store, since
	// a learner's session moves between them.
	Targets  []*url.URL
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

	// PIDs are the processes whose memory, with their children's, is
	// sampled and summed: the replicas, and their store if it runs on
	// this machine. None means: find the processes listening on the
	// targets' ports.
	PIDs []int
	// SampleEvery is the memory sampling period.
	SampleEvery time.Duration
	// Proc reads process information; Proc{Root: "/proc"} on Linux.
	Proc Proc

	// AdminToken, if set, adds the poll phase: the run starts a workshop
	// that every well-behaved learner joins first, and PollAt after the
	// start an instructor opens a poll that the whole room answers. Each
	// learner who joined keeps the workshop's event stream open from then
	// on, as its page does, on a replica of its own.
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
	// ByReplica are the well-behaved learners' requests by replica (the
	// target's host and port as the route), when there are several.
	ByReplica Summary
	Poll      *PollResult   // the poll phase, when there was one
	Streams   *StreamResult // the learners' event streams, with the poll phase
}

// Usage is what sampling the servers' process trees, and the load
// generator itself, found.
type Usage struct {
	Procs    []ProcUsage // one per -pid, or per server found by its port
	Warnings []string    // doubts about the pids, such as another process listening on a port
	Err      error       // why the servers could not be sampled, or sampling stopped
	Samples  int         // samples that read every process
	// Peak is the highest RSS of all the trees together at one sample,
	// in bytes.
	Peak      int64
	PeakAt    time.Duration // since the start
	PeakProcs int           // processes in the trees at the peak
	MaxProcs  int           // most processes seen in the trees together
	Last      int64         // RSS of all the trees at the last sample
	// CPU is the CPU time the trees used between the first and the last
	// sample, over Span.
	CPU, Span time.Duration
	SelfPeak  int64         // the load generator's own peak RSS
	SelfCPU   time.Duration // the load generator's CPU time over the run
	// MachineCPU is the CPU time all processes of the machine used over
	// Span, on CPUs processors: what neither the server nor the load
	// generator used came from other programs competing with them.
	MachineCPU time.Duration
	CPUs       int
}

// ProcUsage is what sampling one process and its children found. A
// process that is also in the tree of an earlier one is counted there
// only.
type ProcUsage struct {
	PID      int
	Source   string // how PID was found
	Peak     int64  // highest RSS of the tree, in bytes
	PeakAt   time.Duration
	MaxProcs int   // most processes seen in the tree
	Last     int64 // RSS of the tree at the last sample
	CPU      time.Duration
	cpu0     time.Duration
}

// PeakSum is the sum of each tree's own peak: at least what they held
// together at any moment sampled, and more when their peaks came at
// different times. The memory target is held against it, so that
// sampling cannot flatter the run.
func (u *Usage) PeakSum() int64 {
	var sum int64
	for _, p := range u.Procs {
		sum += p.Peak
	}
	return sum
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
	u.Procs, u.Err = cfg.serverPIDs()
	if len(cfg.PIDs) > 0 {
		// A -pid that is not running is a mistake to stop at, not a
		// run without memory figures.
		for _, pid := range cfg.PIDs {
			if _, err := cfg.Proc.TreeUsage(pid); err != nil {
				return nil, fmt.Errorf("-pid %d: %w", pid, err)
			}
		}
		u.Warnings = cfg.checkListeners()
	}

	// Each learner has at most one request in flight, so the idle pool
	// never needs more than a connection per learner and replica; the
	// default of two idle connections per host would make most of them
	// dial anew for every request.
	dial := (&net.Dialer{Timeout: cfg.Timeout, KeepAlive: 30 * time.Second}).DialContext
	transport := &http.Transport{
		// Never a proxy: the load must go where the loopback check said.
		Proxy:               nil,
		DialContext:         dial,
		MaxIdleConns:        2 * cfg.Learners * len(cfg.Targets),
		MaxIdleConnsPerHost: 2 * cfg.Learners,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   true,
	}
	defer transport.CloseIdleConnections()
	for _, target := range cfg.Targets {
		if err := waitHealthy(ctx, &http.Client{Transport: transport, Timeout: cfg.Timeout}, target); err != nil {
			return nil, err
		}
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
	var replicaRec *Recorder
	if len(cfg.Targets) > 1 {
		replicaRec = NewRecorder(0)
	}
	start := time.Now()
	deadline := start.Add(cfg.Duration)
	interval := time.Duration(float64(time.Second) / cfg.Rate)
	// The jitter is at least half an interval, so a learner sends at most
	// two requests per interval; the bound only matters if clocks misbehave.
	maxRequests := int(2*cfg.Duration.Seconds()*cfg.Rate) + 10

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var board *pollBoard
	var streams *streamRunner
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
		streams = newStreamRunner(runCtx, cfg, dial)
		defer streams.transport.CloseIdleConnections()
		teacher.Go(func() { in.runPoll(runCtx, cfg, start, code, board, res.Poll) })
	}

	var sampler sync.WaitGroup
	sampler.Go(func() { res.Usage.sample(runCtx, cfg, start, wellRec, hostileRec, streams) })

	var wg sync.WaitGroup
	for i := range cfg.Learners {
		jar, err := cookiejar.New(nil)
		if err != nil {
			return nil, fmt.Errorf("cookie jar: %w", err)
		}
		l := &learner{
			// Learner i's first request goes to replica i mod n, as a
			// load balancer's turn falls where it may, so that what a
			// learner sends on its odd or even requests (a hostile
			// learner's payloads) is not all on one replica.
			id: i, hostile: hostile[i], bases: cfg.Targets, turn: i, routes: routes,
			client: &http.Client{
				Transport: transport, Jar: sharedJar{jar, cfg.Targets[0]}, Timeout: cfg.Timeout,
				CheckRedirect: noRedirects,
			},
			rng: rand.New(rand.NewPCG(cfg.Seed, uint64(i))),
			rec: wellRec, byReplica: replicaRec,
		}
		if cfg.ForwardedFor {
			l.forwardedFor = benchmarkAddr(i)
		}
		if l.hostile {
			l.rec, l.byReplica, l.payloads = hostileRec, nil, hostilePayloads()
		} else if board != nil {
			l.poll = &pollState{board: board}
			l.streams = streams
			l.queue = l.joinSteps(res.Poll.Workshop, board)
		}
		joins := start.Add(time.Duration(l.rng.Float64() * float64(cfg.Ramp)))
		wg.Go(func() { l.run(ctx, joins, deadline, interval, maxRequests) })
	}
	wg.Wait()
	// The streams stay open until every learner is done: closing them is
	// the end of the run, not a failure.
	stop()
	sampler.Wait()
	teacher.Wait()
	if streams != nil {
		streams.wait()
	}
	if res.Poll != nil {
		res.Poll.Joined = int(board.joined.Load())
		res.Streams = streams.result(res.Poll.ID, board.sentAt())
	}

	res.Elapsed = time.Since(start)
	res.Interrupted = ctx.Err() != nil
	res.Requests, res.Hostile = wellRec.Summary(), hostileRec.Summary()
	if replicaRec != nil {
		res.ByReplica = replicaRec.Summary()
	}
	return res, nil
}

// noRedirects makes a client hand back redirects, which the learners
// check, instead of following them.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

func (cfg Config) validate() error {
	switch {
	case len(cfg.Targets) == 0 || slices.Contains(cfg.Targets, nil):
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

// serverPIDs returns cfg.PIDs, or else the processes listening on the
// targets' ports (one per port, however many targets name it).
func (cfg Config) serverPIDs() ([]ProcUsage, error) {
	var procs []ProcUsage
	for _, pid := range cfg.PIDs {
		procs = append(procs, ProcUsage{PID: pid, Source: "-pid"})
	}
	if len(procs) > 0 {
		return procs, nil
	}
	for _, target := range cfg.Targets {
		n, err := targetPort(target)
		if err != nil {
			return nil, err
		}
		if !IsLoopback(target.Hostname()) {
			return nil, fmt.Errorf("the server %s is not on this machine; pass -pid", target)
		}
		pid, err := cfg.Proc.ListenerPID(n)
		if err != nil {
			return nil, fmt.Errorf("find the server %s: %w; pass -pid", target, err)
		}
		if !slices.ContainsFunc(procs, func(p ProcUsage) bool { return p.PID == pid }) {
			procs = append(procs, ProcUsage{PID: pid, Source: fmt.Sprintf("listener of port %d", n)})
		}
	}
	return procs, nil
}

// targetPort is the TCP port of a target URL.
func targetPort(target *url.URL) (int, error) {
	port := target.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[target.Scheme]
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return 0, fmt.Errorf("port %q: %w", port, err)
	}
	return n, nil
}

// checkListeners returns a warning for each target whose port is served
// by a process that is in none of the cfg.PIDs' trees: the memory sampled
// would then not be that server's.
func (cfg Config) checkListeners() []string {
	var trees []int
	for _, pid := range cfg.PIDs {
		tree, err := cfg.Proc.Tree(pid)
		if err != nil {
			return nil
		}
		trees = append(trees, tree...)
	}
	var warnings []string
	for _, target := range cfg.Targets {
		port, err := targetPort(target)
		if err != nil || !IsLoopback(target.Hostname()) {
			continue
		}
		listener, err := cfg.Proc.ListenerPID(port)
		if err != nil {
			continue // best effort: the listener may belong to another user
		}
		if !slices.Contains(trees, listener) {
			warnings = append(warnings, fmt.Sprintf("port %d is served by pid %d, which is not a -pid or one of their children", port, listener))
		}
	}
	return warnings
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

// otherPrograms returns the CPU time the machine spent beyond what the
// servers and the load generator used. The machine's count comes from
// samples at each clock tick and the processes' from the scheduler's
// exact run times, so with nothing else running it can come out a
// little below zero, which means none.
func otherPrograms(machine, servers, self time.Duration) time.Duration {
	return max(0, machine-servers-self)
}

// sample reads the RSS and CPU time of the servers' process trees every
// cfg.SampleEvery until ctx ends, and writes a progress line every
// cfg.ProgressEvery.
func (u *Usage) sample(ctx context.Context, cfg Config, start time.Time, well, hostile *Recorder, streams *streamRunner) {
	tick := time.NewTicker(cfg.SampleEvery)
	defer tick.Stop()
	selfCPU0, _ := cfg.Proc.CPU(os.Getpid())
	machine0, _, machineErr := cfg.Proc.MachineCPU()
	var first time.Time
	lastProgress := start
	// The progress line shows what other programs used since the last one.
	var last struct{ server, self, machine time.Duration }
	// One sample per period, plus slack for learners finishing their last
	// request after the deadline; cancelling ctx ends it sooner.
	maxSamples := int((cfg.Duration+cfg.Timeout)/cfg.SampleEvery) + 2
	for range maxSamples {
		now := time.Now()
		if u.Err == nil && len(u.Procs) > 0 {
			u.Err = u.sampleOnce(cfg.Proc, now, start, &first)
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
			others := otherPrograms(u.MachineCPU-last.machine, u.CPU-last.server, u.SelfCPU-last.self)
			last.server, last.self, last.machine = u.CPU, u.SelfCPU, u.MachineCPU
			open := ""
			if streams != nil {
				open = fmt.Sprintf("; %d event streams open", streams.open.Load())
			}
			fmt.Fprintf(cfg.Progress, "loadgen: %v: well-behaved since last line: %d requests, p99 %s, max %s, %d errors; %d hostile requests in all%s; server RSS %s; other programs %.2f cores\n",
				now.Sub(start).Round(time.Second), w.Count, ms(w.P99), ms(w.Max), w.Errors, hn, open, u.progressRSS(), cores(others, span))
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// sampleOnce reads every process tree once. A process that has ended is
// an error: the sum would no longer be the servers' memory.
func (u *Usage) sampleOnce(proc Proc, now, start time.Time, first *time.Time) error {
	counted := make(map[int]bool)
	var rss int64
	var cpu time.Duration
	var procs int
	tus := make([]TreeUsage, len(u.Procs))
	for i, p := range u.Procs {
		tu, err := proc.TreeUsageExcept(p.PID, counted)
		if err != nil {
			return fmt.Errorf("sample pid %d: %w", p.PID, err)
		}
		tus[i] = tu
	}
	for i, tu := range tus {
		p := &u.Procs[i]
		if u.Samples == 0 {
			p.cpu0 = tu.CPU
		}
		p.Last, p.CPU = tu.RSS, tu.CPU-p.cpu0
		p.MaxProcs = max(p.MaxProcs, tu.Procs)
		if tu.RSS > p.Peak {
			p.Peak, p.PeakAt = tu.RSS, now.Sub(start)
		}
		rss += tu.RSS
		cpu += p.CPU
		procs += tu.Procs
	}
	if u.Samples == 0 {
		*first = now
	}
	u.Samples++
	u.Last = rss
	u.CPU, u.Span = cpu, now.Sub(*first)
	u.MaxProcs = max(u.MaxProcs, procs)
	if rss > u.Peak {
		u.Peak, u.PeakAt, u.PeakProcs = rss, now.Sub(start), procs
	}
	return nil
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
