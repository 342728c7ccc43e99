package web

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/locklab/locklab/race"
	"github.com/locklab/locklab/web/views"
)

// The prediction form's own fields: it carries the run, and says what the
// learner expects.
const (
	formShow    = "show"    // the prediction form was sent: show what happened
	formPredict = "predict" // the outcomes the learner expects, repeated
)

// raceRunQuery is the query that reproduces a run on /race or
// /race/present: the scenario, every setting and the faults.
func raceRunQuery(id string, p race.Params) string {
	return race.RunQuery(id, p).Encode()
}

// raceTargets lists what a fault can hit in a scenario, named for
// learners.
func raceTargets(info race.Info) []views.RaceScenario {
	ts := info.FaultTargets()
	out := make([]views.RaceScenario, len(ts))
	for i, t := range ts {
		out[i] = views.RaceScenario{ID: t.ID, Title: t.Title}
	}
	return out
}

// raceFaultKinds are the fault kinds the fault form offers, with their
// words.
func raceFaultKinds() []views.RaceFaultKind {
	var out []views.RaceFaultKind
	for _, k := range race.FaultKinds() {
		out = append(out, views.RaceFaultKind{Kind: string(k.Kind), Title: k.Title, ArgLabel: k.ArgLabel, Clients: k.Clients, Nodes: k.Nodes})
	}
	return out
}

// raceRedirect sends a submitted settings form to the address of the run
// it asks for, so the address bar always holds a link that reproduces the
// run on screen. It reports whether it did.
func (s *Server) raceRedirect(c echo.Context, path string) (bool, error) {
	raw := c.QueryParams()
	if !raw.Has(race.FormRun) {
		return false, nil
	}
	q := race.FormQuery(raw)
	id := q.Get(race.ParamScenario)
	if id == "" {
		id = defaultScenario
	}
	_, tl, err := s.runRace(c, id, q)
	if err != nil {
		// The page shows the error in the widget.
		return false, nil //nolint:nilerr
	}
	return true, c.Redirect(http.StatusSeeOther, path+"?"+raceRunQuery(id, tl.Params))
}

// presentTitle is the title of the presenter view.
const presentTitle = "The race, presented"
