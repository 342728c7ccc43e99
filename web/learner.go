package web

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/locklab/locklab/learnerid"
)

// learnerCookie identifies a learner's browser: the session cookie. It
// holds 128 random bits and nothing else; progress lives in the store under
// that id. It is HttpOnly and SameSite=Lax, and behind TLS also Secure with
// the __Host- prefix (cookies.go).
const learnerCookie = "locklab_learner"

const learnerCookieAge = 400 * 24 * time.Hour

// validLearnerID is the one rule for learner ids, which the store
// applies too.
func validLearnerID(id string) bool { return learnerid.Valid(id) }

// learnerID returns the learner's id from the cookie, or "" if there is
// none (or it is malformed).
func (s *Server) learnerID(c echo.Context) string {
	v, ok := s.cookie(c, learnerCookie)
	if !ok || !validLearnerID(v) {
		return ""
	}
	return v
}

// ensureLearner returns the learner's id, creating one and setting the
// cookie on first use.
func (s *Server) ensureLearner(c echo.Context) string {
	if id := s.learnerID(c); id != "" {
		return id
	}
	id := newLearnerID()
	s.setLearnerCookie(c, id)
	return id
}

func newLearnerID() string { return learnerid.New() }

func (s *Server) setLearnerCookie(c echo.Context, id string) {
	s.setCookie(c, &http.Cookie{
		Name: learnerCookie, Value: id,
		MaxAge:   int(learnerCookieAge / time.Second),
		HttpOnly: true, SameSite: http.SameSiteLaxMode,
	})
	// Later handlers in this request read the cookie from the request.
	s.rememberCookie(c, &http.Cookie{Name: s.cookieName(learnerCookie), Value: id})
}
