package web

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/locklab/locklab/web/views"
)

// A carry code moves a learner's progress to another browser: the learner
// id and an HMAC of it, so nobody can make up a code for an id they were
// not given.
const carrySigBytes = 9

// secret fetches the signing key once and keeps it.
type secret struct {
	get func(context.Context) ([]byte, error)
	mu  sync.Mutex
	key []byte
}

func (s *secret) value(ctx context.Context) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.key != nil {
		return s.key, nil
	}
	key, err := s.get(ctx)
	if err != nil {
		return nil, fmt.Errorf("signing secret: %w", err)
	}
	if len(key) < 16 {
		return nil, errors.New("signing secret: shorter than 16 bytes")
	}
	s.key = key
	return key, nil
}

func carrySig(key []byte, id string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("carry:" + id))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:carrySigBytes])
}

// parseCarryCode returns the learner id of a well-signed code (or link).
func parseCarryCode(key []byte, code string) (string, bool) {
	code = strings.TrimSpace(code)
	if i := strings.LastIndex(code, "/carry/"); i >= 0 { // a pasted link
		code = code[i+len("/carry/"):]
	}
	id, sig, ok := strings.Cut(code, ".")
	if !ok || !validLearnerID(id) {
		return "", false
	}
	return id, subtle.ConstantTimeCompare([]byte(sig), []byte(carrySig(key, id))) == 1
}

func (s *Server) carryPage(c echo.Context) (views.Carry, []byte, error) {
	m := views.Carry{Page: s.page("Continue on another device", "Carry your Lock Lab progress to another browser or device.", "")}
	key, err := s.secret.value(c.Request().Context())
	if err != nil {
		return m, nil, err
	}
	if id := s.learnerID(c); id != "" {
		m.Code = id + "." + carrySig(key, id)
		m.Link = requestOrigin(c.Request()) + "/carry/" + m.Code
	}
	return m, key, nil
}

func (s *Server) handleCarryPage(c echo.Context) error {
	m, _, err := s.carryPage(c)
	if err != nil {
		return err
	}
	m.Done = c.QueryParam("done") == "1"
	return render(c, http.StatusOK, views.CarryPage(m))
}

// handleCarryLink shows the form filled in with the code from the link;
// taking over progress is a POST, so following a link alone changes nothing.
func (s *Server) handleCarryLink(c echo.Context) error {
	m, _, err := s.carryPage(c)
	if err != nil {
		return err
	}
	m.Entered = c.Param("code")
	return render(c, http.StatusOK, views.CarryPage(m))
}

func (s *Server) handleCarry(c echo.Context) error {
	m, key, err := s.carryPage(c)
	if err != nil {
		return err
	}
	code := c.FormValue("code")
	from, ok := parseCarryCode(key, code)
	if !ok {
		m.Entered, m.Error = code, "That code is not valid. Copy it again from the other device, all of it."
		return render(c, http.StatusBadRequest, views.CarryPage(m))
	}
	// Whatever this browser had saved is merged in, so nothing is lost.
	if old := s.learnerID(c); old != "" && old != from {
		if err := s.progress.Merge(c.Request().Context(), old, from); err != nil {
			return err
		}
	}
	s.setLearnerCookie(c, from)
	return c.Redirect(http.StatusSeeOther, "/progress?done=1")
}

// requestOrigin is the scheme and host the learner used to reach us.
func requestOrigin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
