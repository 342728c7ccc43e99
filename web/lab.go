package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/locklab/locklab/lab"
	"github.com/locklab/locklab/limit"
	"github.com/locklab/locklab/web/views"
	"github.com/locklab/locklab/workshop"
)

// LabChecker runs lock-lab checks: in the sandbox workers (the worker
// supervisor) or, with -sandbox-workers 0, in this process (lab.InProcess).
type LabChecker interface {
	CheckLab(ctx context.Context, req lab.Request, b lab.Budget) (lab.Report, error)
	CompareLab(ctx context.Context, req lab.CompareRequest, b lab.Budget) (lab.Comparison, error)
}

// The lock lab: GET /api/lab/challenges, GET /api/lab/library, POST
// /api/lab/check, and the page /lab, whose form posts to itself when
// JavaScript is off. The rules (recipes, schedules, properties,
// challenges, the library gallery) are package lab's; this file maps HTTP
// to them, keeps solved challenges with the learner's progress and puts
// checks under the script limits.

// labRecipeJSON is a recipe as the API takes and gives it.
type labRecipeJSON struct {
	Acquire []string `json:"acquire"`
	Release []string `json:"release"`
	Extend  []string `json:"extend"`
	Fencing bool     `json:"fencing"`
	// The deciding lines and the fencing token's place, as package lab
	// defines them; absent keeps the default rules.
	TakenWhen    *lab.Decide    `json:"taken_when,omitempty"`
	RenewedWhen  *lab.Decide    `json:"renewed_when,omitempty"`
	ReleasedWhen *lab.Decide    `json:"released_when,omitempty"`
	TokenFrom    *lab.TokenFrom `json:"token_from,omitempty"`
	// Nodes is how many Redis nodes the recipe runs on (1, 3 or 5;
	// absent is 1), Quorum how many must grant the lock (absent is a
	// majority), as package lab defines them.
	Nodes  int `json:"nodes"`
	Quorum int `json:"quorum,omitempty"`
}

// labChallengeJSON is one entry of GET /api/lab/challenges: the broken
// recipe, the property it breaks and the hint.
type labChallengeJSON struct {
	ID       string        `json:"id"`
	Title    string        `json:"title"`
	Goal     string        `json:"goal"`
	Property string        `json:"property"`
	Hint     string        `json:"hint"`
	Recipe   labRecipeJSON `json:"recipe"`
	Solved   bool          `json:"solved"`
	// Level is the challenge's rung of the ladder, LevelTitle what the
	// rung teaches; Requires the properties a solution must hold, its
	// own first; Model the fault model it is judged under.
	Level      int       `json:"level"`
	LevelTitle string    `json:"level_title"`
	Requires   []string  `json:"requires"`
	Model      lab.Model `json:"model"`
}

// labCheckRequest is the body of POST /api/lab/check.
type labCheckRequest struct {
	Recipe    labRecipeJSON `json:"recipe"`
	Challenge string        `json:"challenge,omitempty"`
	// Model is the fault model; absent is lab.DefaultModel. A challenge
	// is judged under its own.
	Model *lab.Model `json:"model,omitempty"`
	Seed  *uint64    `json:"seed,omitempty"`
	// compare, from the page's form (do=compare), asks for a comparison
	// with another recipe instead of a check (lab_compare.go).
	compare *labCompareForm
}

// labReportJSON answers POST /api/lab/check. Passed is there only with a
// challenge; the fields after it say the check in the page's words.
type labReportJSON struct {
	Schedules int `json:"schedules"`
	// Systematic schedules are every one with up to MaxFaults faults;
	// Random the rest. Summary says so in a sentence.
	Systematic int               `json:"systematic"`
	Random     int               `json:"random"`
	MaxFaults  int               `json:"max_faults"`
	Summary    string            `json:"summary"`
	Model      lab.Model         `json:"model"`
	ModelText  string            `json:"model_text"`
	Properties []labPropertyJSON `json:"properties"`
	Passed     *bool             `json:"passed,omitempty"`
	// PassText says whether the challenge is solved, or what the recipe
	// still breaks.
	PassText string `json:"pass_text,omitempty"`
	// Challenge and ChallengeProperty name the challenge checked.
	Challenge         string `json:"challenge,omitempty"`
	ChallengeProperty string `json:"challenge_property,omitempty"`
	// JustSolved: this check solved the challenge and it was saved.
	JustSolved bool `json:"just_solved,omitempty"`
	// NotSaved, when set, says why a solved challenge was not saved
	// (saving.go).
	NotSaved string `json:"not_saved,omitempty"`
	// Works says whether every client took the lock in the schedule
	// without faults; WorksText says why not.
	Works     bool   `json:"works"`
	WorksText string `json:"works_text,omitempty"`
	// Link is the page that reproduces this check.
	Link string `json:"link"`
	// Nodes is how many Redis nodes the recipe ran on, Quorum how many
	// had to grant the lock.
	Nodes  int `json:"nodes"`
	Quorum int `json:"quorum"`
}

