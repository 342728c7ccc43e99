package web

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/locklab/locklab/limit"
	"github.com/locklab/locklab/quiz"
	"github.com/locklab/locklab/race"
	"github.com/locklab/locklab/web/views"
	"github.com/locklab/locklab/workshop"
)

// WorkshopService runs instructor-led workshops (workshop.Service).
type WorkshopService interface {
	Start(ctx context.Context, title string, at time.Time) (workshop.Workshop, error)
	Get(ctx context.Context, code string) (workshop.Workshop, error)
	List(ctx context.Context) ([]workshop.Workshop, error)
	End(ctx context.Context, code string, at time.Time) error
	Join(ctx context.Context, code, learner, nickname string, at time.Time) error
	SetJoining(ctx context.Context, code string, open bool) error
	Remove(ctx context.Context, code, participant string) error
	Record(ctx context.Context, code, learner string, ev workshop.Event) error
	Stats(ctx context.Context, code string, activeSince time.Time) (workshop.Stats, error)
	Participants(ctx context.Context, code string) ([]workshop.Participant, error)
	OpenPoll(ctx context.Context, code string, sp workshop.PollSpec, at time.Time) (workshop.Poll, error)
	Poll(ctx context.Context, code, id string) (workshop.PollResult, error)
	Reveal(ctx context.Context, code, id string, at time.Time) error
	Predict(ctx context.Context, code, id, learner string, prediction []string, at time.Time) error
	Polls(ctx context.Context, code string) ([]workshop.PollResult, error)
	Learner(ctx context.Context, code, learner string) (workshop.LearnerState, error)
	// Version changes whenever what a participant sees may have (see
	// workshop.PollBackend.WorkshopVersion); "" when it cannot tell.
	Version(ctx context.Context, code string) (string, error)
}

// workshopCookie remembers which workshop a learner joined.
const workshopCookie = "locklab_workshop"

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
	list, err := s.workshops.List(c.Request().Context())
	if err != nil {
		return err
	}
	m := views.AdminHome{Page: s.page("Workshops", "", "admin"), TitleMax: workshop.MaxTitleRunes}
	for _, w := range list {
		m.Workshops = append(m.Workshops, workshopRow(w))
	}
	return render(c, http.StatusOK, views.AdminHomePage(m))
}

func workshopRow(w workshop.Workshop) views.WorkshopRow {
	r := views.WorkshopRow{Code: w.Code, Title: w.Title, Started: w.StartedAt.UTC().Format("2006-01-02 15:04 UTC"), Running: w.Running()}
	if !w.Running() {
		r.Ended = w.EndedAt.UTC().Format("2006-01-02 15:04 UTC")
	}
	return r
}

func (s *Server) handleStartWorkshop(c echo.Context) error {
	w, err := s.workshops.Start(c.Request().Context(), c.FormValue("title"), time.Now())
	if err != nil {
		return err
	}
	s.metrics.countWorkshop(eventStarted)
	return c.Redirect(http.StatusSeeOther, "/admin/workshops/"+w.Code)
}

func (s *Server) handleEndWorkshop(c echo.Context) error {
	code := workshop.NormalizeCode(c.Param("code"))
	if err := s.workshops.End(c.Request().Context(), code, time.Now()); err != nil {
		return err
	}
	s.metrics.countWorkshop(eventEnded)
	return c.Redirect(http.StatusSeeOther, "/admin/workshops/"+url.PathEscape(code))
}

// dashboard is the workshop's dashboard, with every question of the
// course.
func (s *Server) dashboard(ctx context.Context, code string) (workshop.Dashboard, error) {
	st, err := s.workshops.Stats(ctx, code, time.Now().Add(-workshop.ActiveWindow))
	if err != nil {
		return workshop.Dashboard{}, err
	}
	course, err := s.content.Course()
	if err != nil {
		return workshop.NewDashboard(st, nil), err
	}
	var questions []workshop.Question
	for _, l := range course.Lessons() {
		q, err := s.quizzes.Quiz(l.Slug)
		if errors.Is(err, quiz.ErrUnknownTopic) {
			continue // a lesson without a quiz
		}
		if err != nil {
			return workshop.NewDashboard(st, nil), err
		}
		for _, qn := range q.Questions {
			wq := workshop.Question{ID: qn.ID, Prompt: qn.Prompt}
			for _, ch := range qn.Choices {
				wq.Choices = append(wq.Choices, workshop.Choice{ID: ch.ID, Text: ch.Text, Right: qn.IsRight(ch.ID)})
			}
			questions = append(questions, wq)
		}
	}
	return workshop.NewDashboard(st, questions), nil
}

