package web

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/locklab/locklab/carry"
	"github.com/locklab/locklab/content"
	"github.com/locklab/locklab/playground"
	"github.com/locklab/locklab/playground/worker"
	"github.com/locklab/locklab/quiz"
	"github.com/locklab/locklab/store"
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
	if code >= 500 {
		s.log.Error("request failed", "uri", redactURI(c.Request().RequestURI), "error", err)
	}
	if isAPI(c.Request()) {
		if c.Request().Method == http.MethodHead {
			_ = c.NoContent(code)
			return
		}
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

// classify picks the status and the message a client may see.
func classify(err error) (int, string) {
	var he *echo.HTTPError
	switch {
	case errors.As(err, &he):
		msg, ok := he.Message.(string)
		if !ok || he.Code >= 500 {
			msg = strings.ToLower(http.StatusText(he.Code))
		}
		return he.Code, msg
	case errors.Is(err, quiz.ErrUnknownTopic), errors.Is(err, quiz.ErrUnknownQuestion):
		return http.StatusNotFound, unwrapMessage(err)
	case errors.Is(err, quiz.ErrUnknownChoice):
		return http.StatusBadRequest, unwrapMessage(err)
	case errors.Is(err, carry.ErrMalformed):
		return http.StatusBadRequest, "a code is 8 letters and digits, like K7QM-4TXP; check what you typed"
	case errors.Is(err, carry.ErrUnknown):
		return http.StatusNotFound, "there is no such code; check it, or get a new one on the other device"
	case errors.Is(err, carry.ErrUsed):
		return http.StatusGone, "this code has been used already; get a new one on the other device"
	case errors.Is(err, carry.ErrExpired):
		return http.StatusGone, "this code has expired; get a new one on the other device"
	case errors.Is(err, carry.ErrNothingToCarry):
		return http.StatusConflict, "this browser has no saved progress to carry yet: answer a question or run a playground command first"
	case errors.Is(err, store.ErrUnavailable):
		return http.StatusServiceUnavailable, "your progress can't be saved right now; please try again in a moment"
	case errors.Is(err, workshop.ErrNotFound):
		return http.StatusNotFound, "there is no workshop with that code; check it with your instructor"
	case errors.Is(err, workshop.ErrEnded):
		return http.StatusConflict, "that workshop has ended"
	case errors.Is(err, workshop.ErrFull):
		return http.StatusConflict, "that workshop is full; ask your instructor to start another one"
	case errors.Is(err, workshop.ErrBadInput):
		return http.StatusBadRequest, "that workshop code or nickname is malformed"
	case errors.Is(err, store.ErrBadLearner):
		return http.StatusBadRequest, "your learner cookie is malformed; clear this site's cookies and try again"
	case errors.Is(err, playground.ErrUnknownClient), errors.Is(err, playground.ErrBadAdvance),
		errors.Is(err, playground.ErrNotAllowed), errors.Is(err, playground.ErrLimit):
		return http.StatusBadRequest, unwrapMessage(err)
	case errors.Is(err, worker.ErrUnavailable):
		return http.StatusServiceUnavailable, "the playground is restarting; please try again in a moment"
	case errors.Is(err, playground.ErrClosed):
		return http.StatusServiceUnavailable, "the playground is shutting down; please try again in a moment"
	case errors.Is(err, content.ErrInvalid):
		// Only an author's -content directory can be invalid after start-up;
		// the author needs to see which file is broken.
		return http.StatusInternalServerError, "the course content is invalid: " + err.Error()
	default:
		return http.StatusInternalServerError, "something went wrong on our side; please try again"
	}
}

// unwrapMessage is a domain error's text for a client: the operation's
// context ("quiz \"x\" question \"y\"") and the reason, nothing internal.
func unwrapMessage(err error) string {
	return strings.ReplaceAll(err.Error(), `"`, "'")
}

func isAPI(r *http.Request) bool {
	return r.URL.Path == "/api" || strings.HasPrefix(r.URL.Path, "/api/")
}