type labPropertyJSON struct {
	ID             string                 `json:"id"`
	Title          string                 `json:"title"`
	Description    string                 `json:"description"`
	Status         string                 `json:"status"` // holds, broken or not-judged
	Holds          bool                   `json:"holds"`
	Explored       int                    `json:"explored"`
	Note           string                 `json:"note,omitempty"`
	Counterexample *labCounterexampleJSON `json:"counterexample"`
}

// labCounterexampleJSON is a schedule that broke a property: its events
// have the race API's shape, so that the race's renderer draws them.
type labCounterexampleJSON struct {
	Seed     uint64            `json:"seed"`
	Events   []raceEventJSON   `json:"events"`
	Outcomes []raceOutcomeJSON `json:"outcomes"`
	Nodes    int               `json:"nodes"`
	TTLMS    int64             `json:"ttl_ms"`
	Fencing  bool              `json:"fencing"`
	// Faults are the schedule's faults, Summary what broke, each in one
	// sentence.
	Faults  []string `json:"faults"`
	Summary string   `json:"summary"`
	Link    string   `json:"link"`
}

func (s *Server) handleLabChallenges(c echo.Context) error {
	solved := s.solvedSet(c)
	out := []labChallengeJSON{}
	for _, ch := range lab.Challenges() {
		v := labChallengeView(ch, false)
		cj := labChallengeJSON{
			ID: ch.ID, Title: ch.Title, Goal: ch.Goal, Property: string(ch.Property), Hint: ch.Hint,
			Recipe: recipeToJSON(ch.Recipe), Solved: solved[ch.ID], Level: ch.Level, LevelTitle: v.LevelTitle,
			Model: lab.DefaultModel(),
		}
		if ch.Model != nil {
			cj.Model = *ch.Model
		}
		for _, p := range ch.Requires() {
			cj.Requires = append(cj.Requires, string(p))
		}
		out = append(out, cj)
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Server) handleLabCheck(c echo.Context) error {
	var req labCheckRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	out, err := s.labCheck(c, req)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

// labCheck runs a check under the script limits, records a solved
// challenge and builds the API's answer.
func (s *Server) labCheck(c echo.Context, req labCheckRequest) (labReportJSON, error) {
	var ch *lab.Challenge
	if req.Challenge != "" {
		found, err := lab.ChallengeByID(req.Challenge)
		if err != nil {
			return labReportJSON{}, err
		}
		ch = &found
	}
	recipe := recipeFromJSON(req.Recipe)
	// A recipe that cannot run costs no budget: its 400 names the line.
	if err := recipe.Validate(); err != nil {
		return labReportJSON{}, err
	}
	learner := s.learnerID(c)
	if c.Request().Method == http.MethodPost {
		learner = s.ensureLearner(c)
	}
	charge, err := s.limitCheck(c, learner)
	if err != nil {
		return labReportJSON{}, err
	}
	lreq := lab.Request{Recipe: recipe, Challenge: req.Challenge, Model: req.Model}
	if req.Seed != nil {
		lreq.Seed = *req.Seed
	}
	// The check waits its turn in the fair queue; the wait is not its
	// cost: it pays the CPU time its own check took.
	release, err := s.enterLabQueue(c, learner)
	if err != nil {
		charge(0)
		return labReportJSON{}, err
	}
	start := time.Now()
	rep, err := s.lab.CheckLab(c.Request().Context(), lreq, lab.Budget{})
	release()
	switch {
	case err == nil:
		charge(time.Duration(rep.CPUMS) * time.Millisecond)
	case errors.Is(err, lab.ErrBudget):
		charge(lab.DefaultBudget().CPU)
	default:
		charge(time.Since(start))
	}
	if err != nil {
		return labReportJSON{}, err
	}
	out := reportToJSON(req, rep)
	if ch != nil {
		out.Challenge, out.ChallengeProperty = ch.ID, string(ch.Property)
		passed := rep.Passed != nil && *rep.Passed
		out.Passed = &passed
		// Only a POST saves: a link opened (GET) shows the result and
		// changes nothing.
		if passed && c.Request().Method == http.MethodPost {
			out.JustSolved, out.NotSaved, err = s.recordSolved(c, learner, ch.ID)
			if err != nil {
				return labReportJSON{}, err
			}
			// A workshop counts each learner's challenge once, however
			// often it is checked.
			s.workshopEvent(c, workshop.Event{Kind: workshop.EventLabSolve, Challenge: ch.ID})
		}
	}
	return out, nil
}

// recordSolved saves a solved challenge with the learner's progress and
// reports whether it is new; if it may not be saved (saving.go), notSaved
// says why.
func (s *Server) recordSolved(c echo.Context, learner, challenge string) (justSolved bool, notSaved string, err error) {
	if learner == "" {
		return false, "", nil
	}
	ctx := c.Request().Context()
	had, err := s.progress.Solved(ctx, learner)
	if err != nil {
		return false, "", err
	}
	for _, id := range had {
		if id == challenge {
			return false, "", nil
		}
	}
	if notSaved, err := s.admitProgress(ctx, learner, clientAddress(c)); notSaved != "" || err != nil {
		return false, notSaved, err
	}
	err = s.progress.RecordSolved(ctx, learner, challenge)
	if notSaved := notSavedFor(err); notSaved != "" {
		return false, notSaved, nil
	}
	if err != nil {
		return false, "", err
	}
	return true, "", nil
}

// solvedSet is the challenges the learner has solved; a store that cannot
// be read shows none, and the error goes to the log.
func (s *Server) solvedSet(c echo.Context) map[string]bool {
	out := map[string]bool{}
	id := s.learnerID(c)
	if id == "" {
		return out
	}
	ids, err := s.progress.Solved(c.Request().Context(), id)
	if err != nil {
		s.failures.Warn("read solved challenges", "error", err)
		return out
	}
	for _, x := range ids {
		out[x] = true
	}
	return out
}

// limitCheck puts a check under the script limits: it counts as a script
// that may run long (one at a time per learner, while the script time
// budget holds a deadline's worth), and pays the time it took.
func (s *Server) limitCheck(c echo.Context, learner string) (func(time.Duration), error) {
	key := learner
	if key == "" {
		// A reproduced link, opened by a visitor who has no id yet.
		key = "anon:" + clientAddress(c)
	}
	pay, err := s.admitScript(c, key, limit.Line{RunsScript: true, RunsLong: true},
		func() string { return "your checks have used their share of the sandbox's time" })
	// A check runs the learner's lock under its own budget (see
	// lab.Budget), not the playground's deadline: none is stopped as a
	// playground script is.
	return func(used time.Duration) { pay(used, false) }, err
}

// enterLabQueue waits for a turn to run a check (see limit.FairQueue):
// one check queued or running per learner, a fair share per address, a
// bounded wait. It returns the function that gives the turn back, or the
// 429 that says why there is none.
func (s *Server) enterLabQueue(c echo.Context, learner string) (func(), error) {
	addr := clientAddress(c)
	key := learner
	if key == "" {
		key = "anon:" + addr
	}
	release, d, err := s.labQueue.Enter(c.Request().Context(), key, addr)
	switch {
	case err != nil:
		return nil, fmt.Errorf("lab check: %w", err)
	case d.Limit == "lab_running":
		return nil, s.refused(c, d, "a check of yours is running already; wait for its report")
	case !d.Allowed():
		return nil, s.refused(c, d, fmt.Sprintf("the lock lab is busy with other learners' checks; try again in %d s", retrySeconds(d.Wait)))
	}
	return release, nil
}

func recipeFromJSON(r labRecipeJSON) lab.Recipe {
	return lab.Recipe{Acquire: r.Acquire, Release: r.Release, Extend: r.Extend, Fencing: r.Fencing,
		TakenWhen: r.TakenWhen, RenewedWhen: r.RenewedWhen, ReleasedWhen: r.ReleasedWhen, TokenFrom: r.TokenFrom,
		Nodes: r.Nodes, Quorum: r.Quorum}
}

func recipeToJSON(r lab.Recipe) labRecipeJSON {
	return labRecipeJSON{Acquire: nonNil(r.Acquire), Release: nonNil(r.Release), Extend: nonNil(r.Extend), Fencing: r.Fencing,
		TakenWhen: r.TakenWhen, RenewedWhen: r.RenewedWhen, ReleasedWhen: r.ReleasedWhen, TokenFrom: r.TokenFrom,
		Nodes: max(r.Nodes, 1), Quorum: r.Quorum}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// propertyInfo describes a property; an unknown one is its own title.
func propertyInfo(p lab.Property) lab.PropertyInfo {
	for _, in := range lab.Properties() {
		if in.ID == p {
			return in
		}
	}
	return lab.PropertyInfo{ID: p, Title: string(p)}
}

func reportToJSON(req labCheckRequest, rep lab.Report) labReportJSON {
	out := labReportJSON{
		Schedules: rep.Schedules, Systematic: rep.Systematic, Random: rep.Random, MaxFaults: rep.MaxFaults, Summary: rep.Summary,
		Nodes: max(rep.Nodes, 1), Quorum: max(rep.Quorum, 1),
		Model: rep.Model, ModelText: rep.ModelText, PassText: rep.PassText,
		Properties: []labPropertyJSON{}, Works: rep.Works, WorksText: rep.WorksText,
		Link: labLink(req.Recipe, req.Challenge, req.Model, &rep.Seed),
	}
	for _, p := range rep.Properties {
		info := propertyInfo(p.ID)
		pj := labPropertyJSON{
			ID: string(p.ID), Title: info.Title, Description: info.Text, Status: p.Status, Holds: p.Holds, Explored: p.Explored, Note: p.Note,
		}
		if cx := p.Counterexample; cx != nil {
			pj.Counterexample = counterexampleJSON(cx, out.Link+"#cx-"+string(p.ID)+"-title")
		}
		out.Properties = append(out.Properties, pj)
	}
	return out
}

// counterexampleJSON is a schedule as the API gives it, its events in
// the race API's shape; link reproduces it ("" for none).
func counterexampleJSON(cx *lab.Counterexample, link string) *labCounterexampleJSON {
	cj := &labCounterexampleJSON{
		Seed: cx.Seed, Events: []raceEventJSON{}, Outcomes: []raceOutcomeJSON{}, Faults: nonNil(cx.Faults), Summary: cx.Summary,
		TTLMS: cx.Params.TTLMS, Fencing: cx.Params.Fencing, Nodes: max(cx.Nodes, 1), Link: link,
	}
	for _, e := range cx.Events {
		cj.Events = append(cj.Events, raceEventJSON{
			TMS: e.TMS, Actor: e.Actor, Kind: e.Kind, Text: e.Text, Jump: e.Jump, Subject: e.Subject,
			Fence: e.Fence, Stale: e.Stale, Nodes: e.Nodes, HighestToken: e.HighestToken, Holding: e.Holding,
		})
	}
	for _, o := range cx.Outcomes {
		cj.Outcomes = append(cj.Outcomes, newRaceOutcomeJSON(o.Found))
	}
	return cj
}

// labLink is the page that reproduces a check: the recipe, the challenge
// and the seed that chose the schedules, in the address. A check is
// deterministic, so the link shows the same counterexamples again.
func labLink(r labRecipeJSON, challenge string, model *lab.Model, seed *uint64) string {
	q := url.Values{}
	if challenge != "" {
		q.Set("challenge", challenge)
	}
	q.Set("acquire", strings.Join(r.Acquire, "\n"))
	q.Set("release", strings.Join(r.Release, "\n"))
	if len(r.Extend) > 0 {
		q.Set("extend", strings.Join(r.Extend, "\n"))
	}
	q.Set("fencing", strconv.FormatBool(r.Fencing))
	for _, d := range []struct {
		name string
		d    *lab.Decide
	}{{"taken", r.TakenWhen}, {"renewed", r.RenewedWhen}, {"released", r.ReleasedWhen}} {
		if d.d != nil {
			q.Set(d.name+"_line", strconv.Itoa(d.d.Line))
			q.Set(d.name+"_reply", d.d.Reply)
		}
	}
	if t := r.TokenFrom; t != nil {
		q.Set("token_line", strconv.Itoa(t.Line))
		q.Set("token_element", strconv.Itoa(t.Element))
	}
	if r.Nodes > 1 {
		q.Set("nodes", strconv.Itoa(r.Nodes))
	}
	if r.Quorum > 0 {
		q.Set("quorum", strconv.Itoa(r.Quorum))
	}
	if model != nil && challenge == "" {
		q.Set("long_stalls", strconv.FormatBool(model.LongStalls))
		q.Set("combine", strconv.FormatBool(model.Combine))
		q.Set("clock_jumps", model.ClockJumps)
		q.Set("restarts", model.Restarts)
	}
	if seed != nil {
		q.Set("seed", strconv.FormatUint(*seed, 10))
	}
	q.Set("check", "1")
	return "/lab?" + q.Encode()
}

// labDecide reads a deciding line and its pattern from the form's fields
// NAME_line and NAME_reply: nil when both are empty.
func labDecide(get func(string) string, name string) (*lab.Decide, error) {
	line, reply := strings.TrimSpace(get(name+"_line")), get(name+"_reply")
	if line == "" && reply == "" {
		return nil, nil
	}
	n, err := strconv.Atoi(line)
	if err != nil {
		return nil, echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("%s_line = %q: give a line number (1 is the first, -1 the last)", name, line))
	}
	return &lab.Decide{Line: n, Reply: reply}, nil
}

// labNodes reads the form's nodes and quorum: whole numbers, or empty
// for one node and a majority. Package lab says which are allowed.
func labNodes(get func(string) string) (nodes, quorum int, err error) {
	for _, f := range []struct {
		name string
		into *int
	}{{"nodes", &nodes}, {"quorum", &quorum}} {
		v := strings.TrimSpace(get(f.name))
		if v == "" {
			continue
		}
		if *f.into, err = strconv.Atoi(v); err != nil {
			return 0, 0, echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("%s = %q: not a whole number", f.name, v))
		}
	}
	return nodes, quorum, nil
}

// splitLines is a textarea's lines, trimmed, without the empty ones.
func splitLines(text string) []string {
	var out []string
	for _, l := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// labFormRequest reads a check from the page's form (POST) or its address
// (GET, a reproduced link).
func labFormRequest(get func(string) string) (labCheckRequest, error) {
	req := labCheckRequest{
		Recipe: labRecipeJSON{
			Acquire: splitLines(get("acquire")), Release: splitLines(get("release")), Extend: splitLines(get("extend")),
			Fencing: get("fencing") == "true",
		},
		Challenge: get("challenge"),
	}
	if v := get("seed"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return req, echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("seed = %q: not a whole number", v))
		}
		req.Seed = &n
	}
	var err error
	if req.Recipe.TakenWhen, err = labDecide(get, "taken"); err != nil {
		return req, err
	}
	if req.Recipe.RenewedWhen, err = labDecide(get, "renewed"); err != nil {
		return req, err
	}
	if req.Recipe.ReleasedWhen, err = labDecide(get, "released"); err != nil {
		return req, err
	}
	if req.Recipe.Nodes, req.Recipe.Quorum, err = labNodes(get); err != nil {
		return req, err
	}
	if line := strings.TrimSpace(get("token_line")); line != "" {
		n, err1 := strconv.Atoi(line)
		k, err2 := strconv.Atoi(strings.TrimSpace(get("token_element")))
		if err1 != nil || (err2 != nil && strings.TrimSpace(get("token_element")) != "") {
			return req, echo.NewHTTPError(http.StatusBadRequest, "token_line and token_element: give whole numbers")
		}
		req.Recipe.TokenFrom = &lab.TokenFrom{Line: n, Element: k}
	}
	if get("clock_jumps") != "" || get("restarts") != "" {
		// The form's fault model; an unticked box sends nothing.
		req.Model = &lab.Model{LongStalls: get("long_stalls") == "true", Combine: get("combine") == "true",
			ClockJumps: get("clock_jumps"), Restarts: get("restarts")}
	}
	return req, nil
}

