package web

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/locklab/locklab/race"
	"github.com/locklab/locklab/web/views"
	"github.com/locklab/locklab/workshop"
)

// raceJSON is the answer of GET /api/race/{id}.
type raceJSON struct {
	ID     string      `json:"id"`
	Title  string      `json:"title"`
	Params race.Params `json:"params"`
	// Setup is what the learner may know before the run, one sentence
	// each, the added faults last; Faults are those faults with their
	// sentences.
	Setup   []string        `json:"setup"`
	Faults  []raceFaultJSON `json:"faults"`
	Applies []string        `json:"applies"`
	Nodes   int             `json:"nodes"`
	Events  []raceEventJSON `json:"events"`
	// Outcomes are every outcome of the run, most serious first, each
	// with the index of the event where it happened.
	Outcomes []raceOutcomeJSON `json:"outcomes"`
	Verdict  string            `json:"verdict"` // the most serious outcome
	Summary  string            `json:"summary"`
	// Query is the address query of /race that reproduces the run.
	Query string `json:"query"`
}

// raceOutcomeJSON is one outcome of a run and the event it happened at,
// with its words: the label a prediction gives it and the short words a
// drawing flags it with.
type raceOutcomeJSON struct {
	Outcome string `json:"outcome"`
	Label   string `json:"label,omitempty"`
	Short   string `json:"short,omitempty"`
	Event   int    `json:"event"` // index into events
	TMS     int64  `json:"t_ms"`
	Text    string `json:"text"`
}

// newRaceOutcomeJSON is f as the run's JSON gives it, with the race's
// words for it.
func newRaceOutcomeJSON(f race.Found) raceOutcomeJSON {
	return raceOutcomeJSON{Outcome: string(f.Outcome), Label: f.Outcome.Label(), Short: f.Outcome.Short(), Event: f.Event, TMS: f.AtMS, Text: f.Text}
}

// raceFaultJSON is a fault added to a run: its fault= form and what it
// does.
type raceFaultJSON struct {
	Spec string `json:"spec"`
	Text string `json:"text"`
}

type raceEventJSON struct {
	TMS          int64            `json:"t_ms"`
	Actor        string           `json:"actor"`
	Kind         race.Kind        `json:"kind"`
	Text         string           `json:"text"`
	Jump         string           `json:"jump,omitempty"` // a clock jump's few words: "+10 s"
	Subject      string           `json:"subject,omitempty"`
	Fence        int64            `json:"fence,omitempty"`
	Stale        bool             `json:"stale,omitempty"`
	Nodes        []race.NodeState `json:"nodes"`
	HighestToken int64            `json:"highest_token"`
	Holding      []string         `json:"holding,omitempty"` // clients that believe they hold the lock
}

type scenarioJSON struct {
	ID       string      `json:"id"`
	Title    string      `json:"title"`
	Setup    []string    `json:"setup"` // with the defaults
	Defaults race.Params `json:"defaults"`
	Applies  []string    `json:"applies"`
	Targets  []string    `json:"targets"` // what a fault= may name in this scenario
	// FaultTargets are the targets with their names for learners.
	FaultTargets []race.Target `json:"fault_targets"`
}

func (s *Server) handleRaceScenarios(c echo.Context) error {
	out := []scenarioJSON{}
	for _, in := range race.List() {
		out = append(out, scenarioJSON{ID: in.ID, Title: in.Title, Setup: in.Setup, Defaults: in.Defaults, Applies: in.Applies, Targets: in.Targets, FaultTargets: in.FaultTargets()})
	}
	return c.JSON(http.StatusOK, out)
}

// handleRaceAPI runs a scenario with the settings of the query. The
// query may carry the fault form's fields, as the settings form sends
// them: the page adds a fault that way, and the answer's faults and
// query then hold it.
func (s *Server) handleRaceAPI(c echo.Context) error {
	info, tl, err := s.runRace(c, c.Param("id"), race.FormQuery(c.QueryParams()))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, raceToJSON(info, tl))
}

