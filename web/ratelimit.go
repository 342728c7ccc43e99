package web

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

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
	// Races meters the race simulations not found in the cache per client
	// address (IPv6 by its /64), in units of RaceUnit of CPU time: a run
	// starts when the address holds RaceNeed units (at least one) and is
	// charged the time it took, so typical runs (a millisecond) cost one
	// unit each and the costliest (100 ms or more) empty the meter. With
	// RaceNeed a second's refill, an address gets at most one of those a
	// second, and Retry-After is never more than a second.
	Races    Meter
	RaceNeed int
	// Scripts counts each learner's playground lines that run Lua (EVAL,
	// EVALSHA, FCALL, SCRIPT, FUNCTION), which may each take up to the script
	// deadline; ScriptsPerAddress counts them per client address.
	Scripts, ScriptsPerAddress RateLimiter
	// ScriptTime bounds the time scripts run, which the counts above
	// cannot: one script may run until its deadline.
	ScriptTime ScriptBudget
}

// Meter measures an amount known only afterwards, per key (store.Meter).
type Meter interface {
	Available(ctx context.Context, key string) (int, error)
	Take(ctx context.Context, key string, n int) error
}

// ScriptBudget meters the time learners' scripts run, in units of
// ScriptUnit, per learner and per address. A script starts only when both
// hold Need units (its deadline's worth) and is charged the time it took,
// so a learner whose scripts keep running into the deadline gets one every
// Need/LearnerRefill seconds, while quick scripts (a unit each) are never
// held up. One learner runs one script at a time.
type ScriptBudget struct {
	Learner, Address             Meter
	Need                         int
	LearnerRefill, AddressRefill int // units per second, for Retry-After
}

// ScriptUnit is the unit of a ScriptBudget.
const ScriptUnit = 10 * time.Millisecond

// tooMany is the answer to a request over a limit.
func tooMany(c echo.Context, what string) error {
	c.Response().Header().Set("Retry-After", "1")
	return echo.NewHTTPError(http.StatusTooManyRequests, "too many "+what+" at once; slow down and try again in a second")
}

// overBudget is the answer to a script over its time budget.
func overBudget(c echo.Context, wait, deadline time.Duration) error {
	secs := int(math.Ceil(wait.Seconds()))
	c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
	return echo.NewHTTPError(http.StatusTooManyRequests, fmt.Sprintf(
		"your scripts have used their share of the sandbox's time (a script may run for up to %v); try again in %d s", deadline, secs))
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
			if !s.allow(c, s.limits.WritesPerAddress, "w:addr:"+clientAddress(c)) {
				s.metrics.rateLimited.WithLabelValues("writes_per_address").Inc()
				return tooMany(c, "requests from your address")
			}
			return next(c)
		}
	}
}

