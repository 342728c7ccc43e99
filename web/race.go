package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/locklab/locklab/race"
	"github.com/locklab/locklab/web/views"
	"github.com/locklab/locklab/workshop"
)

// raceJSON is the answer of GET /api/race/{id}.
type raceJSON struct {
	ID      string          `json:"id"`
	Title   string          `json:"title"`
	Params  race.Params     `json:"params"`
	Applies []string        `json:"applies"`
	Nodes   int             `json:"nodes"`
	Events  []raceEventJSON `json:"events"`
	Verdict string          `json:"verdict"`
	Summary string          `json:"summary"`
}

type raceEventJSON struct {
	TMS          int64            `json:"t_ms"`
	Actor        string           `json:"actor"`
	Kind         race.Kind        `json:"kind"`
	Text         string           `json:"text"`
	Subject      string           `json:"subject,omitempty"`
	Fence        int64            `json:"fence,omitempty"`
	Stale        bool             `json:"stale,omitempty"`
	Nodes        []race.NodeState `json:"nodes"`
	HighestToken int64            `json:"highest_token"`
}

type scenarioJSON struct {
	ID       string      `json:"id"`
	Title    string      `json:"title"`
	Summary  string      `json:"summary"`
	Defaults race.Params `json:"defaults"`
	Applies  []string    `json:"applies"`
}

// verdictName is the API's name for a verdict, the race package's own.
func verdictName(v race.Verdict) string { return string(v) }

func (s *Server) handleRaceScenarios(c echo.Context) error {
	out := []scenarioJSON{}
	for _, in := range race.List() {
		out = append(out, scenarioJSON{ID: in.ID, Title: in.Title, Summary: in.Description, Defaults: in.Defaults, Applies: in.Applies})
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Server) handleRaceAPI(c echo.Context) error {
	info, tl, err := s.runRace(c, c.Param("id"), c.QueryParams())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, raceToJSON(info, tl))
}

func raceToJSON(info race.Info, tl race.Timeline) raceJSON {
	out := raceJSON{
		ID: tl.Scenario, Title: info.Title, Params: tl.Params, Applies: info.Applies,
		Verdict: verdictName(tl.Verdict), Summary: tl.Summary, Events: []raceEventJSON{},
	}
	for _, e := range tl.Events {
		out.Nodes = max(out.Nodes, len(e.Nodes))
		out.Events = append(out.Events, raceEventJSON{
			TMS: e.AtMS, Actor: e.Actor, Kind: e.Kind, Text: e.Text, Subject: e.Subject,
			Fence: e.Fence, Stale: e.Stale, Nodes: e.Nodes, HighestToken: e.HighestToken,
		})
	}
	return out
}

// raceParams reads the scenario's knobs from a query, starting from p.
func raceParams(p race.Params, q url.Values) (race.Params, error) {
	ms := func(name string, d *time.Duration) error {
		v := q.Get(name)
		if v == "" {
			return nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("%s = %q: not a whole number of milliseconds", name, v))
		}
		if n < 0 || n > int64(race.MaxDuration/time.Millisecond) {
			return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("%s = %d: out of range", name, n))
		}
		*d = time.Duration(n) * time.Millisecond
		return nil
	}
	for _, f := range []struct {
		name string
		d    *time.Duration
	}{
		{race.ParamTTL, &p.TTL}, {race.ParamPause, &p.Pause}, {race.ParamWork, &p.Work},
		{race.ParamClockJump, &p.ClockJump}, {race.ParamRestartDelay, &p.RestartDelay},
	} {
		if err := ms(f.name, f.d); err != nil {
			return p, err
		}
	}
	if v := q.Get(race.ParamFencing); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return p, echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("fencing = %q: want true or false", v))
		}
		p.Fencing = b
	} else if q.Has("run") {
		// An HTML form sends no value for an unticked checkbox.
		p.Fencing = false
	}
	if v := q.Get(race.ParamRelease); v != "" {
		p.Release = race.ReleaseMode(v)
	}
	if v := q.Get(race.ParamSeed); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return p, echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("seed = %q: not a whole number", v))
		}
		p.Seed = n
	}
	// Validate's errors wrap race.ErrBadParams: a 400 by the error table.
	if err := p.Validate(); err != nil {
		return p, err
	}
	return p, nil
}

// raceView builds the race widget for a scenario and query. A bad query is
// shown as an error in the widget, over the scenario's defaults. heading
// is the level of the widget's title: 3 in a lesson, 1 on /race, 2 on
// the presenter view.
func (s *Server) raceView(c echo.Context, id string, q url.Values, heading int) (views.Race, int) {
	// A scenario with its defaults always gives the same run; the lesson
	// shows one on every visit, so it is computed once.
	if len(q) == 0 {
		key := id + "|" + strconv.Itoa(heading)
		if v, ok := s.raceDefaults.Load(key); ok {
			return v.(views.Race), http.StatusOK
		}
		v, code := s.computeRaceView(c, id, nil, heading)
		if code == http.StatusOK {
			s.raceDefaults.Store(key, v)
		}
		return v, code
	}
	return s.computeRaceView(c, id, q, heading)
}

func (s *Server) computeRaceView(c echo.Context, id string, q url.Values, heading int) (views.Race, int) {
	info, tl, err := s.runRace(c, id, q)
	if err == nil {
		return buildRaceView(info, tl, q[paramFault], heading), http.StatusOK
	}
	code, msg := classify(err)
	if code == http.StatusNotFound {
		id = defaultScenario
	}
	info, tl, err = s.runRace(c, id, nil)
	if err != nil {
		return views.Race{Compact: heading == 3, Heading: heading, Error: capitalize(msg) + "."}, http.StatusInternalServerError
	}
	v := buildRaceView(info, tl, nil, heading)
	v.Error = capitalize(msg) + "."
	return v, code
}