func raceToJSON(info race.Info, tl race.Timeline) raceJSON {
	out := raceJSON{
		ID: tl.Scenario, Title: info.Title, Params: tl.Params, Setup: raceSetup(info, tl.Params), Faults: []raceFaultJSON{},
		Applies: info.Applies, Verdict: string(tl.Verdict), Summary: tl.Summary, Events: []raceEventJSON{},
		Outcomes: []raceOutcomeJSON{}, Query: raceRunQuery(tl.Scenario, tl.Params),
	}
	for _, f := range tl.Params.Faults {
		out.Faults = append(out.Faults, raceFaultJSON{Spec: f.String(), Text: info.FaultText(f)})
	}
	for _, f := range tl.Outcomes {
		out.Outcomes = append(out.Outcomes, newRaceOutcomeJSON(f))
	}
	for _, e := range tl.Events {
		out.Nodes = max(out.Nodes, len(e.Nodes))
		out.Events = append(out.Events, raceEventJSON{
			TMS: e.AtMS, Actor: e.Actor, Kind: e.Kind, Text: e.Text, Jump: e.Jump, Subject: e.Subject,
			Fence: e.Fence, Stale: e.Stale, Nodes: e.Nodes, HighestToken: e.HighestToken, Holding: e.Holding,
		})
	}
	return out
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
		v := buildRaceView(info, tl, heading)
		if q.Has(formShow) {
			shown(&v, tl, q[formPredict])
		}
		return v, http.StatusOK
	}
	code, msg := classify(err)
	if code == http.StatusNotFound {
		id = defaultScenario
	}
	info, tl, err = s.runRace(c, id, nil)
	if err != nil {
		return views.Race{Compact: heading == 3, Heading: heading, Error: capitalize(msg) + "."}, http.StatusInternalServerError
	}
	v := buildRaceView(info, tl, heading)
	v.Error = capitalize(msg) + "."
	return v, code
}

// defaultScenario is the one the lesson and /race open with.
const defaultScenario = "gc-pause"

