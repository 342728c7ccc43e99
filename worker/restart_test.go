package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/fakeclock"
	"github.com/locklab/locklab/internal/testenv"
	"github.com/locklab/locklab/playground"
)

// logRecorder is a slog handler that keeps the messages, for tests to
// check, and passes them to t.Log while the test runs.
type logRecorder struct {
	mu   sync.Mutex
	t    *testing.T
	done bool
	msgs []string
	// waiters are closed when a line with their text is logged.
	waiters []logWaiter
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(newLogRecorder(t), nil))
}

func newLogRecorder(t *testing.T) *logRecorder {
	r := &logRecorder{t: t}
	t.Cleanup(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.done = true
	})
	return r
}

// waitFor returns a channel that is closed once a line containing substr
// is logged.
func (r *logRecorder) waitFor(substr string) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	ch := make(chan struct{})
	r.waiters = append(r.waiters, logWaiter{substr, ch})
	return ch
}

type logWaiter struct {
	substr string
	ch     chan struct{}
}

func (r *logRecorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, string(p))
	kept := r.waiters[:0]
	for _, w := range r.waiters {
		if strings.Contains(string(p), w.substr) {
			close(w.ch)
		} else {
			kept = append(kept, w)
		}
	}
	r.waiters = kept
	if !r.done {
		r.t.Log(strings.TrimSpace(string(p)))
	}
	return len(p), nil
}

func (r *logRecorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.msgs, "")
}

// learnerState is what a test checks of a learner's sandbox after its
// worker died.
type learnerState struct {
	name  string
	sha   string
	keys  []playground.KeyInfo
	clock time.Time
}

// fill gives a learner keys of every type, one with a TTL, a cached
// script, a function library, a moved clock and an open transaction on
// client B.
func fill(t *testing.T, s *Supervisor, clock *fakeclock.Clock, learner string, advance time.Duration) learnerState {
	t.Helper()
	a := playground.ClientA
	script := fmt.Sprintf("return 'kept by %s ' .. ARGV[1]", learner)
	runSteps(t, s, []step{
		{learner, a, "SET lock:" + learner + " token-" + learner + " PX 60000", "OK"},
		{learner, a, "HSET h owner " + learner, "(integer) 1"},
		{learner, a, "RPUSH l b a", "(integer) 2"},
		{learner, a, "SADD s x y", "(integer) 2"},
		{learner, a, "ZADD z 1.5 m", "(integer) 1"},
		{learner, a, `EVAL "return redis.call('INCR', KEYS[1])" 1 n`, "(integer) 1"},
		{learner, a, `FUNCTION LOAD "#!lua name=lib\nredis.register_function('whose', function(keys, args) return 'function of ' .. args[1] end)"`, `"lib"`},
		{learner, playground.ClientB, "MULTI", "OK"},
	})
	res, err := s.Exec(context.Background(), learner, a, fmt.Sprintf("SCRIPT LOAD %q", script))
	if err != nil {
		t.Fatal(err)
	}
	if advance > 0 {
		if _, err := s.Advance(learner, advance); err != nil {
			t.Fatal(err)
		}
	}
	keys, err := s.Keys(learner)
	if err != nil || len(keys) != 6 {
		t.Fatalf("Keys(%s) = %v, %v; want 6 keys", learner, keys, err)
	}
	now, _ := s.Clock(learner)
	return learnerState{name: learner, sha: strings.Trim(res.Output, `"`), keys: keys, clock: now}
}

// check verifies, after the clock moved by elapsed, that the learner's
// next requests succeed and find the sandbox as fill left it.
func (st learnerState) check(t *testing.T, s *Supervisor, elapsed time.Duration) {
	t.Helper()
	a := playground.ClientA
	res, err := s.Exec(context.Background(), st.name, a, "GET lock:"+st.name)
	if err != nil || res.Output != `"token-`+st.name+`"` {
		t.Errorf("%s: GET the lock = %q, %v; want its token", st.name, res.Output, err)
	}
	keys, err := s.Keys(st.name)
	if err != nil || len(keys) != len(st.keys) {
		t.Fatalf("%s: Keys() = %v, %v; want %v", st.name, keys, err, st.keys)
	}
	for i, k := range keys {
		want := st.keys[i]
		if want.PTTLMS > 0 {
			want.PTTLMS -= elapsed.Milliseconds()
		}
		if k != want {
			t.Errorf("%s: Keys()[%d] = %+v; want %+v", st.name, i, k, want)
		}
	}
	runSteps(t, s, []step{
		{st.name, a, "EVALSHA " + st.sha + " 0 yes", `"kept by ` + st.name + ` yes"`},
		{st.name, a, "FCALL whose 0 " + st.name, `"function of ` + st.name + `"`},
		{st.name, a, `EVAL "return redis.call('INCR', KEYS[1])" 1 n`, "(integer) 2"},
	})
	if now, _ := s.Clock(st.name); !now.Equal(st.clock.Add(elapsed)) {
		t.Errorf("%s: Clock() = %v; want %v", st.name, now, st.clock.Add(elapsed))
	}
}

