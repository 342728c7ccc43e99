package web

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"regexp"
	"time"

	"github.com/labstack/echo/v4"
)

// learnerCookie identifies a learner's browser: the session cookie. It
// holds 128 random bits and nothing else; progress lives in the store under
// that id. It is HttpOnly and SameSite=Lax, and behind TLS also Secure with
// the __Host- prefix (cookies.go).
const learnerCookie = "locklab_learner"

const learnerCookieAge = 400 * 24 * time.Hour

var learnerIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{22}$`)

// learnerID returns the learner's id from the cookie, or "" if there is
// none (or it is malformed).
func (s *Server) learnerID(c echo.Context) string {
	ck, err := s.cookie(c, learnerCookie)
	if err != nil || !learnerIDPattern.MatchString(ck.Value) {
		return ""
	}
	return ck.Value
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

func newLearnerID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b)
}

func (s *Server) setLearnerCookie(c echo.Context, id string) {
	s.setCookie(c, &http.Cookie{
		Name: learnerCookie, Value: id,
		MaxAge:   int(learnerCookieAge / time.Second),
		HttpOnly: true, SameSite: http.SameSiteLaxMode,
	})
	// Later handlers in this request read the cookie from the request.
	c.Request().AddCookie(&http.Cookie{Name: s.cookieName(learnerCookie), Value: id})
}
