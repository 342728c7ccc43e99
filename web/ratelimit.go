package web

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"
)

// RateLimiter lets a set number of requests per second through for each
// key. A shared one (in Redis) limits a learner across every replica.
type RateLimiter interface {
	Allow(ctx context.Context, key string) (bool, error)
}

// limitWrites caps how fast one learner (or, without a learner cookie, one
// address) may send state-changing requests, so nobody can starve the
// others. If the limiter itself fails (Redis down), requests go through:
// the course staying usable matters more than the limit.
func (s *Server) limitWrites() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		if s.limiter == nil {
			return next
		}
		return func(c echo.Context) error {
			switch c.Request().Method {
			case http.MethodGet, http.MethodHead, http.MethodOptions:
				return next(c)
			}
			key := "ip:" + c.RealIP()
			if id := learnerID(c); id != "" {
				key = "learner:" + id
			}
			ok, err := s.limiter.Allow(c.Request().Context(), key)
			if err != nil {
				s.log.Warn("rate limiter", "error", err)
				return next(c)
			}
			if !ok {
				s.metrics.rateLimited.WithLabelValues("writes").Inc()
				c.Response().Header().Set("Retry-After", "1")
				return echo.NewHTTPError(http.StatusTooManyRequests, "too many requests at once; slow down and try again in a second")
			}
			return next(c)
		}
	}
}
