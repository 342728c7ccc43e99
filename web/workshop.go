package web

import (
	"context"
	"crypto/rand"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/locklab/locklab/quiz"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/web/views"
)

// WorkshopStore keeps workshops and their results.
type WorkshopStore interface {
	CreateWorkshop(ctx context.Context, w store.Workshop) error
	Workshop(ctx context.Context, code string) (store.Workshop, error)
	Workshops(ctx context.Context) ([]store.Workshop, error)
	EndWorkshop(ctx context.Context, code string, at time.Time) error
	JoinWorkshop(ctx context.Context, code, learner, nickname string, at time.Time) error
	RecordWorkshopEvent(ctx context.Context, code, learner string, ev store.WorkshopEvent) error
	WorkshopStats(ctx context.Context, code string, activeSince time.Time) (store.WorkshopStats, error)
	WorkshopParticipants(ctx context.Context, code string) ([]store.Participant, error)
}

// workshopCookie remembers which workshop a learner joined.
const workshopCookie = "locklab_workshop"

// activeWindow is how recently a participant must have done something to
// count as active on the dashboard.
const activeWindow = 5 * time.Minute

// codeAlphabet leaves out letters and digits that are easy to confuse.
const codeAlphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"

func newWorkshopCode() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = codeAlphabet[int(b[i])%len(codeAlphabet)]
	}
	return string(b)
}

func normalizeCode(s string) string {
	return strings.ToUpper(strings.TrimSpace(s))
}

// handleAdminHome lists the workshops and starts new ones; it is also the
// sign-in page.
func (s *Server) handleAdminHome(c echo.Context) error {
	if !s.adminEnabled() {
		return echo.NewHTTPError(http.StatusNotFound, "workshop admin is off: set LOCKLAB_ADMIN_TOKEN to turn it on")
	}
	ok, err := s.isAdmin(c)
	if err != nil {
		return err
	}
	if !ok {
		return render(c, http.StatusOK, views.AdminLoginPage(views.AdminLogin{Page: s.page("Instructor sign-in", "", "admin")}))
	}
	list, err := s.workshops.Workshops(c.Request().Context())
	if err != nil {
		return err
	}
	m := views.AdminHome{Page: s.page("Workshops", "", "admin")}
	for _, w := range list {
		m.Workshops = append(m.Workshops, workshopRow(w))
	}
	return render(c, http.StatusOK, views.AdminHomePage(m))
}

func workshopRow(w store.Workshop) views.WorkshopRow {
	r := views.WorkshopRow{Code: w.Code, Title: w.Title, Started: w.StartedAt.UTC().Format("2006-01-02 15:04 UTC"), Running: w.Running()}
	if !w.Running() {
		r.Ended = w.EndedAt.UTC().Format("2006-01-02 15:04 UTC")
	}
	return r
}

func (s *Server) handleStartWorkshop(c echo.Context) error {
	title := strings.TrimSpace(c.FormValue("title"))
	if title == "" {
		title = "Workshop " + time.Now().UTC().Format("2006-01-02")
	}
	ctx := c.Request().Context()
	for range 5 {
		w := store.Workshop{Code: newWorkshopCode(), Title: title, StartedAt: time.Now()}
		err := s.workshops.CreateWorkshop(ctx, w)
		if errors.Is(err, store.ErrExists) {
			continue
		}
		if err != nil {
			return err
		}
		return c.Redirect(http.StatusSeeOther, "/admin/workshops/"+w.Code)
	}
	return errors.New("could not find a free workshop code")
}

func (s *Server) handleEndWorkshop(c echo.Context) error {
	code := normalizeCode(c.Param("code"))
	if err := s.workshops.EndWorkshop(c.Request().Context(), code, time.Now()); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/admin/workshops/"+url.PathEscape(code))
}