func buildRaceView(info race.Info, tl race.Timeline, heading int) views.Race {
	p := tl.Params
	run := raceRunQuery(info.ID, p)
	v := views.Race{
		Compact: heading == 3, Heading: heading, Scenario: info.ID, Title: info.Title, Setup: raceSetup(info, p),
		Verdict: string(tl.Verdict), Summary: tl.Summary,
		TTL: p.TTL.Milliseconds(), Pause: p.Pause.Milliseconds(), Work: p.Work.Milliseconds(),
		Fencing: p.Fencing, Release: string(p.Release),
		ClockJump: p.ClockJump.Milliseconds(), RestartDelay: p.RestartDelay.Milliseconds(),
		ReplicationLag: p.ReplicationLag.Milliseconds(), Wait: p.Wait, Renew: string(p.Renew),
		Seed: p.Seed, Applies: map[string]bool{},
		API:     "/api/race/" + url.PathEscape(info.ID) + "?" + p.Query().Encode(),
		PageURL: "/race?" + run, PresentURL: "/race/present?" + run,
		Targets: raceTargets(info), FaultKinds: raceFaultKinds(),
	}
	for _, f := range p.Faults {
		v.Faults = append(v.Faults, views.RaceFault{Spec: f.String(), Text: info.FaultText(f)})
	}
	for _, o := range race.Outcomes() {
		v.Choices = append(v.Choices, views.VerdictOption{ID: string(o), Label: o.Label()})
	}
	q := race.RunQuery(info.ID, p)
	for _, k := range slices.Sorted(maps.Keys(q)) {
		for _, val := range q[k] {
			v.RunFields = append(v.RunFields, views.RaceField{Name: k, Value: val})
		}
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

// raceOutcomes lists what happened in a run, each at the event where it
// happened, with the labels the prediction offers.
func raceOutcomes(tl race.Timeline) []views.RaceOutcome {
	out := make([]views.RaceOutcome, 0, len(tl.Outcomes))
	for _, f := range tl.Outcomes {
		out = append(out, views.RaceOutcome{ID: string(f.Outcome), Label: f.Outcome.Label(), AtMS: f.AtMS, Text: f.Text})
	}
	return out
}

// raceSetup is what a learner may know of a run before it is played. A
// run's parameters were validated when it ran, so Setup cannot fail.
func raceSetup(info race.Info, p race.Params) []string {
	lines, err := race.Setup(info.ID, p)
	if err != nil {
		return []string{err.Error()}
	}
	return lines
}

// judgeRace judges a prediction outcome by outcome against a run: each
// outcome offered that the learner expected or that happened, with its
// label and, if it happened, when.
func judgeRace(tl race.Timeline, prediction []string) []views.RaceJudgement {
	var out []views.RaceJudgement
	for _, j := range workshop.JudgeRace(outcomeNames(race.Outcomes()), prediction, outcomeNames(tl.OutcomeSet())) {
		if !j.Expected && !j.Happened {
			continue
		}
		v := views.RaceJudgement{ID: j.Outcome, Label: race.Outcome(j.Outcome).Label(), Expected: j.Expected, Happened: j.Happened}
		for _, f := range tl.Outcomes {
			if string(f.Outcome) == j.Outcome {
				v.AtMS = f.AtMS
			}
		}
		out = append(out, v)
	}
	return out
}

// shown unfolds what happened in v, the run tl, for the prediction form
// sent without JavaScript, and judges the prediction it carried. Names
// that are no outcome are left out: they are not among the form's
// choices.
func shown(v *views.Race, tl race.Timeline, predicted []string) {
	v.Shown = true
	var prediction []string
	for _, name := range predicted {
		if o, err := race.ParseOutcome(name); err == nil && !slices.Contains(prediction, string(o)) {
			prediction = append(prediction, string(o))
		}
	}
	if len(prediction) > 0 {
		v.Judged = judgeRace(tl, prediction)
	}
}

// racePage is the model of /race and /race/present: the scenario and
// settings from the query, over the scenario's defaults. A query from the
// settings form (run=1) is read as the form means it (race.FormQuery): a
// run that cannot be shown at its own address, as a fault refused, is
// shown here with its error. A fault refused leaves the run as it was,
// the reason said next to the fault's fields.
func (s *Server) racePage(c echo.Context, title string, present bool) (views.RacePage, int) {
	raw := c.QueryParams()
	q := raw
	if raw.Has(race.FormRun) {
		q = race.FormQuery(raw)
	}
	id := q.Get(race.ParamScenario)
	if id == "" {
		id = defaultScenario
	}
	heading := 1
	switch {
	case present:
		heading = 2
	case raw.Has(raceFragmentParam) && raw.Get(raceWidgetParam) == raceWidgetLesson:
		// A part of the lesson's widget, which race.js asks for here.
		heading = 3
	}
	rv, code := s.raceView(c, id, q, heading)
	if code == http.StatusBadRequest && !rv.Compact && raw.Get(race.FormAddFault) != "" {
		kept := maps.Clone(raw)
		kept.Del(race.FormAddFault)
		if before, ok := s.raceView(c, id, race.FormQuery(kept), heading); ok == http.StatusOK {
			before.FaultError = rv.Error
			rv = before
		}
	}
	m := views.RacePage{Page: s.page(title, "Watch two clients race for a Redis lock that expires, with fencing tokens on and off.", "race"), Race: rv}
	m.Page.Scripts = append(m.Page.Scripts, s.assets.href("race.js"))
	m.PresentCSS = s.assets.href("race-present.css")
	return m, code
}

func (s *Server) handleRacePage(c echo.Context) error {
	return s.serveRace(c, "/race", "The race, animated", views.RaceFullPage)
}

// handleRacePresent is the presenter view of the race, for workshops.
func (s *Server) handleRacePresent(c echo.Context) error {
	return s.serveRace(c, "/race/present", presentTitle, views.RacePresentPage)
}

// serveRace answers /race or /race/present (path): a settings form sent
// without the script goes to the address of its run; with the script
// (?fragment=), the parts of the widget the query changes are answered
// instead, rendered as the page renders them, and race.js puts them in
// place.
func (s *Server) serveRace(c echo.Context, path, title string, page func(views.RacePage) templ.Component) error {
	frag, err := raceFragment(c)
	if err != nil {
		return err
	}
	if frag != nil {
		m, code := s.racePage(c, title, title == presentTitle)
		return render(c, code, frag(m.Race))
	}
	if done, err := s.raceRedirect(c, path); done || err != nil {
		return err
	}
	return s.serveRacePage(c, title, page)
}

// The race page's fragments: ?fragment=run is what a new run changes
// (views.RaceRun), ?fragment=judged the prediction judged
// (views.RaceJudged); widget=lesson renders them as the lesson's widget
// shows them.
const (
	raceFragmentParam = "fragment"
	raceWidgetParam   = "widget"
	raceWidgetLesson  = "lesson"
)

// raceFragment is the part of the race widget that the request's
// ?fragment= asks for (race.js asks, to update the widget in place), or
// nil for the whole page.
func raceFragment(c echo.Context) (func(views.Race) templ.Component, error) {
	switch name := c.QueryParam(raceFragmentParam); name {
	case "":
		return nil, nil
	case "run":
		return views.RaceRun, nil
	case "judged":
		return views.RaceJudged, nil
	default:
		return nil, echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("the race page has no fragment %q: want run or judged", name))
	}
}

// raceDoneRequest is what race.js reports when a run has been played to
// the end: the scenario and settings (a value is a string, or a list of
// strings for the repeatable fault), and the outcomes the learner
// predicted: a list, or one name as the page sent before.
type raceDoneRequest struct {
	Scenario   string                  `json:"scenario"`
	Params     map[string]stringOrMany `json:"params"`
	Prediction stringOrMany            `json:"prediction"`
}

// stringOrMany is a JSON string or a list of strings.
type stringOrMany []string

// UnmarshalJSON takes "x", ["x", "y"] or null.
func (s *stringOrMany) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = nil
		if one != "" {
			*s = []string{one}
		}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("want a string or a list of strings")
	}
	*s = many
	return nil
}

