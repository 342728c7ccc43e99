package web

import (
	"bytes"
	"net/http"
	"strconv"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/locklab/locklab/content"
	"github.com/locklab/locklab/progress"
	"github.com/locklab/locklab/web/views"
)

func (s *Server) page(title, description, nav string) views.Page {
	p := views.Page{Title: title, Description: description, CSSHref: s.assets.cssHref, Nav: nav}
	if s.workshops != nil {
		// Learner pages show the workshop a browser joined and its poll.
		p.Scripts = []string{s.assets.href("workshop-learner.js")}
	}
	return p
}

func (s *Server) handleHome(c echo.Context) error {
	course, err := s.content.Course()
	if err != nil {
		return err
	}
	learner := s.learnerProgress(c)
	var keyBuf [128]byte
	key := append(keyBuf[:0], "home"...)
	for _, sec := range course.Sections { // as course.Lessons(), which makes a slice
		for _, t := range sec.Topics {
			key = append(append(key, '|'), s.status(t.Lesson.Slug, learner[t.Lesson.Slug])...)
		}
	}
	p := s.pages.get(course, key, nil)
	if p == nil {
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
		if p, err = keepPage(c.Request().Context(), http.StatusOK, views.HomePage(m), nil); err != nil {
			return err
		}
		s.pages.put(course, string(key), p)
	}
	return s.writePage(c, p, pageFill{csrf: csrfOf(c)})
}

// learnerProgress reads everything the learner has done. A visitor who
// only reads has no learner's cookie, and so no progress: their id is made
// with their first answer or command (ensureLearner). Pages then cost no
// Set-Cookie, and a crawler mints no ids. A store that cannot be read must
// not take the pages down: the learner then sees "Not started" and the
// error goes to the log.
func (s *Server) learnerProgress(c echo.Context) progress.Progress {
	id := s.learnerID(c)
	if id == "" {
		return nil
	}
	l, err := s.progress.Progress(c.Request().Context(), id)
	if err != nil {
		s.failures.Warn("read progress", "error", err)
		return nil
	}
	return l
}

// status is a topic's status for the learner, by the quiz's finishing rule.
func (s *Server) status(topic string, tp progress.TopicProgress) views.Status {
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
	return s.renderLessonWith(c, c.Param("slug"), http.StatusOK, lessonExtras{})
}

// lessonExtras is what a no-JavaScript form post adds to the lesson page:
// feedback under the questions just answered, or the playground's
// transcript.
type lessonExtras struct {
	feedback   map[string]feedbackFor
	playground *pgState
}

