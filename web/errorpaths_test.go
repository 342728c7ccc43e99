package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locklab/locklab/content"
	"github.com/locklab/locklab/internal/testenv"
	"github.com/locklab/locklab/limit"
	"github.com/locklab/locklab/playground"
	"github.com/locklab/locklab/quiz"
)

// restartingPlayground answers every call but Exec as a playground whose
// worker is restarting: with the worker layer's error shape.
type restartingPlayground struct{ Playground }

func (restartingPlayground) Reset(string) error { return workerErr{playground.ErrRestarting} }
func (restartingPlayground) Advance(string, time.Duration) (playground.Advanced, error) {
	return playground.Advanced{}, workerErr{playground.ErrRestarting}
}
func (restartingPlayground) Keys(string) ([]playground.KeyInfo, error) {
	return nil, workerErr{playground.ErrRestarting}
}
func (restartingPlayground) Clock(string) (time.Time, error) {
	return time.Time{}, workerErr{playground.ErrRestarting}
}

// TestPlaygroundRestarting checks that Reset, Advance and Keys during a
// worker restart answer 503 (the worker's errors also match ErrLimit,
// a 400), and that the playground page still shows, without keys, and
// logs why.
func TestPlaygroundRestarting(t *testing.T) {
	cfg := testConfig(t)
	cfg.Playground = restartingPlayground{cfg.Playground}
	s, logs := newLoggedServer(t, cfg)
	l := newLearner(t, newServerFor(t, s))
	for _, tt := range []struct{ method, path, body string }{
		{"POST", "/api/playground/reset", `{}`},
		{"POST", "/api/playground/advance", `{"ms": 1000}`},
		{"GET", "/api/playground/keys", ""},
	} {
		if code, body := l.do(tt.method, tt.path, "application/json", tt.body); code != 503 || !strings.Contains(body, "restarting") {
			t.Errorf("%s %s during a restart = %d %s; want 503 saying it is restarting", tt.method, tt.path, code, body)
		}
	}
	// A line still runs; only the inspector's rows are missing.
	if code, body := l.do("POST", "/api/playground/exec", "application/json", `{"line": "PING", "client": "A"}`); code != 200 || !strings.Contains(body, `"output":"PONG"`) || !strings.Contains(body, `"keys_html":""`) {
		t.Errorf("exec during a restart of the key listing = %d %s; want 200 with PONG and no rows", code, body)
	}
	if code, body := l.do("GET", "/playground", "", ""); code != 200 || !strings.Contains(body, "client A") && !strings.Contains(body, "data-playground") {
		t.Errorf("playground page during a restart = %d; want 200", code)
	}
	if got := logs.String(); !strings.Contains(got, "playground keys") || !strings.Contains(got, "playground clock") {
		t.Errorf("the page's missing keys and clock are not logged; log:\n%s", got)
	}
}

// flakyCourse is a -content directory that is broken until fixed.
type flakyCourse struct {
	fixed  content.Fixed
	broken atomic.Bool
}

func (f *flakyCourse) Course() (*content.Course, error) {
	if f.broken.Load() {
		return nil, fmt.Errorf("lessons/x.md: no title: %w", content.ErrInvalid)
	}
	return f.fixed.Course()
}

// TestMarkStartedAfterContentError checks that a command run while the
// content is broken does not keep the learner from being marked as
// started once it is fixed.
func TestMarkStartedAfterContentError(t *testing.T) {
	cfg := testConfig(t)
	course := &flakyCourse{fixed: cfg.Content.(content.Fixed)}
	cfg.Content = course
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l := newLearner(t, newServerFor(t, s))
	l.csrfToken()
	course.broken.Store(true)
	if code, r, body := l.exec("A", "PING"); code != 200 || r.Output != "PONG" {
		t.Fatalf("PING with broken content = %d %s; want the reply", code, body)
	}
	course.broken.Store(false)
	l.exec("A", "PING")
	if q := l.quiz(); q.Progress.Status != "in-progress" {
		t.Errorf("after a command with the content fixed the topic is %q; want in-progress", q.Progress.Status)
	}
}

// brokenQuiz is a -content directory whose quiz for one topic is broken.
type brokenQuiz struct {
	QuizSource
	topic string
}

func (b brokenQuiz) Quiz(topic string) (*quiz.Quiz, error) {
	if topic == b.topic {
		return nil, fmt.Errorf("quizzes/%s.yaml: a question without choices: %w", topic, quiz.ErrInvalid)
	}
	return b.QuizSource.Quiz(topic)
}