// defaultScenario is the one the lesson and /race open with.
const defaultScenario = "gc-pause"

func buildRaceView(info race.Info, tl race.Timeline, faults []string, heading int) views.Race {
	p := tl.Params
	run := raceRunQuery(info.ID, p, faults)
	v := views.Race{
		Compact: heading == 3, Heading: heading, Scenario: info.ID, Title: info.Title, Description: info.Description,
		Verdict: verdictName(tl.Verdict), Summary: tl.Summary,
		TTL: p.TTL.Milliseconds(), Pause: p.Pause.Milliseconds(), Work: p.Work.Milliseconds(),
		Fencing: p.Fencing, Release: string(p.Release),
		ClockJump: p.ClockJump.Milliseconds(), RestartDelay: p.RestartDelay.Milliseconds(),
		Seed: p.Seed, Applies: map[string]bool{},
		API:     "/api/race/" + url.PathEscape(info.ID) + "?" + raceAPIQuery(p, faults).Encode(),
		PageURL: "/race?" + run, PresentURL: "/race/present?" + run,
		Targets: raceTargets(tl),
	}
	for _, f := range faults {
		v.Faults = append(v.Faults, views.RaceFault{Spec: f, Text: faultText(f)})
	}
	for _, a := range info.Applies {
		v.Applies[a] = true
	}
	for _, in := range race.List() {
		v.Scenarios = append(v.Scenarios, views.RaceScenario{ID: in.ID, Title: in.Title})
	}
	for _, e := range tl.Events {
		v.Events = append(v.Events, views.RaceEvent{TMS: e.AtMS, Actor: e.Actor, Kind: string(e.Kind), Text: e.Text})
	}
	v.Outcomes = raceOutcomes(tl)
	return v
}

// raceOutcomes lists what happened in a run, each at the time it
// happened, with the labels the prediction offers.
func raceOutcomes(tl race.Timeline) []views.RaceOutcome {
	var at int64
	if n := len(tl.Events); n > 0 {
		at = tl.Events[n-1].AtMS
	}
	id := verdictName(tl.Verdict)
	return []views.RaceOutcome{{ID: id, Label: views.VerdictLabel(id), AtMS: at}}
}

// raceAPIQuery is the query of GET /api/race/{id} for a run.
func raceAPIQuery(p race.Params, faults []string) url.Values {
	q := raceQuery(p)
	for _, f := range faults {
		q.Add(paramFault, f)
	}
	return q
}

func raceQuery(p race.Params) url.Values {
	return url.Values{
		race.ParamTTL: {strconv.FormatInt(p.TTL.Milliseconds(), 10)}, race.ParamPause: {strconv.FormatInt(p.Pause.Milliseconds(), 10)},
		race.ParamWork: {strconv.FormatInt(p.Work.Milliseconds(), 10)}, race.ParamFencing: {strconv.FormatBool(p.Fencing)},
		race.ParamRelease: {string(p.Release)}, race.ParamClockJump: {strconv.FormatInt(p.ClockJump.Milliseconds(), 10)},
		race.ParamRestartDelay: {strconv.FormatInt(p.RestartDelay.Milliseconds(), 10)}, race.ParamSeed: {strconv.FormatUint(p.Seed, 10)},
	}
}

// racePage is the model of /race and /race/present: the scenario and
// settings from the query, over the scenario's defaults.
func (s *Server) racePage(c echo.Context, title string, present bool) (views.RacePage, int) {
	id := c.QueryParam("scenario")
	if id == "" {
		id = defaultScenario
	}
	heading := 1
	if present {
		heading = 2
	}
	rv, code := s.raceView(c, id, c.QueryParams(), heading)
	m := views.RacePage{Page: s.page(title, "Watch two clients race for a Redis lock that expires, with fencing tokens on and off.", "race"), Race: rv}
	m.Page.Scripts = []string{s.assets.href("race.js")}
	return m, code
}

func (s *Server) handleRacePage(c echo.Context) error {
	if done, err := s.raceRedirect(c, "/race"); done || err != nil {
		return err
	}
	return s.serveRacePage(c, "The race, animated", views.RaceFullPage)
}

// handleRacePresent is the presenter view of the race, for workshops.
func (s *Server) handleRacePresent(c echo.Context) error {
	if done, err := s.raceRedirect(c, "/race/present"); done || err != nil {
		return err
	}
	return s.serveRacePage(c, presentTitle, views.RacePresentPage)
}

// raceDoneRequest is what race.js reports when a run has been played to
// the end: the scenario and settings, and the learner's prediction.
type raceDoneRequest struct {
	Scenario   string            `json:"scenario"`
	Params     map[string]string `json:"params"`
	Prediction string            `json:"prediction"`
}

// handleRaceDone counts a race played for the learner's workshop, and
// whether the prediction was right; the server runs the race itself, so
// the verdict is its own.
func (s *Server) handleRaceDone(c echo.Context) error {
	var req raceDoneRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	q := make(url.Values, len(req.Params))
	for k, v := range req.Params {
		q[k] = []string{v}
	}
	_, tl, err := s.runRace(c, req.Scenario, q)
	if err != nil {
		return err
	}
	verdict := verdictName(tl.Verdict)
	ev := workshop.RaceEvent(req.Scenario, req.Prediction, verdict)
	s.workshopEvent(c, ev)
	return c.JSON(http.StatusOK, map[string]any{"verdict": verdict, "prediction_right": ev.PredictionRight})
}
