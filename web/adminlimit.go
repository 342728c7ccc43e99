package web

import (
	"math"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
)

// AdminLimits bound how fast anyone can guess the admin token: failed
// sign-ins (the form, or a wrong "Authorization: Bearer" on any admin
// route) are metered per client address (an IPv6 address by its /64,
// which one machine usually holds whole) and over all addresses, and a
// guess is refused while either has none left. Sign-ins that succeed cost
// nothing. Unlike the write limits, these fail closed: if the meter
// cannot be read (Redis down), no guess is checked at all.
type AdminLimits struct {
	// PerAddress and Overall hold the failures still allowed; nil is no
	// limit.
	PerAddress, Overall Meter
	// AddressPerMinute and OverallPerMinute are how many failures each
	// forgives a minute, for Retry-After.
	AddressPerMinute, OverallPerMinute int
}

// adminGuessMeters are the meters a guess is checked against, with their
// keys and refill.
func (s *Server) adminGuessMeters(c echo.Context) []struct {
	meter     Meter
	key       string
	perMinute int
	label     string
} {
	l := s.adminLimits
	return []struct {
		meter     Meter
		key       string
		perMinute int
		label     string
	}{
		{l.PerAddress, "admin:addr:" + clientAddress(c), l.AddressPerMinute, "admin_signin_per_address"},
		{l.Overall, "admin:all", l.OverallPerMinute, "admin_signin"},
	}
}

// guessToken reports whether a token the client sent is right, under the
// guess limits: a refusal (429, or 503 if the meters cannot be read) when
// too many wrong ones came lately, and a wrong one is counted. Guesses are
// checked one at a time in this process, so that many sent at once cannot
// all pass the check before any of them is counted. right compares in
// constant time.
func (s *Server) guessToken(c echo.Context, right func() bool) (bool, error) {
	s.guessMu.Lock()
	defer s.guessMu.Unlock()
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
// 503 if the meters cannot be read.
func (s *Server) checkAdminGuess(c echo.Context) error {
	for _, m := range s.adminGuessMeters(c) {
		if m.meter == nil {
			continue
		}
		have, err := m.meter.Available(c.Request().Context(), m.key)
		if err != nil {
			s.log.Warn("admin sign-in limit", "error", err)
			c.Response().Header().Set("Retry-After", "5")
			return echo.NewHTTPError(http.StatusServiceUnavailable, "instructor sign-in is unavailable for a moment; please try again")
		}
		if have < 1 {
			s.metrics.rateLimited.WithLabelValues(m.label).Inc()
			secs := int(math.Ceil(60 / float64(max(m.perMinute, 1))))
			c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
			return echo.NewHTTPError(http.StatusTooManyRequests, "too many wrong admin tokens; try again in "+strconv.Itoa(secs)+" s")
		}
	}
	return nil
}

// failedAdminGuess counts a wrong token.
func (s *Server) failedAdminGuess(c echo.Context) {
	s.log.Warn("wrong admin token", "remote_ip", c.RealIP(), "uri", c.Request().RequestURI)
	for _, m := range s.adminGuessMeters(c) {
		if m.meter == nil {
			continue
		}
		if err := m.meter.Take(c.Request().Context(), m.key, 1); err != nil {
			s.log.Warn("admin sign-in limit", "error", err)
		}
	}
}