// TestBrokenQuiz checks that a broken quiz in -content mode is a 500 that
// names the file, on the quiz and on a workshop's dashboard, which must
// not quietly drop it.
func TestBrokenQuiz(t *testing.T) {
	cfg := testConfig(t)
	cfg.AdminToken = adminToken
	cfg.Quizzes = brokenQuiz{cfg.Quizzes, "distributed-locks"}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	teacher := newLearner(t, newServerFor(t, s))
	const want = "quizzes/distributed-locks.yaml: a question without choices"
	if code, body := teacher.do("GET", "/api/topics/distributed-locks/quiz", "", ""); code != 500 || !strings.Contains(body, want) {
		t.Errorf("GET the broken quiz = %d %s; want 500 naming the file", code, body)
	}
	form(teacher, "/admin/login", url.Values{"token": {adminToken}})
	// Starting a workshop lands on its dashboard.
	if code, body := form(teacher, "/admin/workshops", url.Values{"title": {"Broken"}}); code != 500 || !strings.Contains(body, want) {
		t.Errorf("dashboard with a broken quiz = %d; want 500 naming the file", code)
	}
}

// crashingPlayground answers every line as a worker that died running it,
// with the line's reply filled in, as the worker layer does, after the
// line has taken 50 ms of the learner's (simulated) time.
type crashingPlayground struct {
	Playground
	took func()
}

func (p crashingPlayground) Exec(ctx context.Context, learner string, client playground.Client, line string) (playground.Result, error) {
	p.took()
	return playground.Result{Client: client, Output: "(error) ERR the sandbox worker stopped while running your command"}, workerErr{playground.ErrStopped}
}

// TestWorkerCrashIsCharged: a line whose worker died while running it
// (perhaps because of it) pays the time it took, though the worker could
// not report it: bringing a worker down must not be free.
func TestWorkerCrashIsCharged(t *testing.T) {
	cfg := testConfig(t)
	meter := newFakeMeter(1000)
	cfg.Playground = crashingPlayground{cfg.Playground, func() { time.Sleep(50 * time.Millisecond) }} // the work the line did
	cfg.Limits = limit.Limits{ScriptTime: limit.ScriptBudget{Learner: meter, Address: newFakeMeter(1000), Need: 10, LearnerRefill: 1, AddressRefill: 1}}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l := newLearner(t, newServerFor(t, s))
	l.exec("A", "KEYS *")
	meter.mu.Lock()
	defer meter.mu.Unlock()
	used := 0
	for _, n := range meter.used {
		used += n
	}
	if used < 5 {
		t.Errorf("a line whose worker died after 50 ms was charged %d units; want at least 5 (50 ms)", used)
	}
}

// newLoggedServer returns the server for cfg with its log kept in a
// buffer, for tests of what it logs.
func newLoggedServer(t *testing.T, cfg Config) (*Server, *testenv.SyncBuffer) {
	t.Helper()
	logs := new(testenv.SyncBuffer)
	cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, logs
}

// TestClientGoneIsNotAnError checks that a request cut short because its
// client went away is recorded as 499 and not logged as a failure, while
// the same error with the client still there is a 500 that is logged.
func TestClientGoneIsNotAnError(t *testing.T) {
	cfg := testConfig(t)
	s, logs := newLoggedServer(t, cfg)
	for _, tt := range []struct {
		name     string
		leave    bool
		err      error
		wantCode int
		wantLog  bool
	}{
		{"the client left", true, fmt.Errorf("exec: %w", context.Canceled), 499, false},
		{"the client left, a deadline inside", true, fmt.Errorf("exec: %w", context.DeadlineExceeded), 499, false},
		{"the client is there", false, fmt.Errorf("exec: %w", context.Canceled), 500, true},
		{"the client left, another error", true, errors.New("disk on fire"), 500, true},
	} {
		before := len(logs.String())
		ctx, cancel := context.WithCancel(context.Background())
		if tt.leave {
			cancel()
		}
		req := httptest.NewRequestWithContext(ctx, "POST", "/api/playground/exec", nil)
		rec := httptest.NewRecorder()
		s.handleError(tt.err, s.echo.NewContext(req, rec))
		cancel()
		if rec.Code != tt.wantCode {
			t.Errorf("%s: status %d; want %d", tt.name, rec.Code, tt.wantCode)
		}
		logged := logs.String()[before:]
		if strings.Contains(logged, "request failed") != tt.wantLog {
			t.Errorf("%s: logged %q; want a failure logged %v", tt.name, logged, tt.wantLog)
		}
	}
}