// TestSIGKILLMidRequest kills a worker with SIGKILL while it runs a
// learner's script. The website's side keeps working: the killed request
// answers with a clear message, the worker is restarted, and every
// learner's next request succeeds with their keys, TTLs, scripts and
// clock as they were, on both workers.
func TestSIGKILLMidRequest(t *testing.T) {
	clock := newFakeClock()
	logs := newLogRecorder(t)
	s := newTestSupervisor(t, Options{Workers: 2, Command: workerCommand("spin"), Playground: playground.Options{Now: clock.Now}, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	onKilled := learnersOn(0, 2, 4, "learner")
	onOther := learnersOn(1, 2, 2, "learner")
	spinner := onKilled[3]
	var states []learnerState
	for i, l := range append(onKilled, onOther...) {
		states = append(states, fill(t, s, clock, l, time.Duration(i)*time.Second))
	}
	pids := s.pids()

	type answer struct {
		res playground.Result
		err error
		d   time.Duration
	}
	done := make(chan answer, 1)
	spinning := logs.waitFor(spinSeen)
	go func() {
		start := time.Now()
		res, err := s.Exec(context.Background(), spinner, playground.ClientA, spinLine)
		done <- answer{res, err, time.Since(start)}
	}()
	<-spinning // the worker has the script: killing it now kills the request
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	ans := <-done
	if want := "(error) " + stoppedMsg; ans.res.Output != want {
		t.Errorf("the killed request = %q; want %q", ans.res.Output, want)
	}
	if !errors.Is(ans.err, ErrWorkerStopped) || !errors.Is(ans.err, playground.ErrLimit) {
		t.Errorf("the killed request's error = %v; want ErrWorkerStopped and ErrLimit", ans.err)
	}
	// The answer is the stopped worker's, not the script deadline's
	// (which the output would name): the request was answered because the
	// worker died. ans.d is only logged, as timing varies with the machine.
	t.Logf("the killed request was answered after %v", ans.d)

	clock.Add(2 * time.Second)
	for _, st := range states {
		st.check(t, s, 2*time.Second)
	}
	if got := s.Restarts(); got != 1 {
		t.Errorf("Restarts() = %d; want 1", got)
	}
	if now := s.pids(); len(now) != 2 || now[0] == pids[0] || now[1] != pids[1] {
		t.Errorf("worker pids %v after the kill; were %v: want a new first worker only", now, pids)
	}
}

// TestWorkerOutOfMemory: an input that makes a worker allocate without
// bound (possible only in this test's worker) meets the worker's memory
// limit; the worker dies of Go's out-of-memory error, the learner is
// told, and the others' sandboxes come back.
func TestWorkerOutOfMemory(t *testing.T) {
	clock := newFakeClock()
	logs := newLogRecorder(t)
	s := newTestSupervisor(t, Options{
		Workers: 1,
		Command: workerCommand("boom"),
		// A worker near its memory limit collects garbage on almost
		// every allocation: on a loaded machine it may take longer to
		// run out than the default watchdog, which would kill it as
		// stuck first. This test is about running out.
		RequestTimeout: time.Minute,
		Playground:     playground.Options{Now: clock.Now},
		Logger:         slog.New(slog.NewTextHandler(logs, nil)),
	})
	st := fill(t, s, clock, "innocent", time.Second)
	res, err := s.Exec(context.Background(), "culprit", playground.ClientA, boomLine)
	if !errors.Is(err, ErrWorkerStopped) || res.Output != "(error) "+stoppedMsg {
		t.Fatalf("the boom line = %q, %v; want the worker-stopped message", res.Output, err)
	}
	st.check(t, s, 0)
	runSteps(t, s, []step{{"culprit", playground.ClientA, "PING", "PONG"}})
	if !isOOM(logs.String()) {
		t.Errorf("the log does not show the worker's out of memory error:\n%s", logs)
	}
	if got := s.Restarts(); got != 1 {
		t.Errorf("Restarts() = %d; want 1", got)
	}
}

// TestStuckWorker: a worker that stops answering (here SIGSTOP) is killed
// after RequestTimeout without progress, and restarted.
func TestStuckWorker(t *testing.T) {
	s := newTestSupervisor(t, Options{Workers: 1, RequestTimeout: 700 * time.Millisecond})
	runSteps(t, s, []step{{"ada", playground.ClientA, "SET k v", "OK"}})
	stopProcess(t, s.pids()[0])
	start := time.Now()
	res, err := s.Exec(context.Background(), "ada", playground.ClientA, "PING")
	if !errors.Is(err, ErrWorkerStopped) {
		t.Errorf("PING to a stopped worker = %q, %v; want ErrWorkerStopped", res.Output, err)
	}
	if d := time.Since(start); d < 700*time.Millisecond {
		t.Errorf("PING to a stopped worker answered after %v; want it given its 700ms first", d)
	}
	runSteps(t, s, []step{{"ada", playground.ClientA, "GET k", `"v"`}})
}

// TestRestartBudget: a worker that dies again and again is restarted at
// most MaxRestarts times a minute; meanwhile its learners get a clear
// answer without waiting long, and Close does not wait for the pause.
func TestRestartBudget(t *testing.T) {
	s := newTestSupervisor(t, Options{Workers: 1, MaxRestarts: 2})
	for i := range 3 {
		res, err := s.Exec(context.Background(), "ada", playground.ClientA, "PING")
		if err != nil || res.Output != "PONG" {
			t.Fatalf("PING %d = %q, %v; want PONG", i, res.Output, err)
		}
		syscall.Kill(s.pids()[0], syscall.SIGKILL)
		for range 100 { // until the death is noticed
			if len(s.pids()) == 0 || s.Restarts() > int64(i) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	start := time.Now()
	res, err := s.Exec(context.Background(), "ada", playground.ClientA, "PING")
	if !errors.Is(err, ErrUnavailable) || res.Output != "(error) "+unavailableMsg {
		t.Errorf("PING while restarts pause = %q, %v; want the unavailable message", res.Output, err)
	}
	// Restarts pause for the rest of the minute; the answer does not wait
	// for them.
	if d := time.Since(start); d > testenv.HangGuard {
		t.Errorf("PING while restarts pause took %v; want it not to wait for the pause", d)
	}
	if got := s.Restarts(); got != 2 {
		t.Errorf("Restarts() = %d; want 2", got)
	}
	start = time.Now()
	s.Close()
	if d := time.Since(start); d > testenv.HangGuard {
		t.Errorf("Close took %v; want it not to wait for the restarts' pause", d)
	}
}

// TestSpinningScriptDoesNotBlockWorker: while a learner's script spins
// until its deadline, the other learners of the same worker are answered
// at once: requests to a worker are multiplexed.
func TestSpinningScriptDoesNotBlockWorker(t *testing.T) {
	logs := newLogRecorder(t)
	s := newTestSupervisor(t, Options{Workers: 1, Command: workerCommand("spin"), Logger: slog.New(slog.NewTextHandler(logs, nil))})
	ctx := context.Background()
	runSteps(t, s, []step{{"spinner", playground.ClientA, "PING", "PONG"}})
	done := make(chan playground.Result)
	spinning := logs.waitFor(spinSeen)
	go func() {
		res, _ := s.Exec(ctx, "spinner", playground.ClientA, spinLine)
		done <- res
	}()
	<-spinning // the worker has the script
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			learner := fmt.Sprintf("learner-%d", i)
			for range 10 {
				if res, err := s.Exec(ctx, learner, playground.ClientA, "INCR n"); err != nil || res.Output == "" {
					t.Errorf("INCR for %s = %+v, %v", learner, res, err)
				}
			}
		}()
	}
	wg.Wait()
	// The script spins for a second; the others were answered before it
	// stopped.
	select {
	case res := <-done:
		t.Errorf("200 commands of other learners were answered only after the spinning script stopped (%q)", res.Output)
	default:
	}
	if res := <-done; !strings.Contains(res.Output, "stopped the script after 1s") {
		t.Errorf("the spinning script = %q; want it stopped at its deadline", res.Output)
	}
	if got := s.ScriptTimeouts(); got != 1 {
		t.Errorf("ScriptTimeouts() = %d; want 1", got)
	}
}

// TestCancelStopsScript: a caller that gives up (the browser went away)
// stops its script in the worker.
func TestCancelStopsScript(t *testing.T) {
	s := newTestSupervisor(t, Options{Workers: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	// The script's own deadline would stop it after a second and say so;
	// "cancelled" is the caller's giving up.
	res, _ := s.Exec(ctx, "ada", playground.ClientA, `EVAL "while true do end" 0`)
	if !strings.Contains(res.Output, "cancelled") {
		t.Errorf("a cancelled script = %q; want it cancelled", res.Output)
	}
}

// stopProcess stops pid with SIGSTOP and returns once the kernel shows it
// stopped: the signal is delivered asynchronously, and a worker that
// still runs for a moment would answer a request sent meanwhile.
func stopProcess(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return // no /proc: the signal is all there is
		}
		// The state follows the command name in parentheses.
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && (b[i+2] == 'T' || b[i+2] == 't') {
			return
		}
		runtime.Gosched()
	}
	t.Fatalf("pid %d did not stop within 10 s of SIGSTOP", pid)
}
