package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/locklab/locklab/race"
	"github.com/locklab/locklab/web/views"
	"github.com/locklab/locklab/workshop"
)

// Workshop polls over HTTP. The instructor's side (open, read, reveal,
// the presenter view) is under /admin/workshops/{code}; the learner's side
// is /api/workshop (JSON, server-sent events) and /workshop (the same as
// a page with forms, for browsers without JavaScript). The rules are the
// workshop package's; this file turns requests into a PollSpec from the
// race package and results into JSON.

// joinedCookie tells the learner pages' script that this browser joined a
// workshop, so that it asks about polls; the workshop cookie itself is
// HttpOnly. It holds no secret: the server checks the workshop cookie.
const joinedCookie = "locklab_ws_joined"

// openPollRequest is the body of POST /admin/workshops/{code}/polls:
// a race scenario, its settings as the race API takes them (numbers,
// booleans or strings under the race parameter names), and faults in the
// race's KIND:TARGET:AT_MS:ARG form.
type openPollRequest struct {
	Scenario string         `json:"scenario"`
	Params   map[string]any `json:"params"`
	Faults   []string       `json:"faults"`
}

// pollQuery turns the request into the race query it asks for.
func (r openPollRequest) query() (url.Values, error) {
	q := url.Values{}
	for k, v := range r.Params {
		switch v := v.(type) {
		case string:
			q.Set(k, v)
		case bool:
			q.Set(k, strconv.FormatBool(v))
		case float64:
			q.Set(k, strconv.FormatFloat(v, 'f', -1, 64))
		case []any:
			for _, x := range v {
				q.Add(k, fmt.Sprint(x))
			}
		default:
			return nil, echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("params.%s: want a number, a boolean or a string", k))
		}
	}
	for _, f := range r.Faults {
		q.Add(race.ParamFault, f)
	}
	return q, nil
}

// pollSpec runs the race the instructor asked for (the server's run, so
// the outcomes are its own) and describes it for a poll.
func (s *Server) pollSpec(c echo.Context, scenario string, q url.Values) (workshop.PollSpec, error) {
	info, tl, err := s.runRace(c, scenario, q)
	if err != nil {
		return workshop.PollSpec{}, err
	}
	sp := workshop.PollSpec{
		Scenario: info.ID, Title: info.Title, Query: raceRunQuery(info.ID, tl.Params),
		Setup: raceSetup(info, tl.Params), Outcomes: outcomeNames(tl.OutcomeSet()),
	}
	for _, o := range race.Outcomes() {
		sp.Choices = append(sp.Choices, workshop.PollChoice{ID: string(o), Label: o.Label()})
	}
	return sp, nil
}

// pollJSON is a poll as the instructor's pages and API read it.
type pollJSON struct {
	ID       string                `json:"id"`
	Number   int                   `json:"number,omitempty"`
	Scenario string                `json:"scenario"`
	Title    string                `json:"title"`
	Setup    []string              `json:"setup"`
	Choices  []workshop.PollChoice `json:"choices"`
	Answered int                   `json:"answered"`
	Joined   int                   `json:"joined"`
	Counts   map[string]int        `json:"counts"` // every choice, zero included
	Revealed bool                  `json:"revealed"`
	Outcomes []string              `json:"outcomes,omitempty"` // after the reveal
	Run      string                `json:"run"`                // the run on the presenter view of the race
}

func newPollJSON(r workshop.PollResult) pollJSON {
	out := pollJSON{
		ID: r.ID, Number: r.Number, Scenario: r.Scenario, Title: r.Title, Setup: r.Setup, Choices: r.Choices,
		Answered: r.Answered, Joined: r.Joined, Counts: map[string]int{}, Revealed: r.Revealed(),
		Run: "/race/present?" + r.Query,
	}
	for _, c := range r.Choices {
		out.Counts[c.ID] = r.Counts[c.ID]
	}
	if r.Revealed() {
		out.Outcomes = r.Outcomes
	}
	return out
}

