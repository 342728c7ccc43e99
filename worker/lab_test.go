package worker

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
	"syscall"
	"testing"
	"time"

	"github.com/locklab/locklab/lab"
	"github.com/locklab/locklab/playground"
)

// spinRecipe is a recipe whose acquire line spins until its deadline; with
// spinBudget, that is longer than any test, so the check runs until it is
// stopped. A worker in "spin" mode says when it has read it.
var (
	spinRecipe = lab.Recipe{Acquire: []string{spinLine}, Release: []string{"DEL {key}"}}
	spinBudget = lab.Budget{LineTimeout: time.Hour, CPU: time.Hour}
)

// reportJSON is a report as the API serves it, without its CPU time,
// which is the one part that varies from run to run.
func reportJSON(t *testing.T, rep lab.Report) string {
	t.Helper()
	rep.CPUMS = 0
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCheckLabSameAsInProcess: a check in a worker gives the very report
// lab.Check gives in this process, several checks at once.
func TestCheckLabSameAsInProcess(t *testing.T) {
	s := newTestSupervisor(t, Options{Workers: 2})
	ch := lab.Challenges()[0]
	for _, tt := range []struct {
		name string
		req  lab.Request
		b    lab.Budget
	}{
		{"textbook", lab.Request{Recipe: lab.Textbook()}, lab.Budget{}},
		{"fenced, seed 3", lab.Request{Recipe: lab.Fenced(), Seed: 3}, lab.Budget{Random: 8}},
		{"a challenge's broken recipe", lab.Request{Recipe: ch.Recipe, Challenge: ch.ID, Seed: 9}, lab.Budget{Random: 8}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := s.CheckLab(context.Background(), tt.req, tt.b)
			if err != nil {
				t.Fatalf("CheckLab: %v", err)
			}
			want, err := lab.Check(context.Background(), tt.req, tt.b)
			if err != nil {
				t.Fatalf("lab.Check: %v", err)
			}
			if g, w := reportJSON(t, got), reportJSON(t, want); g != w {
				t.Errorf("CheckLab = %s\nwant lab.Check's %s", g, w)
			}
			if got.Schedules == 0 || len(got.Properties) != 4 {
				t.Errorf("CheckLab = %d schedules, %d properties; want a full report", got.Schedules, len(got.Properties))
			}
		})
	}
}

// TestCheckLabErrors: a check's error matches the same sentinel in the
// web process as in the worker, with the same message and, for a line to
// blame, the same *lab.LineError.
func TestCheckLabErrors(t *testing.T) {
	s := newTestSupervisor(t, Options{Workers: 1})
	textbook := lab.Textbook()
	for _, tt := range []struct {
		name string
		req  lab.Request
		b    lab.Budget
		want error
		line bool // a *lab.LineError
	}{
		{"empty acquire", lab.Request{Recipe: lab.Recipe{Release: textbook.Release}}, lab.Budget{}, lab.ErrBadRecipe, false},
		{"bad placeholder", lab.Request{Recipe: lab.Recipe{Acquire: textbook.Acquire, Release: []string{"DEL {nope}"}}}, lab.Budget{}, lab.ErrBadRecipe, true},
		{"refused command", lab.Request{Recipe: lab.Recipe{Acquire: []string{"SET {key} {token} NX PX {ttl}", "MULTI"}, Release: textbook.Release}}, lab.Budget{}, lab.ErrBadRecipe, true},
		{"unknown challenge", lab.Request{Recipe: textbook, Challenge: "no-such-challenge"}, lab.Budget{}, lab.ErrUnknownChallenge, false},
		{"bad seed", lab.Request{Recipe: textbook, Seed: 1 << 50}, lab.Budget{}, lab.ErrBadSeed, false},
		{"budget", lab.Request{Recipe: textbook}, lab.Budget{Steps: 5}, lab.ErrBudget, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, got := s.CheckLab(context.Background(), tt.req, tt.b)
			_, want := lab.Check(context.Background(), tt.req, tt.b)
			if !errors.Is(want, tt.want) {
				t.Fatalf("lab.Check = %v; the case expects %v", want, tt.want)
			}
			if !errors.Is(got, tt.want) {
				t.Errorf("CheckLab = %v; want an error matching %v", got, tt.want)
			}
			if got == nil || got.Error() != want.Error() {
				t.Errorf("CheckLab = %v; want lab.Check's %q", got, want)
			}
			var gotLine, wantLine *lab.LineError
			if errors.As(got, &gotLine) != tt.line || errors.As(want, &wantLine) != tt.line {
				t.Fatalf("CheckLab = %#v, lab.Check = %#v; want a *lab.LineError: %v", got, want, tt.line)
			}
			if tt.line && !reflect.DeepEqual(*gotLine, *wantLine) {
				t.Errorf("CheckLab's LineError = %+v; want %+v", *gotLine, *wantLine)
			}
		})
	}
}

