package web

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/locklab/locklab/playground"
)

// RateLimiter lets a set number of requests per second through for each
// key. A shared one (in Redis) limits a learner across every replica.
type RateLimiter interface {
	Allow(ctx context.Context, key string) (bool, error)
}

// Limits caps how fast clients may change things, so nobody can starve the
// others. Each limiter counts per key; a nil one is no limit. Learners are
// counted by their cookie and, since cookies cost nothing to drop, by their
// address too (the address limits are higher: a classroom shares one).
type Limits struct {
	// Writes counts each learner's state-changing requests (answers,
	// playground commands); WritesPerAddress counts them per client address.
	Writes, WritesPerAddress RateLimiter
	// Scripts counts each learner's playground lines that run Lua (EVAL,
	// EVALSHA, FCALL, SCRIPT, FUNCTION), which may each take up to the script
	// deadline; ScriptsPerAddress counts them per client address.
	Scripts, ScriptsPerAddress RateLimiter
}

// tooMany is the answer to a request over a limit.
func tooMany(c echo.Context, what string) error {
	c.Response().Header().Set("Retry-After", "1")
	return echo.NewHTTPError(http.StatusTooManyRequests, "too many "+what+" at once; slow down and try again in a second")
}

// allow asks a limiter about key. If the limiter itself fails (Redis
// down), the request goes through: the course staying usable matters more
// than the limit.
func (s *Server) allow(c echo.Context, l RateLimiter, key string) bool {
	if l == nil {
		return true
	}
	ok, err := l.Allow(c.Request().Context(), key)
	if err != nil {
		s.log.Warn("rate limiter", "error", err)
		return true
	}
	return ok
}

// limitWrites applies the write limits to every state-changing request.
func (s *Server) limitWrites() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		if s.limits.Writes == nil && s.limits.WritesPerAddress == nil {
			return next
		}
		return func(c echo.Context) error {
			switch c.Request().Method {
			case http.MethodGet, http.MethodHead, http.MethodOptions:
				return next(c)
			}
			if id := s.learnerID(c); id != "" && !s.allow(c, s.limits.Writes, "w:learner:"+id) {
				s.metrics.rateLimited.WithLabelValues("writes").Inc()
				return tooMany(c, "requests")
			}
			if !s.allow(c, s.limits.WritesPerAddress, "w:addr:"+c.RealIP()) {
				s.metrics.rateLimited.WithLabelValues("writes_per_address").Inc()
				return tooMany(c, "requests from your address")
			}
			return next(c)
		}
	}
}

// limitScript applies the script limits when line runs Lua.
func (s *Server) limitScript(c echo.Context, learner, line string) error {
	if (s.limits.Scripts == nil && s.limits.ScriptsPerAddress == nil) || !playground.RunsScript(line) {
		return nil
	}
	if !s.allow(c, s.limits.Scripts, "s:learner:"+learner) {
		s.metrics.rateLimited.WithLabelValues("scripts").Inc()
		return tooMany(c, "scripts")
	}
	if !s.allow(c, s.limits.ScriptsPerAddress, "s:addr:"+c.RealIP()) {
		s.metrics.rateLimited.WithLabelValues("scripts_per_address").Inc()
		return tooMany(c, "scripts from your address")
	}
	return nil
}
