package web

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
)

// ReadyCheck is one thing the server cannot do its work without, as
// /readyz reports it.
type ReadyCheck struct {
	// Name says what it is in /readyz's answer, such as "redis" or
	// "data".
	Name string
	// Check fails while it cannot be used.
	Check func(context.Context) error
}

// readyEvery is how long /readyz answers from its last checks: however
// often it is asked, the checks (a Redis PING, a look at the data
// directory) run at most once in that time.
const readyEvery = time.Second

// readyTimeout bounds one round of checks: a check that takes longer
// counts as down.
const readyTimeout = 2 * time.Second

// readiness runs the ready checks for /readyz, one round at a time, and
// keeps the last round's answer for readyEvery.
type readiness struct {
	checks []ReadyCheck
	log    *slog.Logger
	now    func() time.Time

	mu   sync.Mutex // held during a round, so that callers wait for it
	at   time.Time  // when the last round ran
	down []string   // what the last round found down, in checks' order
}

// state returns the names of what is down now, from a round of checks
// run at most readyEvery ago. Down or back, a change is logged with its
// reason; the answer names only what is down.
func (r *readiness) state(ctx context.Context) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.at.IsZero() && r.now().Sub(r.at) < readyEvery {
		return r.down
	}
	// The asker hanging up must not make a check fail.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), readyTimeout)
	defer cancel()
	errs := make([]error, len(r.checks))
	var wg sync.WaitGroup
	for i, c := range r.checks {
		wg.Go(func() { errs[i] = c.Check(ctx) })
	}
	wg.Wait()
	var down []string
	for i, c := range r.checks {
		was := slices.Contains(r.down, c.Name)
		switch {
		case errs[i] != nil:
			down = append(down, c.Name)
			if !was {
				r.log.Warn("not ready", "down", c.Name, "error", errs[i])
			}
		case was:
			r.log.Info("ready again", "up", c.Name)
		}
	}
	r.at, r.down = r.now(), down
	return down
}

// readyJSON is /readyz's answer.
type readyJSON struct {
	Ready bool     `json:"ready"`
	Down  []string `json:"down"`
}

// handleReadyz answers whether this replica can serve learners now: 200,
// or 503 naming what is down (Redis, the data directory), so that a load
// balancer sends them elsewhere meanwhile. /healthz stays the liveness
// check: a replica whose Redis is down is alive, and restarting it would
// not bring Redis back.
func (s *Server) handleReadyz(c echo.Context) error {
	down := s.ready.state(c.Request().Context())
	if len(down) > 0 {
		return c.JSON(http.StatusServiceUnavailable, readyJSON{Ready: false, Down: down})
	}
	return c.JSON(http.StatusOK, readyJSON{Ready: true, Down: []string{}})
}