// renderLessonWith renders a lesson page. Without extras the page is kept
// for the next learner in the same state on that topic; the playground
// widget is rendered on each request (it shows the learner's sandbox).
func (s *Server) renderLessonWith(c echo.Context, slug string, code int, x lessonExtras) error {
	course, err := s.content.Course()
	if err != nil {
		return err
	}
	l, ok := course.Lesson(slug)
	if !ok {
		return echo.ErrNotFound
	}
	var tp progress.TopicProgress
	unavailable := false
	if id := s.learnerID(c); id != "" {
		if tp, err = s.progress.Topic(c.Request().Context(), id, slug); err != nil {
			s.failures.Warn("read progress", "error", err)
			unavailable = true
		}
	}
	q, qerr := s.quizzes.Quiz(slug)
	var version any
	if qerr == nil {
		version = q
	}
	status := s.status(slug, tp)
	plain := x.feedback == nil && x.playground == nil
	var keyBuf [256]byte
	key := append(keyBuf[:0], "lesson|"...)
	key = append(append(append(key, slug...), '|'), status...)
	key = strconv.AppendBool(append(key, '|'), tp.Started)
	key = strconv.AppendBool(append(key, '|'), unavailable)
	key = append(key, '|')
	for i, r := range tp.Right {
		if i > 0 {
			key = append(key, ',')
		}
		key = append(key, r...)
	}
	var p *keptPage
	if plain {
		p = s.pages.get(course, key, version)
	}
	if p == nil {
		m := views.Lesson{
			Page:        s.page(l.Title, l.Why, "lesson"),
			CourseTitle: course.Title, Section: l.Section, Number: l.Number, TopicCount: course.TopicCount,
			Title: l.Title, Summary: l.Summary, Why: l.Why, Body: l.Body, Status: status,
		}
		for _, kp := range l.KeyPoints {
			m.KeyPoints = append(m.KeyPoints, views.KeyPoint{Title: kp.Title, Body: kp.Body})
		}
		for _, g := range l.GoDeeper {
			m.GoDeeper = append(m.GoDeeper, views.Link{Title: g.Title, Source: g.Source, URL: g.URL})
		}
		quizPart := views.QuizPlaceholder()
		if qerr == nil {
			qv := quizView(q, tp, x.feedback)
			qv.Unavailable = unavailable
			quizPart = views.QuizRegion(qv)
			m.Page.Scripts = append(m.Page.Scripts, s.assets.href("quiz.js"))
		}
		keep := plain
		var raceWidget templ.Component
		if l.Race != "" {
			rv, raceCode := s.raceView(c, l.Race, nil, 3)
			keep = keep && raceCode == http.StatusOK
			raceWidget = views.RaceWidget(rv)
			m.Page.Scripts = append(m.Page.Scripts, s.assets.href("race.js"))
		}
		var pg templ.Component
		var room views.LessonRoom
		if l.Playground && s.playground != nil {
			pg = playgroundHole
			room = lessonRoom(l)
			m.Page.Scripts = append(m.Page.Scripts, s.assets.href("playground.js"), s.assets.href("room.js"))
		}
		if p, err = keepPage(c.Request().Context(), code, views.LessonPage(m, room, raceWidget, pg, quizPart), version); err != nil {
			return err
		}
		if keep {
			s.pages.put(course, string(key), p)
		}
	}
	token := csrfOf(c)
	return s.writePage(c, p, pageFill{csrf: token, playground: func(b *bytes.Buffer) error {
		return s.playgroundWidget(c.Request().Context(), b, s.playgroundView(c, x.playground, "lesson", l.Slug), token)
	}})
}

func lessonHref(l *content.Lesson) string { return "/topics/" + l.Slug }

// lessonRoom is the lesson's body split after each redis-cli example,
// with the example's commands, for the forms that run them without
// JavaScript.
func lessonRoom(l *content.Lesson) views.LessonRoom {
	room := views.LessonRoom{Topic: l.Slug}
	for _, part := range content.SplitCLI(l.Body) {
		lp := views.LessonPart{HTML: part.HTML}
		for _, c := range part.Commands {
			lp.Commands = append(lp.Commands, views.LessonCommand{Client: c.Client, Line: c.Line})
		}
		room.Parts = append(room.Parts, lp)
	}
	return room
}

// render writes a templ component as an HTML response. Its forms get the
// request's CSRF token.
func render(c echo.Context, code int, comp templ.Component) error {
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	c.Response().WriteHeader(code)
	token, _ := c.Get(csrfContextKey).(string)
	return comp.Render(views.WithCSRF(c.Request().Context(), token), c.Response())
}

// serveRacePage serves /race or /race/present. With no query the page is
// the same for everyone, and kept.
func (s *Server) serveRacePage(c echo.Context, title string, view func(views.RacePage) templ.Component) error {
	// The race does not come from the course content.
	var course *content.Course
	var err error
	var keyBuf [64]byte
	key := append(append(keyBuf[:0], "race|"...), title...)
	plain := c.Request().URL.RawQuery == ""
	var p *keptPage
	if plain {
		p = s.pages.get(course, key, nil)
	}
	if p == nil {
		m, code := s.racePage(c, title, title == presentTitle)
		if p, err = keepPage(c.Request().Context(), code, view(m), nil); err != nil {
			return err
		}
		if plain && code == http.StatusOK {
			s.pages.put(course, string(key), p)
		}
	}
	return s.writePage(c, p, pageFill{csrf: csrfOf(c)})
}
