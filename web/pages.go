package web

import (
	"net/http"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/locklab/locklab/content"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/web/views"
)

func (s *Server) page(title, description, nav string) views.Page {
	return views.Page{Title: title, Description: description, CSSHref: s.assets.cssHref, Nav: nav}
}

func (s *Server) handleHome(c echo.Context) error {
	s.ensureLearner(c)
	course, err := s.content.Course()
	if err != nil {
		return err
	}
	learner := s.learnerProgress(c)
	m := views.Home{
		Page:        s.page(course.Title, course.Description, "home"),
		CourseTitle: course.Title,
		Description: course.Description,
		TopicCount:  course.TopicCount,
	}
	for _, sec := range course.Sections {
		hs := views.HomeSection{Title: sec.Title}
		for _, t := range sec.Topics {
			hs.Topics = append(hs.Topics, views.TopicCard{
				Number: t.Number, TopicCount: course.TopicCount,
				Title: t.Lesson.Title, Why: t.Lesson.Why,
				Href: lessonHref(t.Lesson), Status: s.status(t.Lesson.Slug, learner[t.Lesson.Slug]),
			})
			m.Shipped++
		}
		m.Sections = append(m.Sections, hs)
	}
	return render(c, http.StatusOK, views.HomePage(m))
}

// learnerProgress reads everything the learner has done. A store that
// cannot be read must not take the pages down: the learner then sees
// "Not started" and the error goes to the log.
func (s *Server) learnerProgress(c echo.Context) store.Progress {
	id := s.learnerID(c)
	if id == "" {
		return nil
	}
	l, err := s.progress.Learner(c.Request().Context(), id)
	if err != nil {
		s.log.Warn("read progress", "error", err)
		return nil
	}
	return l
}

// status is a topic's status for the learner, by the quiz's finishing rule.
func (s *Server) status(topic string, tp store.TopicProgress) views.Status {
	q, err := s.quizzes.Quiz(topic)
	if err != nil {
		if tp.Started {
			return views.InProgress
		}
		return views.NotStarted
	}
	return views.Status(q.Progress(tp.Started, tp.Right).Status)
}

func (s *Server) handleLesson(c echo.Context) error {
	// A learner gets their id on the first visit, so that from their first
	// answer or command each has a rate limit of their own, even when a
	// whole workshop shares one address.
	s.ensureLearner(c)
	return s.renderLessonWith(c, c.Param("slug"), http.StatusOK, lessonExtras{})
}

// lessonExtras is what a no-JavaScript form post adds to the lesson page:
// feedback under the questions just answered, or the playground's
// transcript.
type lessonExtras struct {
	feedback   map[string]feedbackFor
	playground *pgState
}

// renderLessonWith renders a lesson page.
func (s *Server) renderLessonWith(c echo.Context, slug string, code int, x lessonExtras) error {
	course, err := s.content.Course()
	if err != nil {
		return err
	}
	l, ok := course.Lesson(slug)
	if !ok {
		return echo.ErrNotFound
	}
	m := views.Lesson{
		Page:        s.page(l.Title, l.Why, "lesson"),
		CourseTitle: course.Title, Section: l.Section, Number: l.Number, TopicCount: course.TopicCount,
		Title: l.Title, Summary: l.Summary, Why: l.Why, Body: l.Body,
	}
	for _, kp := range l.KeyPoints {
		m.KeyPoints = append(m.KeyPoints, views.KeyPoint{Title: kp.Title, Body: kp.Body})
	}
	for _, g := range l.GoDeeper {
		m.GoDeeper = append(m.GoDeeper, views.Link{Title: g.Title, Source: g.Source, URL: g.URL})
	}
	var tp store.TopicProgress
	unavailable := false
	if id := s.learnerID(c); id != "" {
		if tp, err = s.progress.Topic(c.Request().Context(), id, slug); err != nil {
			s.log.Warn("read progress", "error", err)
			unavailable = true
		}
	}
	m.Status = s.status(slug, tp)
	quizPart := views.QuizPlaceholder()
	if q, err := s.quizzes.Quiz(slug); err == nil {
		qv := quizView(q, tp, x.feedback)
		qv.Unavailable = unavailable
		quizPart = views.QuizRegion(qv)
		m.Page.Scripts = append(m.Page.Scripts, s.assets.href("quiz.js"))
	}
	var raceWidget templ.Component
	if l.Race != "" {
		rv, _ := s.raceView(c, l.Race, nil, true)
		raceWidget = views.RaceWidget(rv)
		m.Page.Scripts = append(m.Page.Scripts, s.assets.href("race.js"))
	}
	var pg templ.Component
	if l.Playground && s.playground != nil {
		pg = views.PlaygroundWidget(s.playgroundView(c, x.playground, "lesson", l.Slug))
		m.Page.Scripts = append(m.Page.Scripts, s.assets.href("playground.js"))
	}
	return render(c, code, views.LessonPage(m, raceWidget, pg, quizPart))
}

func lessonHref(l *content.Lesson) string { return "/topics/" + l.Slug }

// render writes a templ component as an HTML response. Its forms get the
// request's CSRF token.
func render(c echo.Context, code int, comp templ.Component) error {
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	c.Response().WriteHeader(code)
	token, _ := c.Get(csrfContextKey).(string)
	return comp.Render(views.WithCSRF(c.Request().Context(), token), c.Response())
}