// handleLabPage is /lab: a blank recipe, a challenge's broken recipe
// (?challenge=id), or a reproduced check (?check=1 with the recipe).
func (s *Server) handleLabPage(c echo.Context) error {
	q := c.QueryParams()
	req, err := labFormRequest(q.Get)
	if err != nil {
		return err
	}
	// A link runs its check only when a learner opens it: a check costs
	// seconds of a worker, and an image or a prefetch could ask for it.
	linked := q.Get("check") != ""
	run := linked && navigated(c)
	if !linked && req.Challenge != "" {
		ch, err := lab.ChallengeByID(req.Challenge)
		if err != nil {
			return err
		}
		req.Recipe = recipeToJSON(ch.Recipe)
	}
	loaded := ""
	if id := q.Get("library"); id != "" && !linked && req.Challenge == "" {
		// A gallery entry in the editor, with the fault model it is
		// checked under.
		e, err := labLibraryEntry(id)
		if err != nil {
			return err
		}
		m := e.CheckModel()
		req.Recipe, req.Model, loaded = recipeToJSON(e.Recipe), &m, e.ID
	}
	if !linked && req.Challenge == "" && len(req.Recipe.Acquire) == 0 {
		req.Recipe = recipeToJSON(lab.Textbook())
	}
	return s.renderLab(c, req, run, loaded, loaded != "")
}