// wantsJSON tells an API call from a form: forms are answered with a
// redirect.
func wantsJSON(c echo.Context) bool {
	return strings.HasPrefix(c.Request().Header.Get(echo.HeaderContentType), echo.MIMEApplicationJSON)
}

// handleOpenPoll opens a poll: JSON (201 {"id"}) or the dashboard's form,
// whose "run" field may hold the address of a run set up on /race.
func (s *Server) handleOpenPoll(c echo.Context) error {
	code := workshop.NormalizeCode(c.Param("code"))
	ctx := c.Request().Context()
	var scenario string
	var q url.Values
	if wantsJSON(c) {
		var req openPollRequest
		if err := decodeJSON(c, &req); err != nil {
			return err
		}
		var err error
		if q, err = req.query(); err != nil {
			return err
		}
		scenario = req.Scenario
	} else {
		q = runLinkQuery(c.FormValue("run"))
		scenario = c.FormValue("scenario")
		if s := q.Get(race.ParamScenario); s != "" {
			scenario = s
		}
		q.Del(race.ParamScenario)
	}
	if _, err := s.workshops.Get(ctx, code); err != nil {
		return err
	}
	sp, err := s.pollSpec(c, scenario, q)
	if err != nil {
		return err
	}
	p, err := s.workshops.OpenPoll(ctx, code, sp, time.Now())
	if err != nil {
		return err
	}
	s.metrics.countWorkshop(eventPollOpened)
	if wantsJSON(c) {
		return c.JSON(http.StatusCreated, map[string]string{"id": p.ID})
	}
	return c.Redirect(http.StatusSeeOther, "/admin/workshops/"+url.PathEscape(code)+"#poll")
}

// runLinkQuery reads the settings from the address of a race run (a
// /race or /race/present link, or only its query); anything else gives
// no settings.
func runLinkQuery(link string) url.Values {
	link = strings.TrimSpace(link)
	if link == "" {
		return url.Values{}
	}
	if _, rest, ok := strings.Cut(link, "?"); ok {
		link = rest
	}
	link, _, _ = strings.Cut(link, "#")
	q, err := url.ParseQuery(link)
	if err != nil {
		return url.Values{}
	}
	race.DropFormFields(q)
	return q
}

func (s *Server) handlePoll(c echo.Context) error {
	code := workshop.NormalizeCode(c.Param("code"))
	r, err := s.workshops.Poll(c.Request().Context(), code, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newPollJSON(r))
}

// handleRevealPoll reveals a poll; a form goes back to the page it came
// from (the presenter view or the dashboard).
func (s *Server) handleRevealPoll(c echo.Context) error {
	code := workshop.NormalizeCode(c.Param("code"))
	ctx := c.Request().Context()
	id := c.Param("id")
	if err := s.workshops.Reveal(ctx, code, id, time.Now()); err != nil {
		return err
	}
	s.metrics.countWorkshop(eventPollRevealed)
	if wantsJSON(c) || c.FormValue("back") == "" {
		r, err := s.workshops.Poll(ctx, code, id)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, newPollJSON(r))
	}
	back := "/admin/workshops/" + url.PathEscape(code)
	if c.FormValue("back") == "present" {
		back += "/present"
	}
	return c.Redirect(http.StatusSeeOther, back+"#poll")
}

// The learner's side.

// learnerPollJSON is a poll as a participant sees it: no outcomes before
// the reveal; after it, the outcomes and the prediction judged outcome by
// outcome.
type learnerPollJSON struct {
	ID         string                `json:"id"`
	Scenario   string                `json:"scenario"`
	Title      string                `json:"title"`
	Setup      []string              `json:"setup"`
	Choices    []workshop.PollChoice `json:"choices"`
	Revealed   bool                  `json:"revealed"`
	Prediction []string              `json:"prediction"`
	Outcomes   []string              `json:"outcomes,omitempty"`
	Judged     []raceJudgementJSON   `json:"judged,omitempty"`
	Right      bool                  `json:"right"` // exactly the outcomes that happened
	Run        string                `json:"run,omitempty"`
}