// dashboardJSON is what the dashboard shows, sent again whenever it
// changes over server-sent events.
type dashboardJSON struct {
	Code             string         `json:"code"`
	Title            string         `json:"title"`
	Running          bool           `json:"running"`
	Joined           int            `json:"joined"`
	Active           int            `json:"active"`
	Completions      int            `json:"completions"`
	Commands         int            `json:"commands"`
	Races            int            `json:"races"`
	Predictions      int            `json:"predictions"`
	PredictionsRight int            `json:"predictions_right"`
	Questions        []questionStat `json:"questions"`
}

type questionStat struct {
	ID         string       `json:"id"`
	Prompt     string       `json:"prompt"`
	FirstTries int          `json:"first_tries"`
	FirstRight int          `json:"first_right"`
	Answers    int          `json:"answers"`
	Choices    []choiceStat `json:"choices"`
}

type choiceStat struct {
	ID    string `json:"id"`
	Text  string `json:"text"`
	Count int    `json:"count"`
	Right bool   `json:"right"`
}

func (s *Server) dashboard(ctx context.Context, code string) (dashboardJSON, error) {
	st, err := s.workshops.WorkshopStats(ctx, code, time.Now().Add(-activeWindow))
	if err != nil {
		return dashboardJSON{}, err
	}
	d := dashboardJSON{
		Code: st.Workshop.Code, Title: st.Workshop.Title, Running: st.Workshop.Running(),
		Joined: st.Joined, Active: st.Active, Completions: st.Completions, Commands: st.Commands,
		Races: st.Races, Predictions: st.Predictions, PredictionsRight: st.PredictionsRight,
		Questions: []questionStat{},
	}
	course, err := s.content.Course()
	if err != nil {
		return d, err
	}
	for _, l := range course.Lessons() {
		q, err := s.quizzes.Quiz(l.Slug)
		if errors.Is(err, quiz.ErrUnknownTopic) {
			continue // a lesson without a quiz
		}
		if err != nil {
			return d, err
		}
		for _, qn := range q.Questions {
			qs := st.Questions[qn.ID]
			out := questionStat{ID: qn.ID, Prompt: qn.Prompt, FirstTries: qs.FirstTries, FirstRight: qs.FirstRight}
			for _, ch := range qn.Choices {
				n := qs.Choices[ch.ID]
				out.Answers += n
				out.Choices = append(out.Choices, choiceStat{ID: ch.ID, Text: ch.Text, Count: n, Right: qn.IsRight(ch.ID)})
			}
			d.Questions = append(d.Questions, out)
		}
	}
	return d, nil
}

func (s *Server) handleWorkshopDashboard(c echo.Context) error {
	code := normalizeCode(c.Param("code"))
	d, err := s.dashboard(c.Request().Context(), code)
	if err != nil {
		return err
	}
	m := views.Dashboard{
		Page: s.page("Workshop "+d.Code, "", "admin"),
		Code: d.Code, Title: d.Title, Running: d.Running,
		JoinLink: s.origin(c.Request()) + "/join/" + d.Code,
		Tiles: []views.Tile{
			{Key: "joined", Label: "Joined", Value: d.Joined},
			{Key: "active", Label: "Active in the last 5 minutes", Value: d.Active},
			{Key: "completions", Label: "Finished the topic", Value: d.Completions},
			{Key: "commands", Label: "Playground commands", Value: d.Commands},
			{Key: "races", Label: "Races played", Value: d.Races},
			{Key: "predictions_right", Label: "Predictions right", Value: d.PredictionsRight, Of: d.Predictions},
		},
	}
	for _, q := range d.Questions {
		qv := views.QuestionStat{ID: q.ID, Prompt: q.Prompt, FirstTries: q.FirstTries, FirstRight: q.FirstRight, Answers: q.Answers}
		for _, ch := range q.Choices {
			qv.Choices = append(qv.Choices, views.ChoiceStat{ID: ch.ID, Text: ch.Text, Count: ch.Count, Right: ch.Right})
		}
		m.Questions = append(m.Questions, qv)
	}
	m.Page.Scripts = []string{s.assets.href("workshop.js")}
	return render(c, http.StatusOK, views.DashboardPage(m))
}

// sseWriteTimeout bounds each write of the dashboard's event stream.
const sseWriteTimeout = 30 * time.Second