// navigated reports whether the request is a top-level navigation, as a
// browser marks one: a link a learner opened, not a subresource, a fetch
// or a prefetch. A request without the marks is not one.
func navigated(c echo.Context) bool {
	h := c.Request().Header
	return h.Get("Sec-Fetch-Mode") == "navigate" && h.Get("Sec-Fetch-Dest") == "document"
}

// handleLabForm is the page's form posted: without JavaScript, the page
// again, with the report under the form (a direct render, as the quiz's
// form does: a check is not a change to redo on reload); with it
// (?fragment=result), only the parts a check changes, which lab.js puts
// in place (views.LabResult).
func (s *Server) handleLabForm(c echo.Context) error {
	req, err := labFormRequest(c.FormValue)
	if err != nil {
		return err
	}
	if c.FormValue("do") == "compare" {
		if req.compare, err = readCompareForm(c.FormValue); err != nil {
			return err
		}
	}
	// The gallery entry the recipe was loaded from stays marked; an id
	// the gallery does not have marks none.
	loaded := ""
	if e, ok := lab.LibraryByID(c.FormValue("library")); ok && req.Challenge == "" {
		loaded = e.ID
	}
	return s.renderLab(c, req, true, loaded, false)
}

// renderLab renders /lab with the recipe in the editor and, if run, the
// report of its check. A recipe that cannot run is a 400 with the message
// above the form. loaded names the gallery entry the recipe came from
// ("" for none); justLoaded says it was loaded by this request.
func (s *Server) renderLab(c echo.Context, req labCheckRequest, run bool, loaded string, justLoaded bool) error {
	m := views.LabPage{
		Page:    s.page("The lock lab", "Write your own Redis lock and let Lock Lab try to break it over hundreds of schedules.", "lab"),
		LabCSS:  s.assets.href("lab.css"),
		Recipe:  labRecipeView(req),
		Library: labLibraryViews(loaded),
		Loaded:  loaded,
	}
	if e, ok := lab.LibraryByID(loaded); ok && justLoaded {
		m.LoadedText = e.LoadedText()
	}
	m.Page.Scripts = []string{s.assets.href("race.js"), s.assets.href("lab.js")}
	code := http.StatusOK
	if f := req.compare; f != nil {
		m.Recipe.With, m.Recipe.WithAcquire, m.Recipe.WithRelease, m.Recipe.WithExtend = f.value, f.acquire, f.release, f.extend
	}
	if run {
		var err error
		if req.compare != nil {
			m.Compare, err = s.labCompareView(c, req)
		} else {
			var rep labReportJSON
			if rep, err = s.labCheck(c, req); err == nil {
				m.Report = reportView(rep)
			}
		}
		switch {
		case err == nil:
		default:
			// A recipe that cannot run, or a check refused by the
			// limits, is said above the form; the rest is the error page.
			code, m.Error = classify(err)
			if code >= 500 || code == http.StatusNotFound {
				return err
			}
			m.Error = capitalize(m.Error) + "."
			m.ErrorField = labErrorField(err)
		}
	}
	solved := s.solvedSet(c)
	for _, ch := range lab.Challenges() {
		v := labChallengeView(ch, solved[ch.ID])
		if ch.ID == req.Challenge {
			cv := v
			m.Challenge = &cv
			if m.Report != nil {
				m.Report.Challenge = &cv
				m.Report.Unsaved = m.Report.Passed && !v.Solved
			}
		}
		if v.Solved {
			m.Solved++
		}
		m.Challenges = append(m.Challenges, v)
	}
	if c.QueryParam("fragment") == "result" {
		return render(c, code, views.LabResult(m))
	}
	return render(c, code, views.LabFullPage(m))
}