// learnerWorkshopJSON is GET /api/workshop: the workshop the learner
// joined and its poll (null when none is open).
type learnerWorkshopJSON struct {
	Code     string           `json:"code"`
	Title    string           `json:"title"`
	Nickname string           `json:"nickname"`
	Running  bool             `json:"running"`
	Poll     *learnerPollJSON `json:"poll"`
}

func newLearnerJSON(st workshop.LearnerState) learnerWorkshopJSON {
	out := learnerWorkshopJSON{Code: st.Workshop.Code, Title: st.Workshop.Title, Nickname: st.Nickname, Running: st.Workshop.Running()}
	if st.Poll == nil {
		return out
	}
	p := st.Poll
	lp := &learnerPollJSON{
		ID: p.ID, Scenario: p.Scenario, Title: p.Title, Setup: p.Setup, Choices: p.Choices,
		Revealed: p.Revealed(), Prediction: st.Prediction, Right: st.Right(),
	}
	if lp.Prediction == nil {
		lp.Prediction = []string{}
	}
	if p.Revealed() {
		lp.Outcomes = p.Outcomes
		lp.Run = "/race?" + p.Query
		for _, j := range st.Judged() {
			lp.Judged = append(lp.Judged, raceJudgementJSON{Judgement: j, Right: j.Right()})
		}
	}
	out.Poll = lp
	return out
}

// learnerState is the state of the workshop this browser joined; a
// browser that joined none has not joined the one asked about.
func (s *Server) learnerState(c echo.Context) (workshop.LearnerState, error) {
	code, _ := s.cookie(c, workshopCookie)
	if code == "" {
		return workshop.LearnerState{}, fmt.Errorf("workshop: %w", workshop.ErrNotJoined)
	}
	return s.workshops.Learner(c.Request().Context(), workshop.NormalizeCode(code), s.learnerID(c))
}

// handleLearnerWorkshop is GET /api/workshop.
func (s *Server) handleLearnerWorkshop(c echo.Context) error {
	st, err := s.learnerState(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newLearnerJSON(st))
}

// handleLearnerPoll is GET /api/workshop/poll: the open (or just
// revealed) poll, or 204.
func (s *Server) handleLearnerPoll(c echo.Context) error {
	st, err := s.learnerState(c)
	if err != nil {
		return err
	}
	out := newLearnerJSON(st)
	if out.Poll == nil {
		return c.NoContent(http.StatusNoContent)
	}
	return c.JSON(http.StatusOK, out.Poll)
}

// predictRequest is the body of POST /api/workshop/poll/{id}/predict.
type predictRequest struct {
	Prediction stringOrMany `json:"prediction"`
}

// predict records the learner's prediction on poll id.
func (s *Server) predict(c echo.Context, id string, prediction []string) (workshop.LearnerState, error) {
	joined, _ := s.cookie(c, workshopCookie)
	learner := s.learnerID(c)
	if joined == "" || learner == "" {
		return workshop.LearnerState{}, fmt.Errorf("workshop: predict: %w", workshop.ErrNotJoined)
	}
	code := workshop.NormalizeCode(joined)
	if err := s.workshops.Predict(c.Request().Context(), code, id, learner, prediction, time.Now()); err != nil {
		return workshop.LearnerState{}, err
	}
	s.metrics.countWorkshop(eventPrediction)
	return s.workshops.Learner(c.Request().Context(), code, learner)
}

func (s *Server) handlePredict(c echo.Context) error {
	var req predictRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	st, err := s.predict(c, c.Param("id"), req.Prediction)
	if err != nil {
		return err
	}
	out := newLearnerJSON(st)
	return c.JSON(http.StatusOK, out.Poll)
}

