package web

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/locklab/locklab/limit"
	"github.com/locklab/locklab/playground"
)

// The limits themselves (which requests count, against what, when to fail
// open) are package limit's; this file answers its refusals in HTTP: 429
// with Retry-After.

// tooManyWhat says what a refusal by a limiter was too many of.
var tooManyWhat = map[string]string{
	"writes":              "requests",
	"writes_per_address":  "requests from your address",
	"scripts":             "scripts",
	"scripts_per_address": "scripts from your address",
	"scripts_running":     "scripts running",
	"races_per_address":   "new race runs from your address",
}

// refused counts a refusal in the metrics and answers it: 429 with
// Retry-After, the whole seconds of d.Wait rounded up.
func (s *Server) refused(c echo.Context, d limit.Decision, msg string) error {
	s.metrics.rateLimited.WithLabelValues(d.Limit).Inc()
	c.Response().Header().Set("Retry-After", strconv.Itoa(retrySeconds(d.Wait)))
	return echo.NewHTTPError(http.StatusTooManyRequests, msg)
}

// retrySeconds is a wait in whole seconds, rounded up.
func retrySeconds(wait time.Duration) int { return int(math.Ceil(wait.Seconds())) }

// tooMany answers a refusal by a rate limiter or the running-scripts gate.
func (s *Server) tooMany(c echo.Context, d limit.Decision) error {
	return s.refused(c, d, "too many "+tooManyWhat[d.Limit]+" at once; slow down and try again in a second")
}

// limitWrites applies the write limits to every state-changing request.
func (s *Server) limitWrites() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		if !s.limits.LimitsWrites() {
			return next
		}
		return func(c echo.Context) error {
			switch c.Request().Method {
			case http.MethodGet, http.MethodHead, http.MethodOptions:
				return next(c)
			}
			d, err := s.limits.Write(c.Request().Context(), s.learnerID(c), clientAddress(c))
			if err != nil {
				s.failures.Warn("rate limiter", "error", err)
			}
			if !d.Allowed() {
				return s.tooMany(c, d)
			}
			return next(c)
		}
	}
}

// limitScript applies the script limits (limit.Limits.Script) to a line
// before it runs. It returns charge, to call with the line's
// Result.ScriptTime once it has run (or the time it took, if it failed).
func (s *Server) limitScript(c echo.Context, learner, line string) (func(used time.Duration, stopped bool), error) {
	script, long := playground.LineKind(line)
	ln := limit.Line{RunsScript: script, RunsLong: long}
	return s.admitScript(c, learner, ln, func() string {
		return fmt.Sprintf("your scripts have used their share of the sandbox's time (a script may run for up to %v)", s.limits.ScriptTime.Deadline())
	})
}

// admitScript admits work that runs scripts for key (a learner) under the
// script limits, or answers the refusal; spent says what ran out when the
// script time budget did (made only then). It returns the function that
// pays the time the work used, and says whether the playground stopped
// one of its scripts.
func (s *Server) admitScript(c echo.Context, key string, ln limit.Line, spent func() string) (func(used time.Duration, stopped bool), error) {
	charge, d, err := s.limits.Script(c.Request().Context(), &s.running, key, clientAddress(c), ln)
	if err != nil {
		s.failures.Warn("script limits", "error", err)
	}
	pay := func(used time.Duration, stopped bool) {
		if err := charge(used, stopped); err != nil {
			s.failures.Warn("script budget", "error", err)
		}
	}
	switch {
	case d.Allowed():
		return pay, nil
	case d.Limit == "script_time" || d.Limit == "script_time_per_address":
		return pay, s.refused(c, d, fmt.Sprintf("%s; try again in %d s", spent(), retrySeconds(d.Wait)))
	case d.Limit == "scripts_stopped":
		return pay, s.refused(c, d, fmt.Sprintf("the playground has had to stop your scripts several times lately (at their deadline or for their memory); try again in %d s", retrySeconds(d.Wait)))
	case d.Limit == "scripts_stopped_per_address":
		return pay, s.refused(c, d, fmt.Sprintf("the playground has had to stop many scripts from your address lately (at their deadline or for their memory); try again in %d s", retrySeconds(d.Wait)))
	default:
		return pay, s.tooMany(c, d)
	}
}