// labErrorField is the recipe part a refusal names: the part of the line
// to blame, or the part a message such as "recipe: acquire needs at least
// one line" starts with.
func labErrorField(err error) string {
	var le *lab.LineError
	if errors.As(err, &le) {
		return le.Part
	}
	msg := strings.TrimPrefix(err.Error(), "recipe: ")
	for _, f := range []string{"acquire", "release", "extend"} {
		if strings.HasPrefix(msg, f) {
			return f
		}
	}
	return ""
}

func labChallengeView(ch lab.Challenge, solved bool) views.LabChallenge {
	v := views.LabChallenge{
		ID: ch.ID, Title: ch.Title, Goal: ch.Goal, Property: string(ch.Property),
		PropertyTitle: propertyInfo(ch.Property).Title, Hint: ch.Hint, Solved: solved,
		Href: "/lab?challenge=" + url.QueryEscape(ch.ID), Level: ch.Level,
	}
	for _, l := range lab.Levels() {
		if l.N == ch.Level {
			v.LevelTitle, v.LevelGoal = l.Title, l.Goal
		}
	}
	return v
}

// labRecipeView is the recipe and fault model as the form shows them.
func labRecipeView(req labCheckRequest) views.LabRecipe {
	r := req.Recipe
	v := views.LabRecipe{
		Acquire: strings.Join(r.Acquire, "\n"), Release: strings.Join(r.Release, "\n"),
		Extend: strings.Join(r.Extend, "\n"), Fencing: r.Fencing, Nodes: max(r.Nodes, 1), NodeCounts: lab.NodeCounts,
	}
	if r.Quorum > 0 {
		v.Quorum = strconv.Itoa(r.Quorum)
	}
	decide := func(d *lab.Decide) (string, string) {
		if d == nil {
			return "", ""
		}
		return strconv.Itoa(d.Line), d.Reply
	}
	v.TakenLine, v.TakenReply = decide(r.TakenWhen)
	v.RenewedLine, v.RenewedReply = decide(r.RenewedWhen)
	v.ReleasedLine, v.ReleasedReply = decide(r.ReleasedWhen)
	if t := r.TokenFrom; t != nil {
		v.TokenLine, v.TokenElem = strconv.Itoa(t.Line), strconv.Itoa(t.Element)
	}
	m := lab.DefaultModel()
	if req.Model != nil {
		m = *req.Model
	}
	if ch, err := lab.ChallengeByID(req.Challenge); err == nil {
		v.ModelFixed = true
		m = lab.DefaultModel()
		if ch.Model != nil {
			m = *ch.Model
		}
		v.ModelText = "This challenge is judged under the default fault model. " + m.Text()
		if ch.Model != nil {
			v.ModelText = "This challenge is judged under its own fault model. " + m.Text()
		}
		if ch.ModelWhy != "" {
			v.ModelText += " " + ch.ModelWhy
		}
	}
	v.LongStalls, v.Combine, v.ClockJumps, v.Restarts = m.LongStalls, m.Combine, m.ClockJumps, m.Restarts
	return v
}

