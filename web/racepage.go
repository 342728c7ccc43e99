package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/locklab/locklab/race"
	"github.com/locklab/locklab/web/views"
)

// The race settings form's own fields: they say what the learner did,
// and are not settings of a run.
const (
	formRun        = "run"       // the form was submitted (an unticked box sends nothing)
	formFrom       = "from"      // the scenario the form was showing
	formAddFault   = "add_fault" // "Add this fault" was pressed
	formDropFault  = "drop_fault"
	formFaultKind  = "fault_kind"
	formFaultTgt   = "fault_target"
	formFaultAt    = "fault_at_ms"
	formFaultArg   = "fault_arg_ms"
	formFaultKeeps = "fault_persist"
	formShow       = "show"    // the prediction form was sent: show what happened
	formPredict    = "predict" // the outcomes the learner expects, repeated
	paramFault     = race.ParamFault
	paramScenario  = "scenario"
)

// raceBoxes are the settings that are checkboxes in the form.
var raceBoxes = []string{race.ParamFencing, race.ParamWait}

// raceFormQuery turns a submitted settings form into the query of the run
// it asks for. When the form changes scenario, every value the learner
// left at the old scenario's default takes the new scenario's default, so
// "The same pause, with fencing tokens" runs with fencing on; the faults
// added to the old scenario are dropped, since they name its nodes and
// times. It also adds or drops a fault.
func raceFormQuery(q url.Values) url.Values {
	out := url.Values{}
	for k, v := range q {
		out[k] = slices.Clone(v)
	}
	id, from := q.Get(paramScenario), q.Get(formFrom)
	if from != "" && id != "" && from != id {
		if old, ok := scenarioDefaults(from); ok {
			for name, def := range old {
				got := q.Get(name)
				if slices.Contains(raceBoxes, name) && q.Has(formRun) && got == "" {
					got = "false" // an unticked box
				}
				if got == def {
					out.Del(name)
				}
			}
			// An unticked box sends nothing, which the run reads as
			// false: a box left alone gets the new default said aloud.
			nw, _ := scenarioDefaults(id)
			for _, name := range raceBoxes {
				if q.Has(formRun) && out.Get(name) == "" && nw[name] != "" {
					out.Set(name, nw[name])
				}
			}
		}
		out.Del(paramFault)
		out.Del(formAddFault)
	}
	if i, err := strconv.Atoi(q.Get(formDropFault)); err == nil {
		faults := out[paramFault]
		if i >= 0 && i < len(faults) {
			out[paramFault] = slices.Delete(slices.Clone(faults), i, i+1)
		}
	}
	if out.Get(formAddFault) != "" {
		out.Add(paramFault, faultSpec(q.Get(formFaultKind), q.Get(formFaultTgt), q.Get(formFaultAt), q.Get(formFaultArg), q.Get(formFaultKeeps) == "true"))
	}
	for _, k := range []string{formFrom, formAddFault, formDropFault, formFaultKind, formFaultTgt, formFaultAt, formFaultArg, formFaultKeeps} {
		out.Del(k)
	}
	return out
}

// faultSpec writes a fault as the URL carries it: KIND:TARGET:AT_MS:ARG.
// A node's crash's ARG is its restart delay, followed by "-persist" when
// the node keeps its data; a client has no data to keep.
func faultSpec(kind, target, at, arg string, persist bool) string {
	if kind == "crash" && persist && !strings.HasPrefix(target, "client") {
		arg += "-persist"
	}
	return kind + ":" + target + ":" + at + ":" + arg
}

// targetTitle names a fault target for learners: "node3" is "node 3".
func targetTitle(id string) string {
	for _, p := range []string{"client", "node"} {
		if n, ok := strings.CutPrefix(id, p); ok && n != "" {
			return p + " " + n
		}
	}
	return id
}

// scenarioDefaults returns a scenario's default settings as a form sends
// them.
func scenarioDefaults(id string) (map[string]string, bool) {
	i := slices.IndexFunc(race.List(), func(in race.Info) bool { return in.ID == id })
	if i < 0 {
		return nil, false
	}
	b, err := json.Marshal(race.List()[i].Defaults)
	if err != nil {
		return nil, false
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, false
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		switch v := v.(type) {
		case float64:
			out[k] = strconv.FormatFloat(v, 'f', -1, 64)
		case string:
			out[k] = v
		case bool:
			out[k] = strconv.FormatBool(v)
		}
	}
	return out, true
}

// raceRunQuery is the query that reproduces a run on /race or
// /race/present: the scenario, every setting and the faults.
func raceRunQuery(id string, p race.Params) string {
	q := raceQuery(p)
	q.Set(paramScenario, id)
	return q.Encode()
}

// raceTargets lists what a fault can hit in a scenario, named for
// learners: "redis" is the primary where there are other nodes.
func raceTargets(info race.Info) []views.RaceScenario {
	nodes := slices.ContainsFunc(info.Targets, func(t string) bool { return strings.HasPrefix(t, "node") })
	out := make([]views.RaceScenario, 0, len(info.Targets))
	for _, t := range info.Targets {
		title := targetTitle(t)
		if t == "redis" && nodes {
			title = "the primary"
		}
		out = append(out, views.RaceScenario{ID: t, Title: title})
	}
	return out
}

// raceRedirect sends a submitted settings form to the address of the run
// it asks for, so the address bar always holds a link that reproduces the
// run on screen. It reports whether it did.
func (s *Server) raceRedirect(c echo.Context, path string) (bool, error) {
	raw := c.QueryParams()
	if !raw.Has(formRun) {
		return false, nil
	}
	q := raceFormQuery(raw)
	id := q.Get(paramScenario)
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