// handleWorkshopEvents streams the dashboard as server-sent events: the
// stats whenever they change (checked every two seconds, from the shared
// store, so every replica sees every learner) and a heartbeat comment.
func (s *Server) handleWorkshopEvents(c echo.Context) error {
	code := normalizeCode(c.Param("code"))
	ctx := c.Request().Context()
	if _, err := s.workshops.Workshop(ctx, code); err != nil {
		return err
	}
	w := c.Response()
	w.Header().Set(echo.HeaderContentType, "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	w.Flush()
	tick := time.NewTicker(s.sseEvery)
	defer tick.Stop()
	// The server's WriteTimeout would end the stream; each write gets its
	// own deadline instead, so a client that stops reading is still dropped.
	rc := http.NewResponseController(w.Writer)
	last, beats := "", 0
	for {
		_ = rc.SetWriteDeadline(time.Now().Add(sseWriteTimeout))
		d, err := s.dashboard(ctx, code)
		if err == nil {
			b, _ := json.Marshal(d)
			if string(b) != last {
				last = string(b)
				if _, err := fmt.Fprintf(w, "event: stats\ndata: %s\n\n", b); err != nil {
					return nil
				}
				w.Flush()
			}
		} else if ctx.Err() == nil {
			s.log.Warn("workshop stats", "code", code, "error", err)
		}
		if beats++; beats%8 == 0 {
			if _, err := fmt.Fprint(w, ": still here\n\n"); err != nil {
				return nil
			}
			w.Flush()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// handleWorkshopCSV exports the results: one row per participant, or per
// question and choice with ?part=questions.
func (s *Server) handleWorkshopCSV(c echo.Context) error {
	code := normalizeCode(c.Param("code"))
	ctx := c.Request().Context()
	var rows [][]string
	name := "workshop-" + code
	if c.QueryParam("part") == "questions" {
		d, err := s.dashboard(ctx, code)
		if err != nil {
			return err
		}
		name += "-questions"
		rows = append(rows, []string{"question", "choice", "right", "answers", "first_tries", "first_right"})
		for _, q := range d.Questions {
			for _, ch := range q.Choices {
				rows = append(rows, []string{q.ID, ch.ID, strconv.FormatBool(ch.Right), strconv.Itoa(ch.Count), strconv.Itoa(q.FirstTries), strconv.Itoa(q.FirstRight)})
			}
		}
	} else {
		ps, err := s.workshops.WorkshopParticipants(ctx, code)
		if err != nil {
			return err
		}
		name += "-participants"
		rows = append(rows, []string{"nickname", "joined_at", "last_active", "answers", "first_try_right", "completed", "commands", "races"})
		for _, p := range ps {
			rows = append(rows, []string{csvSafe(p.Nickname), p.JoinedAt.UTC().Format(time.RFC3339), p.LastActive.UTC().Format(time.RFC3339),
				strconv.Itoa(p.Answers), strconv.Itoa(p.FirstRight), strconv.FormatBool(p.Completed), strconv.Itoa(p.Commands), strconv.Itoa(p.Races)})
		}
	}
	w := c.Response()
	w.Header().Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	w.Header().Set(echo.HeaderContentDisposition, `attachment; filename="`+name+`.csv"`)
	w.WriteHeader(http.StatusOK)
	cw := csv.NewWriter(w)
	_ = cw.WriteAll(rows)
	return cw.Error()
}

// csvSafe keeps a learner's nickname from being read as a formula by a
// spreadsheet.
func csvSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// Learners join with the code or the link.

func (s *Server) handleJoinForm(c echo.Context) error {
	code := normalizeCode(c.Param("code"))
	if code == "" {
		code = normalizeCode(c.QueryParam("code"))
	}
	m := views.Join{Page: s.page("Join a workshop", "", ""), Code: code}
	// A link to a workshop that does not exist is a page that does not
	// exist: 404, with the form to type the right code.
	status := http.StatusOK
	if code != "" {
		w, err := s.workshops.Workshop(c.Request().Context(), code)
		switch {
		case errors.Is(err, store.ErrNotFound):
			m.Error = "There is no workshop with the code " + code + ". Check it with your instructor."
			status = http.StatusNotFound
		case err != nil:
			return err
		case !w.Running():
			m.Error = "The workshop " + w.Title + " has ended."
		default:
			m.Title = w.Title
		}
	}
	return render(c, status, views.JoinPage(m))
}

func (s *Server) handleJoin(c echo.Context) error {
	code := normalizeCode(c.FormValue("code"))
	nickname := strings.TrimSpace(c.FormValue("nickname"))
	id := s.ensureLearner(c)
	err := s.workshops.JoinWorkshop(c.Request().Context(), code, id, nickname, time.Now())
	if err != nil {
		m := views.Join{Page: s.page("Join a workshop", "", ""), Code: code, Nickname: nickname}
		switch {
		case errors.Is(err, store.ErrNotFound):
			m.Error = "There is no workshop with the code " + code + ". Check it with your instructor."
		case errors.Is(err, store.ErrEnded):
			m.Error = "That workshop has ended."
		case errors.Is(err, store.ErrFull):
			m.Error = "That workshop is full: it has as many participants as it may have. Ask your instructor to start another one."
		case errors.Is(err, store.ErrBadInput):
			m.Error = "Please use a shorter nickname (40 characters at most)."
		default:
			return err
		}
		return render(c, http.StatusBadRequest, views.JoinPage(m))
	}
	s.setCookie(c, &http.Cookie{Name: workshopCookie, Value: code, MaxAge: 24 * 3600, HttpOnly: true, SameSite: http.SameSiteLaxMode})
	return c.Redirect(http.StatusSeeOther, "/topics/distributed-locks?joined=1")
}

// workshopEvent records what a learner did for their workshop's
// dashboard. The learner must never notice a failure here.
func (s *Server) workshopEvent(c echo.Context, ev store.WorkshopEvent) {
	if s.workshops == nil {
		return
	}
	ck, err := s.cookie(c, workshopCookie)
	id := s.learnerID(c)
	if err != nil || ck.Value == "" || id == "" {
		return
	}
	ev.At = time.Now()
	if err := s.workshops.RecordWorkshopEvent(c.Request().Context(), normalizeCode(ck.Value), id, ev); err != nil {
		s.log.Warn("workshop event", "kind", ev.Kind, "error", err)
	}
}

// raceDoneRequest is what race.js reports when a run has been played to
// the end: the scenario and settings, and the learner's prediction.
type raceDoneRequest struct {
	Scenario   string            `json:"scenario"`
	Params     map[string]string `json:"params"`
	Prediction string            `json:"prediction"`
}

// handleRaceDone counts a race played, and whether the prediction was
// right; the server computes the verdict itself.
func (s *Server) handleRaceDone(c echo.Context) error {
	var req raceDoneRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	q := make(map[string][]string, len(req.Params))
	for k, v := range req.Params {
		q[k] = []string{v}
	}
	_, tl, err := s.runRace(c, req.Scenario, q)
	if err != nil {
		return err
	}
	verdict := verdictName(tl.Verdict)
	ev := store.WorkshopEvent{Kind: store.EventRace, Scenario: req.Scenario}
	if req.Prediction != "" {
		ev.Predicted, ev.PredictionRight = true, req.Prediction == verdict
	}
	s.workshopEvent(c, ev)
	return c.JSON(http.StatusOK, map[string]any{"verdict": verdict, "prediction_right": ev.PredictionRight})
}

// answered records a quiz answer, and the completion it may bring.
func (s *Server) answered(c echo.Context, topic, question, choice string, correct bool, p quiz.Progress) {
	s.workshopEvent(c, store.WorkshopEvent{Kind: store.EventAnswer, Topic: topic, Question: question, Choice: choice, Correct: correct})
	if p.Status == quiz.Completed {
		s.workshopEvent(c, store.WorkshopEvent{Kind: store.EventComplete, Topic: topic})
	}
}