// labRunJSON is a counterexample as the race's player reads a run: the
// fields of the race API's answer (raceJSON) that it draws and plays.
type labRunJSON struct {
	ID       string            `json:"id"`
	Title    string            `json:"title"`
	Nodes    int               `json:"nodes"`
	Params   lab.RunParams     `json:"params"`
	Events   []raceEventJSON   `json:"events"`
	Outcomes []raceOutcomeJSON `json:"outcomes"`
}

// counterexampleView is a schedule as the page shows and plays it;
// title names it in the drawing.
func counterexampleView(title string, cx *labCounterexampleJSON) *views.LabCounterexample {
	cv := &views.LabCounterexample{Seed: cx.Seed, Link: cx.Link, Faults: cx.Faults, Summary: cx.Summary, Run: labRun(title, cx)}
	for _, e := range cx.Events {
		cv.Events = append(cv.Events, views.RaceEvent{TMS: e.TMS, Actor: e.Actor, Kind: string(e.Kind), Text: e.Text})
	}
	for _, o := range cx.Outcomes {
		cv.Outcomes = append(cv.Outcomes, views.RaceOutcome{ID: o.Outcome, Label: o.Label, AtMS: o.TMS, Text: o.Text})
	}
	return cv
}

// labRun is the run the page plays for a schedule called title.
func labRun(title string, cx *labCounterexampleJSON) labRunJSON {
	return labRunJSON{
		ID: "lab", Title: title, Nodes: cx.Nodes,
		Params: lab.RunParams{TTLMS: cx.TTLMS, Fencing: cx.Fencing}, Events: cx.Events, Outcomes: cx.Outcomes,
	}
}