// handlePredictForm is the poll's form: checkboxes named outcome. Sent
// without JavaScript it goes back to /workshop; sent by
// workshop-learner.js (?fragment=poll or banner) it is answered with the
// poll as that fragment renders it.
func (s *Server) handlePredictForm(c echo.Context) error {
	form, err := c.FormParams()
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "reading the form: "+err.Error())
	}
	_, err = s.predict(c, c.Param("id"), form["outcome"])
	pickOne := errors.Is(err, workshop.ErrBadInput) && len(form["outcome"]) == 0
	// After the reveal the page shows the outcomes, which says why the
	// prediction did not count better than an error page.
	if err != nil && !pickOne && !errors.Is(err, workshop.ErrRevealed) {
		return err
	}
	if frag := learnerFragment(c); frag != nil {
		st, err := s.learnerState(c)
		if err != nil {
			return err
		}
		code := http.StatusOK
		if pickOne {
			code = http.StatusBadRequest
		}
		return render(c, code, frag(s.learnerPage(st, pickOne)))
	}
	if pickOne {
		return c.Redirect(http.StatusSeeOther, "/workshop?pick=1#poll")
	}
	return c.Redirect(http.StatusSeeOther, "/workshop#poll")
}

// learnerFragment is the part of a learner's page that the request's
// ?fragment= asks for (workshop-learner.js asks, to update a page in
// place), or nil for the whole page.
func learnerFragment(c echo.Context) func(views.LearnerPage) templ.Component {
	switch c.QueryParam("fragment") {
	case "poll":
		return views.LearnerPollSlot
	case "banner":
		return views.WorkshopBanner
	}
	return nil
}

// handleLeaveWorkshop forgets which workshop this browser joined; the
// workshop keeps what the learner did.
func (s *Server) handleLeaveWorkshop(c echo.Context) error {
	s.setCookie(c, &http.Cookie{Name: workshopCookie, Value: "", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode})
	s.setCookie(c, &http.Cookie{Name: joinedCookie, Value: "", MaxAge: -1, SameSite: http.SameSiteLaxMode})
	return c.Redirect(http.StatusSeeOther, "/?left=1")
}

// handleLearnerEvents streams the learner's workshop state as server-sent
// events ("state", the JSON of GET /api/workshop) whenever it changes. It
// reads one small record per check (the learner's membership, the current
// poll and their prediction), whatever the size of the workshop.
func (s *Server) handleLearnerEvents(c echo.Context) error {
	if _, err := s.learnerState(c); err != nil {
		return err
	}
	code, _ := s.cookie(c, workshopCookie)
	code = workshop.NormalizeCode(code)
	// The learner's state is read again only when the workshop's version
	// moved, or every sseReread for what only this learner changed (their
	// prediction or nickname, from another tab): a room of streams
	// waiting for the next poll costs a version read a moment per
	// replica, not a state read a second per learner.
	var version string
	var readAt time.Time
	var last []sseEvent
	return s.stream(c, s.pollEvery, func() ([]sseEvent, bool) {
		ctx := c.Request().Context()
		v, err := s.workshops.Version(ctx, code)
		if err == nil && v != "" && v == version && time.Since(readAt) < sseReread {
			return last, true
		}
		st, err := s.learnerState(c)
		if err != nil {
			if ctx.Err() == nil {
				s.failures.Warn("workshop learner state", "error", err)
			}
			version = ""
			// A learner who left or a workshop that is gone ends the
			// stream; a store that is down for a moment does not.
			return nil, !errors.Is(err, workshop.ErrNotJoined) && !errors.Is(err, workshop.ErrNotFound)
		}
		b, _ := json.Marshal(newLearnerJSON(st))
		version, readAt, last = v, time.Now(), []sseEvent{{"state", string(b)}}
		return last, true
	})
}

