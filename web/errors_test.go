package web

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/locklab/locklab/carry"
	"github.com/locklab/locklab/content"
	"github.com/locklab/locklab/playground"
	"github.com/locklab/locklab/quiz"
	"github.com/locklab/locklab/race"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/workshop"
)

// workerErr has the shape of the worker host's errors: it matches its
// kind (playground.ErrRestarting or ErrStopped) and playground.ErrLimit,
// as the worker's own type does.
type workerErr struct{ kind error }

func (e workerErr) Error() string   { return "the playground's sandbox worker is restarting" }
func (e workerErr) Unwrap() []error { return []error{e.kind, playground.ErrLimit} }

// TestClassify checks the status and the message each domain error maps
// to, wrapped as the domain packages wrap them. want is a part of the
// message; own says the message is the error's own text.
func TestClassify(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		code int
		want string
		own  bool
	}{
		{"playground restarting", workerErr{playground.ErrRestarting}, 503, "playground is restarting", false},
		{"line stopped by a worker crash", workerErr{playground.ErrStopped}, 503, "playground is restarting", false},
		{"playground closed", fmt.Errorf("sandbox: %w", playground.ErrClosed), 503, "shutting down", false},
		{"unknown client", fmt.Errorf("client \"C\": %w", playground.ErrUnknownClient), 400, "client 'C'", true},
		{"bad advance", fmt.Errorf("advance -1: %w", playground.ErrBadAdvance), 400, "advance -1", true},
		{"not allowed", &playground.RefusedError{Kind: playground.ErrNotAllowed, Msg: "ERR FLUSHALL is not allowed"}, 400, "FLUSHALL is not allowed", true},
		{"limit", &playground.RefusedError{Kind: playground.ErrLimit, Msg: "ERR line too long"}, 400, "line too long", true},
		{"unknown topic", fmt.Errorf("quiz \"x\": %w", quiz.ErrUnknownTopic), 404, "quiz 'x'", true},
		{"unknown question", fmt.Errorf("quiz \"x\" question \"y\": %w", quiz.ErrUnknownQuestion), 404, "question 'y'", true},
		{"unknown choice", fmt.Errorf("choice \"z\": %w", quiz.ErrUnknownChoice), 400, "choice 'z'", true},
		{"unknown scenario", fmt.Errorf("no race scenario %q: %w", "nope", race.ErrUnknownScenario), 404, "no race scenario 'nope'", true},
		{"bad race params", fmt.Errorf("ttl_ms = 5: must be between 100 and 120000: %w", race.ErrBadParams), 400, "ttl_ms = 5", true},
		{"race failure", fmt.Errorf("run %q: sleep: the simulation schedules retries itself", "gc-pause"), 500, "something went wrong", false},
		{"carry malformed", fmt.Errorf("carry: %w", carry.ErrMalformed), 400, "8 letters and digits", false},
		{"carry unknown", fmt.Errorf("carry: %w", carry.ErrUnknown), 404, "no such code", false},
		{"carry used", fmt.Errorf("carry: %w", carry.ErrUsed), 410, "used already", false},
		{"carry expired", fmt.Errorf("carry: %w", carry.ErrExpired), 410, "expired", false},
		{"nothing to carry", fmt.Errorf("carry: %w", carry.ErrNothingToCarry), 409, "no saved progress", false},
		{"store unavailable", fmt.Errorf("store: get: %w", store.ErrUnavailable), 503, "can't be saved", false},
		{"disk full", fmt.Errorf("store: record answer: %w: the disk is full: %w", store.ErrUnavailable, &fs.PathError{Op: "write", Path: "progress.db", Err: syscall.ENOSPC}), 503, "can't be saved", false},
		{"store full", fmt.Errorf("store: merge: %w", store.ErrFull), 503, "no room for new learners", false},
		{"workshop not found", fmt.Errorf("workshop: get NOPE1: %w", workshop.ErrNotFound), 404, "no workshop with that code", false},
		{"malformed and so not found", fmt.Errorf("workshop: get: %w (%w)", workshop.ErrBadInput, workshop.ErrNotFound), 404, "no workshop", false},
		{"workshop ended", fmt.Errorf("workshop: join X: %w", workshop.ErrEnded), 409, "ended", false},
		{"workshop full", fmt.Errorf("workshop: join X: %w", workshop.ErrFull), 409, "full", false},
		{"workshop bad input", fmt.Errorf("workshop: join X: %w", workshop.ErrBadInput), 400, "malformed", false},
		{"not joined", fmt.Errorf("workshop: X learner: %w", workshop.ErrNotJoined), 404, "not joined this workshop", false},
		{"malformed learner, not joined", fmt.Errorf("store: %w: %w", workshop.ErrNotJoined, store.ErrBadLearner), 404, "not joined", false},
		{"no such poll", fmt.Errorf("workshop: X poll p: %w", workshop.ErrNoPoll), 404, "no such poll", false},
		{"malformed poll id", fmt.Errorf("workshop: X predict: %w (%w)", workshop.ErrBadInput, workshop.ErrNoPoll), 404, "no such poll", false},
		{"poll revealed", fmt.Errorf("workshop: X predict p: %w", workshop.ErrRevealed), 409, "revealed", false},
		{"too many polls", fmt.Errorf("workshop: X open poll: %w", workshop.ErrTooManyPolls), 409, "as many polls", false},
		{"joining closed", fmt.Errorf("workshop: join X: %w", workshop.ErrJoinClosed), 409, "not taking new participants", false},
		{"nickname taken", fmt.Errorf("workshop: join X: %w", workshop.ErrNicknameTaken), 409, "has this nickname", false},
		{"removed", fmt.Errorf("workshop: join X: %w", workshop.ErrRemoved), 403, "removed you", false},
		{"no such participant", fmt.Errorf("workshop: X remove k: %w", workshop.ErrNoParticipant), 404, "no such participant", false},
		{"malformed participant key", fmt.Errorf("workshop: X remove: participant \"k\": %w (%w)", workshop.ErrBadInput, workshop.ErrNoParticipant), 404, "no such participant", false},
		{"bad learner", fmt.Errorf("store: %w", store.ErrBadLearner), 400, "learner cookie", false},
		{"content invalid", fmt.Errorf("lessons/x.md: no title: %w", content.ErrInvalid), 500, "the course content is invalid: lessons/x.md: no title", false},
		{"quiz invalid", fmt.Errorf("quizzes/x.yaml: no questions: %w", quiz.ErrInvalid), 500, "the course content is invalid: quizzes/x.yaml: no questions", false},
		{"http error", echo.NewHTTPError(429, "too many"), 429, "too many", false},
		{"http error 500", echo.NewHTTPError(500, "secret detail"), 500, "internal server error", false},
		{"unknown", errors.New("boom"), 500, "something went wrong", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, msg := classify(tt.err)
			if code != tt.code || !strings.Contains(msg, tt.want) {
				t.Errorf("classify(%v) = %d %q; want %d with %q", tt.err, code, msg, tt.code, tt.want)
			}
			if tt.own && msg != unwrapMessage(tt.err) {
				t.Errorf("classify(%v) message = %q; want the error's own text %q", tt.err, msg, unwrapMessage(tt.err))
			}
			if code >= 500 && strings.Contains(msg, "boom") {
				t.Errorf("classify(%v) = %q shows an internal detail", tt.err, msg)
			}
		})
	}
}