func reportView(rep labReportJSON) *views.LabReport {
	v := &views.LabReport{
		Schedules: rep.Schedules, Passed: rep.Passed != nil && *rep.Passed, JustSolved: rep.JustSolved, NotSaved: rep.NotSaved, Link: rep.Link,
		Works: rep.Works, WorksText: rep.WorksText, Summary: rep.Summary, ModelText: rep.ModelText, PassText: rep.PassText,
	}
	for _, p := range rep.Properties {
		pv := views.LabProperty{
			ID: p.ID, Title: p.Title, Description: p.Description, Status: p.Status, Holds: p.Holds, Explored: p.Explored, Note: p.Note,
			Focus: p.ID == rep.ChallengeProperty,
		}
		if cx := p.Counterexample; cx != nil {
			pv.Counterexample = counterexampleView("the counterexample to "+p.ID, cx)
		}
		v.Properties = append(v.Properties, pv)
	}
	return v
}

// labLibraryJSON is one entry of GET /api/lab/library: a real library's
// lock as a recipe, where it comes from, how it differs, and the verdicts
// a check of it finds (package lab's LibraryEntry).
type labLibraryJSON struct {
	ID       string        `json:"id"`
	Name     string        `json:"name"`
	Library  string        `json:"library"`
	Language string        `json:"language"`
	Source   string        `json:"source"`
	Commit   string        `json:"commit"`
	Recipe   labRecipeJSON `json:"recipe"`
	// Model is the fault model the entry is checked under, ModelWhy why
	// it is not the default (empty when it is).
	Model       lab.Model        `json:"model"`
	ModelWhy    string           `json:"model_why,omitempty"`
	Differences []string         `json:"differences"`
	Verdicts    []labVerdictJSON `json:"verdicts"`
	// Load is the lab page with the entry in the editor; LoadedText what
	// the page says once it is there.
	Load       string `json:"load"`
	LoadedText string `json:"loaded_text"`
}