// sseReread is how long a learner's event stream goes at most without
// reading their state, however still the workshop's version.
const sseReread = 5 * time.Second

// sseContentType is an event stream's: the metrics tell streams from
// other requests by it.
const sseContentType = "text/event-stream"

// sseEvent is one server-sent event: its name and its data.
type sseEvent struct{ name, data string }

// stream writes server-sent events: next says what to send (each event
// is sent only when its data differs from the last sent under its name),
// or false to end the stream. It checks every interval, and writes a
// comment now and then so that proxies keep the connection. A stream
// beyond the caps of its learner, its address or the server is refused
// before it starts (openStream). When the server shuts down
// (CloseStreams), the stream tells its page when to reconnect and ends.
func (s *Server) stream(c echo.Context, every time.Duration, next func() ([]sseEvent, bool)) error {
	done, err := s.openStream(c)
	if err != nil {
		return err
	}
	defer done()
	ctx := c.Request().Context()
	w := c.Response()
	w.Header().Set(echo.HeaderContentType, sseContentType)
	w.Header().Set("X-Accel-Buffering", "no")
	// The server's WriteTimeout would end the stream; each write gets its
	// own deadline instead, so a client that stops reading is still dropped.
	rc := http.NewResponseController(w.Writer)
	if !s.open.add(rc) {
		w.WriteHeader(http.StatusOK)
		sayReconnect(w, rc)
		return nil
	}
	defer s.open.remove(rc)
	w.WriteHeader(http.StatusOK)
	w.Flush()
	tick := time.NewTicker(every)
	defer tick.Stop()
	last := map[string]string{}
	for beats := 1; ; beats++ {
		if !s.open.extend(rc, time.Now().Add(sseWriteTimeout)) {
			sayReconnect(w, rc)
			return nil
		}
		events, ok := next()
		if !ok {
			return nil
		}
		sent := false
		for _, ev := range events {
			if old, seen := last[ev.name]; seen && old == ev.data {
				continue
			}
			last[ev.name] = ev.data
			if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.name, ev.data); err != nil {
				return nil
			}
			sent = true
		}
		if beats%15 == 0 {
			if _, err := fmt.Fprint(w, ": still here\n\n"); err != nil {
				return nil
			}
			sent = true
		}
		if sent {
			w.Flush()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.open.closing:
			sayReconnect(w, rc)
			return nil
		case <-tick.C:
		}
	}
}

// currentPollJSON is the dashboard's and presenter view's "poll" event:
// the current poll, or null. It reads the poll's own counters only.
func (s *Server) currentPollJSON(c echo.Context, code string) (string, error) {
	r, err := s.workshops.Poll(c.Request().Context(), code, "")
	if errors.Is(err, workshop.ErrNoPoll) {
		return "null", nil
	}
	if err != nil {
		return "", err
	}
	b, _ := json.Marshal(newPollJSON(r))
	return string(b), nil
}

// pollView is a poll for the dashboard (back "") or the presenter view
// (back "present").
func pollView(code string, r workshop.PollResult, back string) *views.PollView {
	v := &views.PollView{
		ID: r.ID, Number: r.Number, Title: r.Title, Setup: r.Setup, Answered: r.Answered, Joined: r.Joined,
		Revealed: r.Revealed(), RunURL: "/race/present?" + r.Query, BackTo: back,
		RevealAction: "/admin/workshops/" + url.PathEscape(code) + "/polls/" + url.PathEscape(r.ID) + "/reveal",
	}
	if back == "" {
		v.BackTo = "dashboard"
	}
	for _, c := range r.Choices {
		v.Choices = append(v.Choices, views.PollChoiceView{ID: c.ID, Label: c.Label, Count: r.Counts[c.ID], Happened: r.Revealed() && r.Happened(c.ID)})
	}
	return v
}