// limitScript applies the script limits to a line before it runs. Lines
// that run or load Lua (playground.RunsScript: after a repeat count, in
// any case, queued in a transaction or not) count against the script rate
// limits; those and EXEC, which runs what its transaction queued
// (playground.MayRunScript), start only while the learner and the address
// hold a deadline's worth of script time, one at a time per learner.
//
// It returns charge, to call with the line's Result.ScriptTime once it
// has run (or the time it took, if it failed): every line pays the script
// time the sandbox really used, whether or not it was seen as a script
// line, so no way of typing a script escapes the budget.
func (s *Server) limitScript(c echo.Context, learner, line string) (func(used time.Duration), error) {
	l := s.limits
	none := func(time.Duration) {}
	if l.Scripts == nil && l.ScriptsPerAddress == nil && l.ScriptTime.Learner == nil {
		return none, nil
	}
	addr := clientAddress(c)
	b := l.ScriptTime
	pay := func(used time.Duration) { s.chargeScriptTime(c, learner, addr, used) }
	if b.Learner == nil {
		pay = none
	}
	if !playground.MayRunScript(line) {
		return pay, nil
	}
	if playground.RunsScript(line) {
		if !s.allow(c, l.Scripts, "s:learner:"+learner) {
			s.metrics.rateLimited.WithLabelValues("scripts").Inc()
			return none, tooMany(c, "scripts")
		}
		if !s.allow(c, l.ScriptsPerAddress, "s:addr:"+addr) {
			s.metrics.rateLimited.WithLabelValues("scripts_per_address").Inc()
			return none, tooMany(c, "scripts from your address")
		}
	}
	if b.Learner == nil {
		return none, nil
	}
	if !s.running.enter(learner, addr) {
		s.metrics.rateLimited.WithLabelValues("scripts_running").Inc()
		return none, tooMany(c, "scripts running")
	}
	if wait := s.budgetWait(c, b.Learner, "t:learner:"+learner, b.Need, b.LearnerRefill); wait > 0 {
		s.running.leave(learner, addr)
		s.metrics.rateLimited.WithLabelValues("script_time").Inc()
		return none, overBudget(c, wait, time.Duration(b.Need)*ScriptUnit)
	}
	if wait := s.budgetWait(c, b.Address, "t:addr:"+addr, b.Need, b.AddressRefill); wait > 0 {
		s.running.leave(learner, addr)
		s.metrics.rateLimited.WithLabelValues("script_time_per_address").Inc()
		return none, overBudget(c, wait, time.Duration(b.Need)*ScriptUnit)
	}
	return func(used time.Duration) {
		s.running.leave(learner, addr)
		// An admitted line pays at least a unit, so that even scripts that
		// return at once are not free.
		pay(max(used, ScriptUnit))
	}, nil
}

// chargeScriptTime takes used, rounded up to whole units, from the
// learner's and the address's script time.
func (s *Server) chargeScriptTime(c echo.Context, learner, addr string, used time.Duration) {
	if used <= 0 {
		return
	}
	b := s.limits.ScriptTime
	units := int((used + ScriptUnit - 1) / ScriptUnit)
	// The charge must land even if the client went away.
	ctx := context.WithoutCancel(c.Request().Context())
	for _, m := range []struct {
		meter Meter
		key   string
	}{{b.Learner, "t:learner:" + learner}, {b.Address, "t:addr:" + addr}} {
		if m.meter == nil {
			continue
		}
		if err := m.meter.Take(ctx, m.key, units); err != nil {
			s.log.Warn("script budget", "error", err)
		}
	}
}

// budgetWait returns how long key must wait until meter holds need units;
// zero if it holds them now, or if the meter fails (Redis down).
func (s *Server) budgetWait(c echo.Context, meter Meter, key string, need, refill int) time.Duration {
	if meter == nil {
		return 0
	}
	have, err := meter.Available(c.Request().Context(), key)
	if err != nil {
		s.log.Warn("script budget", "error", err)
		return 0
	}
	if have >= need {
		return 0
	}
	return time.Duration(float64(need-have) / float64(max(refill, 1)) * float64(time.Second))
}

// runningScripts counts the scripts running now, per learner (one at a
// time) and per address (maxScriptsPerAddress), in this process.
type runningScripts struct {
	mu    sync.Mutex
	byKey map[string]int
}

// maxScriptsPerAddress bounds the scripts running at once from one
// address; a classroom behind one address rarely has more than a few.
const maxScriptsPerAddress = 8

func (r *runningScripts) enter(learner, addr string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byKey == nil {
		r.byKey = map[string]int{}
	}
	if r.byKey["l:"+learner] >= 1 || r.byKey["a:"+addr] >= maxScriptsPerAddress {
		return false
	}
	r.byKey["l:"+learner]++
	r.byKey["a:"+addr]++
	return true
}

func (r *runningScripts) leave(learner, addr string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range []string{"l:" + learner, "a:" + addr} {
		if r.byKey[k]--; r.byKey[k] <= 0 {
			delete(r.byKey, k)
		}
	}
}
