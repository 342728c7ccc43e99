package web

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"golang.org/x/time/rate"
)

// limitWrites caps how fast one learner (or, without a learner cookie, one
// address) may send state-changing requests, so nobody can starve the
// others. perSecond <= 0 turns the limit off.
func (s *Server) limitWrites(perSecond float64) echo.MiddlewareFunc {
	if perSecond <= 0 {
		return func(next echo.HandlerFunc) echo.HandlerFunc { return next }
	}
	store := middleware.NewRateLimiterMemoryStoreWithConfig(middleware.RateLimiterMemoryStoreConfig{
		Rate: rate.Limit(perSecond), Burst: int(2 * perSecond), ExpiresIn: 5 * time.Minute,
	})
	return middleware.RateLimiterWithConfig(middleware.RateLimiterConfig{
		Skipper: func(c echo.Context) bool {
			m := c.Request().Method
			return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
		},
		IdentifierExtractor: func(c echo.Context) (string, error) {
			if id := learnerID(c); id != "" {
				return "learner:" + id, nil
			}
			return "ip:" + c.RealIP(), nil
		},
		Store: store,
		DenyHandler: func(c echo.Context, _ string, _ error) error {
			s.metrics.rateLimited.WithLabelValues("writes").Inc()
			c.Response().Header().Set("Retry-After", "1")
			return echo.NewHTTPError(http.StatusTooManyRequests, "too many requests at once; slow down and try again in a second")
		},
	})
}
