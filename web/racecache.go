package web

import (
	"container/list"
	"fmt"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/locklab/locklab/race"
)

// raceRuns keeps the latest race runs: a run is deterministic (the seed is
// one of its parameters), so the same scenario and settings never need
// computing twice. It is bounded both in runs and in their events, as a
// run may have up to a thousand.
type raceRuns struct {
	mu        sync.Mutex
	maxRuns   int
	maxEvents int
	events    int
	order     *list.List // of *raceRun, most recently used first
	byKey     map[string]*list.Element
}

type raceRun struct {
	key string
	tl  race.Timeline
	err error
}

// The bounds of the race cache: typical runs have 10 to 60 events, so the
// event bound bites only when someone asks for many long ones.
const (
	raceCacheRuns   = 2048
	raceCacheEvents = 100_000
)

func newRaceRuns(maxRuns, maxEvents int) *raceRuns {
	return &raceRuns{maxRuns: maxRuns, maxEvents: maxEvents, order: list.New(), byKey: map[string]*list.Element{}}
}

func (r *raceRuns) get(key string) (*raceRun, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.byKey[key]
	if !ok {
		return nil, false
	}
	r.order.MoveToFront(e)
	return e.Value.(*raceRun), true
}

func (r *raceRuns) put(run *raceRun) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.byKey[run.key]; ok || len(run.tl.Events) > r.maxEvents {
		return
	}
	r.byKey[run.key] = r.order.PushFront(run)
	r.events += len(run.tl.Events)
	for r.order.Len() > r.maxRuns || r.events > r.maxEvents {
		old := r.order.Remove(r.order.Back()).(*raceRun)
		delete(r.byKey, old.key)
		r.events -= len(old.tl.Events)
	}
}

func (r *raceRuns) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.order.Len()
}

// runRace runs a scenario with its defaults, overridden by the query: from
// the cache if the same run was asked for before, else metered against the
// client address's share of simulation time (limit.Limits.Race), since one run
// may take up to about 100 ms of CPU. The timeline returned is shared:
// callers must not change it.
func (s *Server) runRace(c echo.Context, id string, q url.Values) (race.Info, race.Timeline, error) {
	info, p, err := raceInput(id, q)
	if err != nil {
		return info, race.Timeline{}, err
	}
	key := id + "?" + p.Query().Encode()
	if run, ok := s.raceRuns.get(key); ok {
		return info, run.tl, run.err
	}
	addr := clientAddress(c)
	d, err := s.limits.Race(c.Request().Context(), addr)
	if err != nil {
		// A meter that fails (Redis down) lets the run go, as the write
		// limits do: the course staying usable matters more.
		s.failures.Warn("race budget", "error", err)
	}
	if !d.Allowed() {
		return info, race.Timeline{}, s.tooMany(c, d)
	}
	run := &raceRun{key: key}
	start := time.Now()
	run.tl, run.err = race.Run(id, p)
	if err := s.limits.ChargeRace(c.Request().Context(), addr, s.raceClock(start)); err != nil {
		s.failures.Warn("race budget", "error", err)
	}
	// run.err names the run; the error table tells bad parameters (the
	// caller's, race.ErrBadParams) from a simulation that failed (ours).
	s.metrics.races.WithLabelValues(info.ID).Inc()
	s.raceRuns.put(run)
	return info, run.tl, run.err
}

// raceInput finds a scenario and reads its parameters from a query, over
// its defaults.
func raceInput(id string, q url.Values) (race.Info, race.Params, error) {
	i := slices.IndexFunc(race.List(), func(in race.Info) bool { return in.ID == id })
	if i < 0 {
		return race.Info{}, race.Params{}, fmt.Errorf("no race scenario %q: %w", id, race.ErrUnknownScenario)
	}
	info := race.List()[i]
	p, err := race.ParseQuery(info.Defaults, q)
	return info, p, err
}
