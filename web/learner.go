package web

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// learnerCookie identifies a learner's browser: the session cookie. It
// holds 128 random bits and nothing else; progress lives in the store under
// that id. It is HttpOnly and SameSite=Lax, and behind TLS also Secure with
// the __Host- prefix (cookies.go).
const learnerCookie = "locklab_learner"

const learnerCookieAge = 400 * 24 * time.Hour

// validLearnerID reports whether id looks like one of ours: 22 characters
// of unpadded URL-safe base64 (128 bits). It runs on every request, so it
// is a plain loop rather than a regular expression.
func validLearnerID(id string) bool {
	if len(id) != 22 {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_':
		default:
			return false
		}
	}
	return true
}

// learnerID returns the learner's id from the cookie, or "" if there is
// none (or it is malformed).
func (s *Server) learnerID(c echo.Context) string {
	ck, err := s.cookie(c, learnerCookie)
	if err != nil || !validLearnerID(ck.Value) {
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
	s.rememberCookie(c, &http.Cookie{Name: s.cookieName(learnerCookie), Value: id})
}
