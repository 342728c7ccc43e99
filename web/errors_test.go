package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/workshop"
)

// TestClassify checks the status each domain error maps to, wrapped as
// the workshop package wraps them.
func TestClassify(t *testing.T) {
	for _, tt := range []struct {
		err  error
		code int
		msg  string // a part of the message
	}{
		{fmt.Errorf("workshop: get NOPE1: %w", workshop.ErrNotFound), 404, "no workshop with that code"},
		{fmt.Errorf("workshop: get: %w (%w)", workshop.ErrBadInput, workshop.ErrNotFound), 404, "no workshop"},
		{fmt.Errorf("workshop: join X: %w", workshop.ErrEnded), 409, "ended"},
		{fmt.Errorf("workshop: join X: %w", workshop.ErrFull), 409, "full"},
		{fmt.Errorf("workshop: join X: %w", workshop.ErrBadInput), 400, "malformed"},
		{fmt.Errorf("store: get: %w", store.ErrUnavailable), 503, "can't be saved"},
		{fmt.Errorf("store: %w", store.ErrBadLearner), 400, "learner cookie"},
		{echo.NewHTTPError(429, "too many"), 429, "too many"},
		{errors.New("boom"), 500, "something went wrong"},
	} {
		code, msg := classify(tt.err)
		if code != tt.code || !strings.Contains(msg, tt.msg) {
			t.Errorf("classify(%v) = %d %q; want %d with %q", tt.err, code, msg, tt.code, tt.msg)
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
