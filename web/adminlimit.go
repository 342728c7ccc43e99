package web

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
)

// guessToken reports whether a token the client sent is right, under the
// guess limits: a refusal (429, or 503 if the meters cannot be read) when
// too many wrong ones came lately, and a wrong one is counted. Guesses are
// checked one at a time in this process, so that many sent at once cannot
// all pass the check before any of them is counted. right compares in
// constant time.
func (s *Server) guessToken(c echo.Context, right func() bool) (bool, error) {
	s.tokenGuessMu.Lock()
	defer s.tokenGuessMu.Unlock()
	if err := s.checkAdminGuess(c); err != nil {
		return false, err
	}
	if right() {
		return true, nil
	}
	s.failedAdminGuess(c)
	return false, nil
}

// checkAdminGuess refuses to check a token when too many wrong ones came
// lately, from this address or from everyone: 429 with Retry-After, or
// 503 if the meters cannot be read (the admin limits fail closed).
func (s *Server) checkAdminGuess(c echo.Context) error {
	d, err := s.adminLimits.Check(c.Request().Context(), clientAddress(c))
	if err != nil {
		s.log.Warn("admin sign-in limit", "error", err)
		c.Response().Header().Set("Retry-After", "5")
		return echo.NewHTTPError(http.StatusServiceUnavailable, "instructor sign-in is unavailable for a moment; please try again")
	}
	if !d.Allowed() {
		return s.refused(c, d, "too many wrong admin tokens; try again in "+strconv.Itoa(retrySeconds(d.Wait))+" s")
	}
	return nil
}

// failedAdminGuess counts a wrong token.
func (s *Server) failedAdminGuess(c echo.Context) {
	s.log.Warn("wrong admin token", "remote_ip", c.RealIP(), "uri", c.Request().RequestURI)
	if err := s.adminLimits.Failed(c.Request().Context(), clientAddress(c)); err != nil {
		s.log.Warn("admin sign-in limit", "error", err)
	}
}
