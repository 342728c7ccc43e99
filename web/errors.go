package web

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/locklab/locklab/carry"
	"github.com/locklab/locklab/content"
	"github.com/locklab/locklab/lab"
	"github.com/locklab/locklab/playground"
	"github.com/locklab/locklab/progress"
	"github.com/locklab/locklab/quiz"
	"github.com/locklab/locklab/race"
	"github.com/locklab/locklab/web/views"
	"github.com/locklab/locklab/workshop"
)

// apiError is the one JSON shape of every API error.
type apiError struct {
	Error string `json:"error"`
}

// handleError maps an error to a status and renders it: JSON for /api/,
// the site's error page for everything else. Internal details stay in the log.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	code, msg := classify(err)
	if gone(c.Request(), err) {
		code, msg = statusClientGone, "the request was cancelled"
	}
	switch {
	case code >= 500 && (errors.Is(err, progress.ErrUnavailable) || errors.Is(err, playground.ErrStoreDown)):
		// A store that is down fails every request that needs it: logged
		// once a minute, the others counted.
		st := storeProgress
		if errors.Is(err, playground.ErrStoreDown) {
			st = storeSandboxCopies
		}
		s.metrics.storeErrors.WithLabelValues(st).Inc()
		s.failures.Log(c.Request().Context(), slog.LevelError, "request failed: store unavailable", "uri", redactURI(c.Request().RequestURI), "error", err)
	case code >= 500:
		s.log.Error("request failed", "uri", redactURI(c.Request().RequestURI), "error", err)
	}
	if isAPI(c.Request()) {
		// A HEAD gets the same headers; net/http drops the body.
		_ = c.JSON(code, apiError{Error: msg})
		return
	}
	m := views.Error{Page: s.page(http.StatusText(code), "", ""), Code: code, Message: msg}
	switch {
	case code == http.StatusNotFound && errors.Is(err, workshop.ErrNotFound):
		m.Heading = "Workshop not found"
		m.Message = "There is no workshop with this code. Check the link or the code with your instructor."
	case code == http.StatusNotFound:
		m.Heading = "Page not found"
		m.Message = "There is no page at this address. It may have moved, or the link may be mistyped."
	case code == http.StatusInternalServerError:
		m.Heading = "Something went wrong"
	default:
		m.Heading = http.StatusText(code)
	}
	m.Page.Title = m.Heading
	_ = render(c, code, views.ErrorPage(m))
}

// statusClientGone is the status recorded for a request whose client
// went away before its answer (nginx's 499): no one reads it, and it is
// neither a server error to log nor a success to count as one.
const statusClientGone = 499

// gone reports whether err is the request's own context ending: the
// client closed the connection, so the work was cut short for it.
func gone(r *http.Request, err error) bool {
	return r.Context().Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}

// errorRule maps every error that matches target (errors.Is) to a status
// and the message a client may see.
type errorRule struct {
	target error
	code   int
	// msg is the message; empty means the error's own text (see
	// unwrapMessage), which for these sentinels names the operation and
	// the reason and nothing internal.
	msg string
	// detail prefixes msg to the error's full text: for content errors,
	// which the author needs to see whole.
	detail bool
}