// currentPoll is the workshop's current poll, numbered, or nil.
func (s *Server) currentPoll(c echo.Context, code string) (*workshop.PollResult, error) {
	r, err := s.workshops.Poll(c.Request().Context(), code, "")
	if errors.Is(err, workshop.ErrNoPoll) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	// The number is the poll's place among all of them; reading them is
	// worth it on a page load, not on every event.
	if rs, err := s.workshops.Polls(c.Request().Context(), code); err == nil {
		for _, x := range rs {
			if x.ID == r.ID {
				r.Number = x.Number
			}
		}
	}
	return &r, nil
}

// handleWorkshopPresent is the presenter view: the join code and the
// current poll; after the reveal, the poll's run to play.
func (s *Server) handleWorkshopPresent(c echo.Context) error {
	code := workshop.NormalizeCode(c.Param("code"))
	w, err := s.workshops.Get(c.Request().Context(), code)
	if err != nil {
		return err
	}
	m := views.PresentPage{
		Page: s.page("Presenter view · "+w.Title, "", "admin"), Code: w.Code, Title: w.Title,
		JoinLink: s.origin(c.Request()) + "/join/" + w.Code, PresentCSS: s.assets.href("race-present.css"),
	}
	m.Page.Scripts = nil // not the learner pages' script
	r, err := s.currentPoll(c, code)
	if err != nil {
		return err
	}
	if r != nil {
		m.Poll = pollView(code, *r, "present")
		if r.Revealed() {
			q, _ := url.ParseQuery(r.Query)
			rv, _ := s.raceView(c, r.Scenario, q, 2)
			m.Race = &rv
			m.Page.Scripts = append(m.Page.Scripts, s.assets.href("race.js"))
		}
	}
	m.Page.Scripts = append(m.Page.Scripts, s.assets.href("workshop.js"))
	return render(c, http.StatusOK, views.PresentPageView(m))
}

// learnerPoll is a participant's poll for their page.
func learnerPoll(st workshop.LearnerState) *views.LearnerPoll {
	if st.Poll == nil {
		return nil
	}
	p := st.Poll
	v := &views.LearnerPoll{ID: p.ID, Title: p.Title, Setup: p.Setup, Revealed: p.Revealed(), Predicted: len(st.Prediction) > 0, AllRight: st.Right()}
	if p.Revealed() {
		v.RunURL = "/race?" + p.Query
	}
	for _, c := range p.Choices {
		v.Choices = append(v.Choices, views.LearnerChoice{ID: c.ID, Label: c.Label,
			Picked: slices.Contains(st.Prediction, c.ID), Happened: p.Revealed() && p.Happened(c.ID)})
	}
	return v
}

// handleLearnerPage is /workshop: whom the learner joined as, a way to
// leave, and the poll with a form. A browser that joined no workshop is
// sent to the join form. ?fragment=poll is the page's poll alone, and
// ?fragment=banner the banner other pages show; a browser that joined
// none gets a 404 for either.
func (s *Server) handleLearnerPage(c echo.Context) error {
	frag := learnerFragment(c)
	st, err := s.learnerState(c)
	if frag == nil && (errors.Is(err, workshop.ErrNotJoined) || errors.Is(err, workshop.ErrNotFound)) {
		return c.Redirect(http.StatusSeeOther, "/join")
	}
	if err != nil {
		return err
	}
	m := s.learnerPage(st, c.QueryParam("pick") != "")
	if frag != nil {
		return render(c, http.StatusOK, frag(m))
	}
	return render(c, http.StatusOK, views.LearnerPageView(m))
}

// learnerPage is the model of a learner's workshop page and its parts.
func (s *Server) learnerPage(st workshop.LearnerState, pickOne bool) views.LearnerPage {
	return views.LearnerPage{
		Page: s.page(st.Workshop.Title, "", ""), Code: st.Workshop.Code, Title: st.Workshop.Title,
		Nickname: st.Nickname, Running: st.Workshop.Running(), Poll: learnerPoll(st), PickOne: pickOne,
	}
}
