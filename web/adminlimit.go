package web

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/locklab/locklab/limit"
)

// guessToken reports whether an admin token the client sent is right,
// under the admin guess limits (see guessWith).
func (s *Server) guessToken(c echo.Context, right func() bool) (bool, error) {
	return s.guessWith(c, s.adminLimits, "admin", right)
}

// guessWith reports whether a token the client sent is right, under
// limits: a refusal (429, or 503 if the meters cannot be read) when too
// many wrong ones came lately, and a wrong one is counted. Guesses are
// checked one at a time in this process, so that many sent at once cannot
// all pass the check before any of them is counted. right compares in
// constant time; what names the token in messages.
func (s *Server) guessWith(c echo.Context, limits limit.AdminLimits, what string, right func() bool) (bool, error) {
	s.tokenGuessMu.Lock()
	defer s.tokenGuessMu.Unlock()
	if err := s.checkGuess(c, limits, what); err != nil {
		return false, err
	}
	if right() {
		return true, nil
	}
	s.failedGuess(c, limits, what)
	return false, nil
}

// checkGuess refuses to check a token when too many wrong ones came
// lately, from this address or from everyone: 429 with Retry-After, or
// 503 if the meters cannot be read (the limits fail closed).
func (s *Server) checkGuess(c echo.Context, limits limit.AdminLimits, what string) error {
	d, err := limits.Check(c.Request().Context(), clientAddress(c))
	if err != nil {
		s.failures.Warn(what+" token limit", "error", err)
		c.Response().Header().Set("Retry-After", "5")
		if what == "admin" {
			return echo.NewHTTPError(http.StatusServiceUnavailable, "instructor sign-in is unavailable for a moment; please try again")
		}
		return echo.NewHTTPError(http.StatusServiceUnavailable, what+" tokens cannot be checked for a moment; please try again")
	}
	if !d.Allowed() {
		return s.refused(c, d, "too many wrong "+what+" tokens; try again in "+strconv.Itoa(retrySeconds(d.Wait))+" s")
	}
	return nil
}

// failedGuess counts a wrong token against limits.
func (s *Server) failedGuess(c echo.Context, limits limit.AdminLimits, what string) {
	s.log.Warn("wrong "+what+" token", "remote_ip", c.RealIP(), "uri", c.Request().RequestURI)
	if err := limits.Failed(c.Request().Context(), clientAddress(c)); err != nil {
		s.failures.Warn(what+" token limit", "error", err)
	}
}