// checkAnswer is what a CheckLab in a goroutine answered.
type checkAnswer struct {
	err error
	d   time.Duration
}

// startSpinning starts a check of spinRecipe and returns where its answer
// comes, once the worker has it.
func startSpinning(t *testing.T, s *Supervisor, logs *logRecorder, ctx context.Context) <-chan checkAnswer {
	t.Helper()
	seen := logs.waitFor(spinSeen)
	done := make(chan checkAnswer, 1)
	go func() {
		start := time.Now()
		_, err := s.CheckLab(ctx, lab.Request{Recipe: spinRecipe}, spinBudget)
		done <- checkAnswer{err, time.Since(start)}
	}()
	<-seen
	return done
}

// TestCheckLabCancel: a caller that gives up stops its check in the
// worker, which goes on serving; a check running holds up no sandbox.
func TestCheckLabCancel(t *testing.T) {
	logs := newLogRecorder(t)
	s := newTestSupervisor(t, Options{Workers: 1, Command: workerCommand("spin"), Logger: slog.New(slog.NewTextHandler(logs, nil))})
	pids := s.pids()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := startSpinning(t, s, logs, ctx)

	res, err := s.Exec(context.Background(), "ada", playground.ClientA, "PING")
	if err != nil || res.Output != "PONG" {
		t.Errorf("PING while a check spins in the worker = %q, %v; want PONG", res.Output, err)
	}
	cancel()
	// The check's budget is an hour: an answer at all is the cancel's.
	ans := <-done
	if !errors.Is(ans.err, context.Canceled) {
		t.Errorf("a cancelled check = %v; want context.Canceled", ans.err)
	}
	rep, err := s.CheckLab(context.Background(), lab.Request{Recipe: lab.Textbook()}, lab.Budget{Random: 2})
	if err != nil || rep.Random != 2 || rep.Systematic == 0 {
		t.Errorf("the next check = %d systematic and %d random schedules, %v; want a whole check with 2 random", rep.Systematic, rep.Random, err)
	}
	if got := s.pids(); !reflect.DeepEqual(got, pids) || s.Restarts() != 0 {
		t.Errorf("workers %v, %d restarts after a cancel; want %v, 0", got, s.Restarts(), pids)
	}
}