// TestErrorTableReachable checks that no rule of the table is shadowed by
// an earlier one: each sentinel alone gets its own rule's status.
func TestErrorTableReachable(t *testing.T) {
	seen := map[error]bool{}
	for _, r := range errorTable {
		if seen[r.target] {
			t.Errorf("%v has two rules", r.target)
		}
		seen[r.target] = true
		if code, _ := classify(fmt.Errorf("op: %w", r.target)); code != r.code {
			t.Errorf("classify(%v) = %d; want its rule's %d (an earlier rule shadows it)", r.target, code, r.code)
		}
	}
}

// TestUnknownWorkshop checks that an unknown code is a 404 on the
// instructor's pages and a friendly error on the join form, never a 500.
func TestUnknownWorkshop(t *testing.T) {
	base := newWorkshopServer(t)
	l := newLearner(t, base)
	bearer := func(method, path string) int {
		req, _ := http.NewRequest(method, base+path, nil)
		req.Header.Set("Authorization", "Bearer "+adminToken)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, p := range []string{"/admin/workshops/NOPE42", "/admin/workshops/NOPE42/export.csv", "/admin/workshops/NOPE42/export.csv?part=questions", "/admin/workshops/NOPE42/events", "/admin/workshops/x/events"} {
		if code := bearer("GET", p); code != 404 {
			t.Errorf("GET %s = %d; want 404", p, code)
		}
	}
	if code := bearer("POST", "/admin/workshops/NOPE42/end"); code != 404 {
		t.Errorf("POST end of an unknown workshop = %d; want 404", code)
	}
	if code, body := form(l, "/join", url.Values{"code": {"NOPE42"}}); code != 400 || !strings.Contains(body, "There is no workshop with the code NOPE42") {
		t.Errorf("joining an unknown workshop = %d", code)
	}
	if code, body := l.do("GET", "/join/NOPE42", "", ""); code != 404 || !strings.Contains(body, "There is no workshop with the code NOPE42") {
		t.Errorf("join link of an unknown workshop = %d; want 404 with the form and the error", code)
	}
}

// TestWorkshopFullJoin checks that joining beyond the cap is a clear error
// while those in may come back.
func TestWorkshopFullJoin(t *testing.T) {
	cfg := testConfig(t)
	cfg.AdminToken = adminToken
	cfg.Workshops = workshop.New(cfg.Progress.(*store.Store), workshop.Options{MaxParticipants: 1})
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	base := newServerFor(t, s)
	teacher := newLearner(t, base)
	form(teacher, "/admin/login", url.Values{"token": {adminToken}})
	_, page := form(teacher, "/admin/workshops", url.Values{"title": {"Tiny"}})
	code := between(page, `<strong class="join-code">`, "</strong>")
	alice, bob := newLearner(t, base), newLearner(t, base)
	if st, _ := form(alice, "/join", url.Values{"code": {code}}); st != 200 {
		t.Fatalf("first join = %d", st)
	}
	if st, body := form(bob, "/join", url.Values{"code": {code}}); st != 400 || !strings.Contains(body, "That workshop is full") {
		t.Errorf("join beyond the cap = %d", st)
	}
	if st, _ := form(alice, "/join", url.Values{"code": {code}, "nickname": {"Al"}}); st != 200 {
		t.Errorf("rejoin when full = %d; want 200", st)
	}
}
