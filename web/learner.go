package web

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"regexp"
	"time"

	"github.com/labstack/echo/v4"
)

// learnerCookie identifies a learner's browser. It holds a random id and
// nothing else; progress lives in the store under that id.
const learnerCookie = "locklab_learner"

const learnerCookieAge = 400 * 24 * time.Hour

var learnerIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{22}$`)

// learnerID returns the learner's id from the cookie, or "" if there is
// none (or it is malformed).
func learnerID(c echo.Context) string {
	ck, err := c.Cookie(learnerCookie)
	if err != nil || !learnerIDPattern.MatchString(ck.Value) {
		return ""
	}
	return ck.Value
}

// ensureLearner returns the learner's id, creating one and setting the
// cookie on first use.
func ensureLearner(c echo.Context) string {
	if id := learnerID(c); id != "" {
		return id
	}
	id := newLearnerID()
	setLearnerCookie(c, id)
	return id
}

func newLearnerID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b)
}

func setLearnerCookie(c echo.Context, id string) {
	r := c.Request()
	c.SetCookie(&http.Cookie{
		Name: learnerCookie, Value: id, Path: "/",
		MaxAge:   int(learnerCookieAge / time.Second),
		HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https",
	})
	// Later handlers in this request read the cookie from the request.
	r.AddCookie(&http.Cookie{Name: learnerCookie, Value: id})
}