// TestCheckLabWorkerKilled kills the worker running a check with
// SIGKILL: the check answers ErrWorkerStopped at once, the worker is
// restarted, the next check gives the in-process report, and every
// learner's sandbox, on both workers, is as it was.
func TestCheckLabWorkerKilled(t *testing.T) {
	clock := newFakeClock()
	logs := newLogRecorder(t)
	s := newTestSupervisor(t, Options{Workers: 2, Command: workerCommand("spin"), Playground: playground.Options{Now: clock.Now}, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	var states []learnerState
	for i, l := range append(learnersOn(0, 2, 2, "learner"), learnersOn(1, 2, 2, "learner")...) {
		states = append(states, fill(t, s, clock, l, time.Duration(i)*time.Second))
	}
	pids := s.pids()
	done := startSpinning(t, s, logs, context.Background())
	killed := -1
	for i, sl := range s.slots {
		if sl.labs.Load() == 1 {
			killed = i
		}
	}
	if killed < 0 {
		t.Fatal("no worker counts the check")
	}
	if err := syscall.Kill(pids[killed], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	ans := <-done
	if !errors.Is(ans.err, ErrWorkerStopped) {
		t.Errorf("the killed check = %v; want ErrWorkerStopped", ans.err)
	}
	if errors.Is(ans.err, playground.ErrLimit) {
		t.Errorf("the killed check = %v matches playground.ErrLimit; want it to match only the worker's error", ans.err)
	}

	req := lab.Request{Recipe: lab.Textbook(), Seed: 4}
	b := lab.Budget{Random: 4}
	got, err := s.CheckLab(context.Background(), req, b)
	if err != nil {
		t.Fatalf("the next check: %v", err)
	}
	want, _ := lab.Check(context.Background(), req, b)
	if g, w := reportJSON(t, got), reportJSON(t, want); g != w {
		t.Errorf("the next check = %s\nwant %s", g, w)
	}
	clock.Add(time.Second)
	for _, st := range states {
		st.check(t, s, time.Second)
	}
	if got := s.Restarts(); got != 1 {
		t.Errorf("Restarts() = %d; want 1", got)
	}
	if now := s.pids(); len(now) != 2 || now[killed] == pids[killed] || now[1-killed] != pids[1-killed] {
		t.Errorf("worker pids %v after the kill; were %v: want a new worker %d only", now, pids, killed)
	}
}

// TestLabSlotSpreads: checks go to the worker with the fewest running.
func TestLabSlotSpreads(t *testing.T) {
	s := newTestSupervisor(t, Options{Workers: 3})
	seen := map[*slot]bool{}
	for range 3 {
		seen[s.labSlot()] = true
	}
	if len(seen) != 3 {
		t.Errorf("3 checks went to %d workers; want 3", len(seen))
	}
	for _, sl := range s.slots {
		if n := sl.labs.Load(); n != 1 {
			t.Errorf("worker %d counts %d checks; want 1", sl.index, n)
		}
	}
}

// TestCheckLabStuckWorker: a worker that stops answering during a check
// (here SIGSTOP) is taken for stuck once the check's time limit is past
// (labLimit), and restarted; the check answers ErrWorkerStopped.
func TestCheckLabStuckWorker(t *testing.T) {
	s := newTestSupervisor(t, Options{Workers: 1, RequestTimeout: 300 * time.Millisecond})
	b := lab.Budget{Random: 1, CPU: 50 * time.Millisecond, LineTimeout: 50 * time.Millisecond}
	limit := s.labLimit(b)
	if want := 550 * time.Millisecond; limit != want {
		t.Errorf("labLimit(%+v) = %v; want %v", b, limit, want)
	}
	stopProcess(t, s.pids()[0])
	start := time.Now()
	_, err := s.CheckLab(context.Background(), lab.Request{Recipe: lab.Textbook()}, b)
	if !errors.Is(err, ErrWorkerStopped) {
		t.Errorf("a check in a stopped worker = %v; want ErrWorkerStopped", err)
	}
	if d := time.Since(start); d < limit {
		t.Errorf("a check in a stopped worker answered after %v; want it given its %v first", d, limit)
	}
	if rep, err := s.CheckLab(context.Background(), lab.Request{Recipe: lab.Textbook()}, lab.Budget{Random: 1}); err != nil || rep.Random != 1 || rep.Systematic == 0 {
		t.Errorf("the next check = %d systematic and %d random schedules, %v; want a whole check", rep.Systematic, rep.Random, err)
	}
}

// BenchmarkCheckLab is a full check (every schedule of up to two faults,
// and 64 random) of the textbook
// recipe through a worker, to compare with lab's BenchmarkCheck in
// process: the boundary costs a JSON round trip of the report.
func BenchmarkCheckLab(b *testing.B) {
	s, err := NewSupervisor(Options{Workers: 1, Command: workerCommand("serve")})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	req := lab.Request{Recipe: lab.Textbook()}
	rep, err := s.CheckLab(context.Background(), req, lab.Budget{})
	if err != nil {
		b.Fatal(err)
	}
	js, _ := json.Marshal(rep)
	for b.Loop() {
		if _, err := s.CheckLab(context.Background(), req, lab.Budget{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(js)), "report-bytes")
}