// raceDoneJSON answers POST /api/race/done: the run's outcomes and the
// prediction judged outcome by outcome.
type raceDoneJSON struct {
	Verdict         string              `json:"verdict"`
	Outcomes        []string            `json:"outcomes"`
	PredictionRight bool                `json:"prediction_right"` // exactly the outcomes that happened
	Judged          []raceJudgementJSON `json:"judged"`           // one per outcome; empty without a prediction
}

type raceJudgementJSON struct {
	workshop.Judgement
	Right bool `json:"right"`
	// Label and Text, in the answer of a race played to the end: the
	// outcome's label and a sentence on how the prediction fared.
	Label string `json:"label,omitempty"`
	Text  string `json:"text,omitempty"`
}

// handleRaceDone counts a race played for the learner's workshop, and
// whether the prediction was right; the server runs the race itself, so
// the outcomes are its own.
func (s *Server) handleRaceDone(c echo.Context) error {
	var req raceDoneRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	var prediction []string
	for _, name := range req.Prediction {
		o, err := race.ParseOutcome(name)
		if err != nil {
			return fmt.Errorf("prediction: %w", err)
		}
		prediction = append(prediction, string(o))
	}
	q := make(url.Values, len(req.Params))
	for k, v := range req.Params {
		q[k] = v
	}
	_, tl, err := s.runRace(c, req.Scenario, q)
	if err != nil {
		return err
	}
	happened := outcomeNames(tl.OutcomeSet())
	ev := workshop.RaceEvent(req.Scenario, prediction, happened)
	s.workshopEvent(c, ev)
	out := raceDoneJSON{Verdict: string(tl.Verdict), Outcomes: happened, PredictionRight: ev.PredictionRight, Judged: []raceJudgementJSON{}}
	if len(prediction) > 0 {
		said := map[string]string{}
		for _, j := range judgeRace(tl, prediction) {
			said[j.ID] = j.Sentence()
		}
		for _, j := range workshop.JudgeRace(outcomeNames(race.Outcomes()), prediction, happened) {
			o := race.Outcome(j.Outcome)
			out.Judged = append(out.Judged, raceJudgementJSON{Judgement: j, Right: j.Right(), Label: o.Label(), Text: said[j.Outcome]})
		}
	}
	return c.JSON(http.StatusOK, out)
}

func outcomeNames(os []race.Outcome) []string {
	out := make([]string, len(os))
	for i, o := range os {
		out[i] = string(o)
	}
	return out
}