// errorTable is every domain sentinel a handler may return, in the order
// they are tried: the first rule that matches wins. An error may wrap
// several sentinels, so order matters where they overlap:
//
//   - the worker host's errors, which match playground.ErrRestarting or
//     ErrStopped, wrap playground.ErrLimit too (a line refused by the
//     worker layer leaves the sandbox unchanged, like a refused line), so
//     those come before it: a playground restarting is a 503, not the
//     learner's fault;
//   - workshop.ErrNotFound comes before workshop.ErrBadInput, as a malformed
//     workshop code is also one that does not exist; so do ErrNoPoll (a
//     malformed poll id), ErrNoParticipant (a malformed participant key)
//     and ErrNotJoined (a malformed learner id, which is also
//     progress.ErrBadLearner, has joined nothing).
var errorTable = []errorRule{
	// The playground restarting (its worker processes) and shutting down.
	{target: playground.ErrRestarting, code: http.StatusServiceUnavailable, msg: "the playground is restarting; please try again in a moment"},
	{target: playground.ErrStopped, code: http.StatusServiceUnavailable, msg: "the playground is restarting; please try again in a moment"},
	{target: playground.ErrClosed, code: http.StatusServiceUnavailable, msg: "the playground is shutting down; please try again in a moment"},
	{target: playground.ErrBusy, code: http.StatusServiceUnavailable, msg: "your sandbox was busy with your other requests; please try again"},
	{target: playground.ErrStoreDown, code: http.StatusServiceUnavailable, msg: "the store this site's servers share your sandbox through cannot be reached just now, so the line was not answered (it may have run); please try again in a moment"},
	// The learner's own lines.
	{target: playground.ErrUnknownClient, code: http.StatusBadRequest},
	{target: playground.ErrBadAdvance, code: http.StatusBadRequest},
	{target: playground.ErrUnknownNode, code: http.StatusNotFound},
	{target: playground.ErrBadNodeAction, code: http.StatusBadRequest},
	{target: playground.ErrNotAllowed, code: http.StatusBadRequest},
	{target: playground.ErrLimit, code: http.StatusBadRequest},
	// Quizzes.
	{target: quiz.ErrUnknownTopic, code: http.StatusNotFound},
	{target: quiz.ErrUnknownQuestion, code: http.StatusNotFound},
	{target: quiz.ErrUnknownChoice, code: http.StatusBadRequest},
	// Race scenarios: a bad id or bad knobs are the caller's; any other
	// failure of a simulation is ours (the default).
	{target: race.ErrUnknownScenario, code: http.StatusNotFound},
	{target: race.ErrBadParams, code: http.StatusBadRequest},
	// The lock lab: a recipe that cannot run names its line; a check that
	// spends its budget is the recipe's doing too.
	{target: lab.ErrBadRecipe, code: http.StatusBadRequest},
	{target: lab.ErrBudget, code: http.StatusBadRequest},
	{target: lab.ErrBadSeed, code: http.StatusBadRequest},
	{target: lab.ErrUnknownChallenge, code: http.StatusNotFound},
	// Carry codes.
	{target: carry.ErrMalformed, code: http.StatusBadRequest, msg: "a code is 8 letters and digits, like K7QM-4TXP; check what you typed"},
	{target: carry.ErrUnknown, code: http.StatusNotFound, msg: "there is no such code; check it, or get a new one on the other device"},
	{target: carry.ErrUsed, code: http.StatusGone, msg: "this code has been used already; get a new one on the other device"},
	{target: carry.ErrExpired, code: http.StatusGone, msg: "this code has expired; get a new one on the other device"},
	{target: carry.ErrNothingToCarry, code: http.StatusConflict, msg: "this browser has no saved progress to carry yet: answer a question or run a playground command first"},
	// The store: progress and workshops.
	{target: progress.ErrUnavailable, code: http.StatusServiceUnavailable, msg: "your progress can't be saved right now; please try again in a moment"},
	{target: progress.ErrFull, code: http.StatusServiceUnavailable, msg: "this server has no room for new learners' progress right now; please try again later"},
	{target: workshop.ErrNotFound, code: http.StatusNotFound, msg: "there is no workshop with that code; check it with your instructor"},
	{target: workshop.ErrNotJoined, code: http.StatusNotFound, msg: "you have not joined this workshop; join it with the code your instructor gives"},
	{target: workshop.ErrNoPoll, code: http.StatusNotFound, msg: "there is no such poll in this workshop"},
	{target: workshop.ErrRevealed, code: http.StatusConflict, msg: "this poll has been revealed; predictions are closed"},
	{target: workshop.ErrTooManyPolls, code: http.StatusConflict, msg: "this workshop has had as many polls as it may have; start another workshop"},
	{target: workshop.ErrEnded, code: http.StatusConflict, msg: "that workshop has ended"},
	{target: workshop.ErrFull, code: http.StatusConflict, msg: "that workshop is full; ask your instructor to start another one"},
	{target: workshop.ErrJoinClosed, code: http.StatusConflict, msg: "that workshop is not taking new participants; ask your instructor to open it"},
	{target: workshop.ErrNicknameTaken, code: http.StatusConflict, msg: "another participant of that workshop has this nickname; choose another"},
	{target: workshop.ErrRemoved, code: http.StatusForbidden, msg: "your instructor removed you from that workshop; you cannot join it again from this browser"},
	{target: workshop.ErrNoParticipant, code: http.StatusNotFound, msg: "there is no such participant in this workshop"},
	{target: workshop.ErrBadInput, code: http.StatusBadRequest, msg: "that workshop code, nickname or prediction is malformed"},
	{target: progress.ErrBadLearner, code: http.StatusBadRequest, msg: "your learner cookie is malformed; clear this site's cookies and try again"},
	// Only an author's -content directory can be invalid after start-up;
	// the author needs to see which file is broken.
	{target: content.ErrInvalid, code: http.StatusInternalServerError, msg: "the course content is invalid: ", detail: true},
	{target: quiz.ErrInvalid, code: http.StatusInternalServerError, msg: "the course content is invalid: ", detail: true},
}

// internalMessage is what a client sees of an error that no rule matches.
const internalMessage = "something went wrong on our side; please try again"

// classify picks the status and the message a client may see: an
// *echo.HTTPError says both itself, a domain error goes through
// errorTable, anything else is a 500 whose details stay in the log.
func classify(err error) (int, string) {
	var he *echo.HTTPError
	if errors.As(err, &he) {
		msg, ok := he.Message.(string)
		if !ok || he.Code >= 500 {
			msg = strings.ToLower(http.StatusText(he.Code))
		}
		return he.Code, msg
	}
	for _, r := range errorTable {
		if !errors.Is(err, r.target) {
			continue
		}
		switch {
		case r.detail:
			return r.code, r.msg + err.Error()
		case r.msg == "":
			return r.code, unwrapMessage(err)
		default:
			return r.code, r.msg
		}
	}
	return http.StatusInternalServerError, internalMessage
}

// unwrapMessage is a domain error's text for a client: the operation's
// context ("quiz \"x\" question \"y\"") and the reason, nothing internal.
func unwrapMessage(err error) string {
	return strings.ReplaceAll(err.Error(), `"`, "'")
}

func isAPI(r *http.Request) bool {
	return r.URL.Path == "/api" || strings.HasPrefix(r.URL.Path, "/api/")
}