// labVerdictJSON is what a check of an entry finds for one property, and
// the published text its reasoning comes from.
type labVerdictJSON struct {
	Property string        `json:"property"`
	Title    string        `json:"title"`
	Status   string        `json:"status"`
	Why      string        `json:"why"`
	Source   lab.Reference `json:"source"`
}

func (s *Server) handleLabLibrary(c echo.Context) error {
	out := []labLibraryJSON{}
	for _, e := range lab.Library() {
		lj := labLibraryJSON{
			ID: e.ID, Name: e.Name, Library: e.Library, Language: e.Language, Source: e.Source, Commit: e.Commit,
			Recipe: recipeToJSON(e.Recipe), Model: e.CheckModel(), ModelWhy: e.ModelWhy, Differences: nonNil(e.Differences),
			Verdicts: []labVerdictJSON{}, Load: labLibraryHref(e.ID), LoadedText: e.LoadedText(),
		}
		for _, v := range e.Verdicts {
			ref, _ := lab.ReferenceByID(v.Source)
			lj.Verdicts = append(lj.Verdicts, labVerdictJSON{Property: string(v.Property), Title: propertyInfo(v.Property).Title, Status: v.Status, Why: v.Why, Source: ref})
		}
		out = append(out, lj)
	}
	return c.JSON(http.StatusOK, out)
}

// labLibraryHref is the lab page with a gallery entry in the editor.
func labLibraryHref(id string) string { return "/lab?library=" + url.QueryEscape(id) }

// labLibraryEntry reads ?library=ID: the entry, or a 404 naming the id.
func labLibraryEntry(id string) (lab.LibraryEntry, error) {
	e, ok := lab.LibraryByID(id)
	if !ok {
		return e, echo.NewHTTPError(http.StatusNotFound, fmt.Sprintf("library = %q: the gallery has no such entry (GET /api/lab/library lists them)", id))
	}
	return e, nil
}

// labLibraryViews are the gallery's entries as the page shows them;
// loaded is the one in the editor ("" for none).
func labLibraryViews(loaded string) []views.LabLibraryEntry {
	var out []views.LabLibraryEntry
	for _, e := range lab.Library() {
		v := views.LabLibraryEntry{
			ID: e.ID, Name: e.Name, Library: e.Library, Language: e.Language, Nodes: max(e.Recipe.Nodes, 1), Source: e.Source, ShortCommit: e.ShortCommit(),
			Href: labLibraryHref(e.ID), Differences: e.Differences, ModelText: e.ModelText(), Current: e.ID == loaded,
		}
		for _, vd := range e.Verdicts {
			ref, _ := lab.ReferenceByID(vd.Source)
			v.Verdicts = append(v.Verdicts, views.LabVerdict{
				Property: string(vd.Property), Status: vd.Status, Words: lab.StatusWords(vd.Status), Why: vd.Why,
				RefTitle: ref.Title, RefAuthor: ref.Author, RefURL: ref.URL,
			})
		}
		out = append(out, v)
	}
	return out
}