func (s *Server) handleWorkshopDashboard(c echo.Context) error {
	code := workshop.NormalizeCode(c.Param("code"))
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
			{Key: "lab_solves", Label: "Lab challenges solved", Value: d.LabSolves},
		},
		TitleMax: workshop.MaxTitleRunes,
	}
	w, err := s.workshops.Get(c.Request().Context(), code)
	if err != nil {
		return err
	}
	m.JoinClosed = w.JoinClosed
	ps, err := s.workshops.Participants(c.Request().Context(), code)
	if err != nil {
		return err
	}
	since := time.Now().Add(-workshop.ActiveWindow)
	for _, p := range ps {
		m.Participants = append(m.Participants, views.ParticipantRow{
			Key: p.Key, Nickname: p.Nickname, Commands: p.Commands, Answers: p.Answers,
			Joined: p.JoinedAt.UTC().Format("15:04 UTC"), LastActive: p.LastActive.UTC().Format("15:04 UTC"),
			Active: !p.LastActive.Before(since),
		})
	}
	if c.QueryParam("removed") != "" {
		m.Notice = "The participant was removed. They no longer count as joined and cannot join this workshop again from that browser."
	}
	for _, mc := range d.Misconceptions {
		m.Misconceptions = append(m.Misconceptions, views.Misconception{Question: mc.Question, Choice: mc.Choice, Count: mc.Count, Percent: int(mc.Share*100 + 0.5)})
	}
	for _, in := range race.List() {
		m.Scenarios = append(m.Scenarios, views.RaceScenario{ID: in.ID, Title: in.Title})
	}
	r, err := s.currentPoll(c, code)
	if err != nil {
		return err
	}
	if r != nil {
		m.Poll = pollView(code, *r, "")
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

// sseWriteTimeout bounds each write of an event stream.
const sseWriteTimeout = 30 * time.Second

// handleWorkshopEvents streams the dashboard as server-sent events, from
// the shared store, so every replica sees every learner: "poll", the
// current poll's distribution (its own counters, checked every
// pollEvery), and "stats", the rest of the dashboard, which reads every
// participant and so is checked only every sseEvery.
func (s *Server) handleWorkshopEvents(c echo.Context) error {
	code := workshop.NormalizeCode(c.Param("code"))
	ctx := c.Request().Context()
	if _, err := s.workshops.Get(ctx, code); err != nil {
		return err
	}
	every := min(s.pollEvery, s.sseEvery)
	statsEvery := max(1, int(s.sseEvery/every))
	var stats sseEvent
	tick := 0
	return s.stream(c, every, func() ([]sseEvent, bool) {
		var out []sseEvent
		if tick%statsEvery == 0 {
			d, err := s.dashboard(ctx, code)
			if err == nil {
				b, _ := json.Marshal(d)
				stats = sseEvent{"stats", string(b)}
			} else if ctx.Err() == nil {
				s.failures.Warn("workshop stats", "code", code, "error", err)
			}
		}
		tick++
		if stats.name != "" {
			out = append(out, stats)
		}
		if poll, err := s.currentPollJSON(c, code); err == nil {
			out = append(out, sseEvent{"poll", poll})
		} else if ctx.Err() == nil {
			s.failures.Warn("workshop poll", "code", code, "error", err)
		}
		return out, true
	})
}

// handleWorkshopCSV exports the results: one row per participant, per
// question and choice with ?part=questions, or per poll and outcome with
// ?part=polls.
func (s *Server) handleWorkshopCSV(c echo.Context) error {
	code := workshop.NormalizeCode(c.Param("code"))
	ctx := c.Request().Context()
	var rows [][]string
	name := "workshop-" + code
	switch c.QueryParam("part") {
	case "questions":
		d, err := s.dashboard(ctx, code)
		if err != nil {
			return err
		}
		name += "-questions"
		rows = workshop.QuestionRows(d)
	case "polls":
		rs, err := s.workshops.Polls(ctx, code)
		if err != nil {
			return err
		}
		name += "-polls"
		rows = workshop.PollRows(rs)
	default:
		ps, err := s.workshops.Participants(ctx, code)
		if err != nil {
			return err
		}
		name += "-participants"
		rows = workshop.ParticipantRows(ps)
	}
	w := c.Response()
	w.Header().Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	w.Header().Set(echo.HeaderContentDisposition, `attachment; filename="`+name+`.csv"`)
	w.WriteHeader(http.StatusOK)
	cw := csv.NewWriter(w)
	_ = cw.WriteAll(rows)
	return cw.Error()
}

// handleWorkshopJoining closes the workshop to newcomers (the form's open
// field 0) or opens it again (1); those who joined may rejoin either way.
func (s *Server) handleWorkshopJoining(c echo.Context) error {
	code := workshop.NormalizeCode(c.Param("code"))
	var open bool
	switch c.FormValue("open") {
	case "1", "true":
		open = true
	case "0", "false":
	default:
		return echo.NewHTTPError(http.StatusBadRequest, `the form's open field must be 1 (let newcomers join) or 0 (close the workshop to them)`)
	}
	if err := s.workshops.SetJoining(c.Request().Context(), code, open); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/admin/workshops/"+url.PathEscape(code)+"#joining")
}

// handleRemoveParticipant removes a participant, named by the key the
// dashboard lists them with (never their learner id).
func (s *Server) handleRemoveParticipant(c echo.Context) error {
	code := workshop.NormalizeCode(c.Param("code"))
	if err := s.workshops.Remove(c.Request().Context(), code, c.Param("key")); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/admin/workshops/"+url.PathEscape(code)+"?removed=1#participants")
}

// Learners join with the code or the link. Every join from an address
// counts against it (limit.JoinLimits), and so does every code it looks
// up that names no workshop, so that nobody can guess codes or fill a
// workshop from one address.

func (s *Server) joinPage(code, nickname string) views.Join {
	return views.Join{Page: s.page("Join a workshop", "", ""), Code: code, Nickname: nickname, CodeMax: workshop.MaxCodeLen, NicknameMax: workshop.MaxNickRunes}
}

// lookUpCode looks a join code up; a code that names no workshop counts
// against the client's address. Checking the address's allowance and
// counting the guess are one step, so guesses sent at once cannot all
// pass the check. A refusal comes back as a Decision, with no lookup.
func (s *Server) lookUpCode(c echo.Context, code string) (workshop.Workshop, limit.Decision, error) {
	ctx := c.Request().Context()
	addr := clientAddress(c)
	defer s.joinGuess.Lock(addr)()
	d, err := s.joinLimits.CheckCode(ctx, addr)
	if err != nil {
		s.failures.Warn("join code limit", "error", err)
	}
	if !d.Allowed() {
		return workshop.Workshop{}, d, nil
	}
	w, err := s.workshops.Get(ctx, code)
	if errors.Is(err, workshop.ErrNotFound) {
		if err := s.joinLimits.WrongCode(ctx, addr); err != nil {
			s.failures.Warn("join code limit", "error", err)
		}
	}
	return w, d, err
}

// joinRefused answers a join, or a look at a code, that a limit refused:
// the join page with why and when to try again, 429 with Retry-After.
func (s *Server) joinRefused(c echo.Context, d limit.Decision, m views.Join) error {
	s.metrics.rateLimited.WithLabelValues(d.Limit).Inc()
	secs := retrySeconds(d.Wait)
	c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
	why := "Many learners joined from your address just now."
	if d.Limit == "join_codes" {
		why = "There were many wrong workshop codes from your address."
	}
	m.Error = why + " Please try again in " + waitText(secs) + "."
	return render(c, http.StatusTooManyRequests, views.JoinPage(m))
}

func (s *Server) handleJoinForm(c echo.Context) error {
	code := workshop.NormalizeCode(c.Param("code"))
	if code == "" {
		code = workshop.NormalizeCode(c.QueryParam("code"))
	}
	m := s.joinPage(code, "")
	// A link to a workshop that does not exist is a page that does not
	// exist: 404, with the form to type the right code.
	status := http.StatusOK
	if code != "" {
		w, d, err := s.lookUpCode(c, code)
		switch {
		case !d.Allowed():
			return s.joinRefused(c, d, m)
		case errors.Is(err, workshop.ErrNotFound):
			m.Error = "There is no workshop with the code " + code + ". Check it with your instructor."
			status = http.StatusNotFound
		case err != nil:
			return err
		case !w.Running():
			m.Error = "The workshop " + w.Title + " has ended."
		case w.JoinClosed:
			m.Title = w.Title
			m.Error = "The workshop " + w.Title + " is not taking new participants right now. If you joined it before, you can join again."
		default:
			m.Title = w.Title
		}
	}
	return render(c, status, views.JoinPage(m))
}

func (s *Server) handleJoin(c echo.Context) error {
	ctx := c.Request().Context()
	code := workshop.NormalizeCode(c.FormValue("code"))
	nickname := strings.TrimSpace(c.FormValue("nickname"))
	m := s.joinPage(code, nickname)
	d, err := s.joinLimits.Join(ctx, clientAddress(c))
	if err != nil {
		s.failures.Warn("join limit", "error", err)
	}
	if !d.Allowed() {
		return s.joinRefused(c, d, m)
	}
	_, d, err = s.lookUpCode(c, code)
	if !d.Allowed() {
		return s.joinRefused(c, d, m)
	}
	if err == nil {
		err = s.workshops.Join(ctx, code, s.ensureLearner(c), nickname, time.Now())
	}
	if err != nil {
		switch {
		case errors.Is(err, workshop.ErrNotFound):
			m.Error = "There is no workshop with the code " + code + ". Check it with your instructor."
		case errors.Is(err, workshop.ErrEnded):
			m.Error = "That workshop has ended."
		case errors.Is(err, workshop.ErrRemoved):
			m.Error = "Your instructor removed you from this workshop, so you cannot join it again from this browser. If you think that is a mistake, ask your instructor."
		case errors.Is(err, workshop.ErrJoinClosed):
			m.Error = "That workshop is not taking new participants right now. Ask your instructor to open it again."
		case errors.Is(err, workshop.ErrFull):
			m.Error = "That workshop is full: it has as many participants as it may have. Ask your instructor to start another one."
		case errors.Is(err, workshop.ErrNicknameTaken):
			m.Error = "Someone in this workshop already goes by " + nickname + ". Please choose another nickname."
			m.NicknameTaken = true
		case errors.Is(err, workshop.ErrBadInput):
			m.Error = "Please choose another nickname: at most 40 characters, without invisible or direction-changing characters."
		default:
			return err
		}
		return render(c, http.StatusBadRequest, views.JoinPage(m))
	}
	s.metrics.countWorkshop(eventJoined)
	s.setCookie(c, &http.Cookie{Name: workshopCookie, Value: code, MaxAge: 24 * 3600, HttpOnly: true, SameSite: http.SameSiteLaxMode})
	s.setCookie(c, &http.Cookie{Name: joinedCookie, Value: "1", MaxAge: 24 * 3600, SameSite: http.SameSiteLaxMode})
	// The workshop page says whom they joined as, with a way to leave and
	// the open poll, then sends them on to the lesson.
	return c.Redirect(http.StatusSeeOther, "/workshop")
}

// workshopEvent records what a learner did for their workshop's
// dashboard. The learner must never notice a failure here.
func (s *Server) workshopEvent(c echo.Context, ev workshop.Event) {
	if s.workshops == nil {
		return
	}
	code, _ := s.cookie(c, workshopCookie)
	id := s.learnerID(c)
	if code == "" || id == "" {
		return
	}
	ev.At = time.Now()
	if err := s.workshops.Record(c.Request().Context(), workshop.NormalizeCode(code), id, ev); err != nil {
		s.failures.Warn("workshop event", "kind", ev.Kind, "error", err)
	}
}

// answered records a quiz answer, and the completion it may bring.
func (s *Server) answered(c echo.Context, topic, question, choice string, correct bool, p quiz.Progress) {
	s.workshopEvent(c, workshop.Event{Kind: workshop.EventAnswer, Topic: topic, Question: question, Choice: choice, Correct: correct})
	if p.Status == quiz.Completed {
		s.workshopEvent(c, workshop.Event{Kind: workshop.EventComplete, Topic: topic})
	}
}
