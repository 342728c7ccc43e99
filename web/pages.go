package web

import (
	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/locklab/locklab/content"
	"github.com/locklab/locklab/web/views"
)

func (s *Server) page(title, description, nav string) views.Page {
	return views.Page{Title: title, Description: description, CSSHref: s.assets.cssHref, Nav: nav}
}

func (s *Server) handleHome(c echo.Context) error {
	course, err := s.content.Course()
	if err != nil {
		return err
	}
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
				Href: lessonHref(t.Lesson), Status: views.NotStarted,
			})
			m.Shipped++
		}
		m.Sections = append(m.Sections, hs)
	}
	return render(c, 200, views.HomePage(m))
}

func (s *Server) handleLesson(c echo.Context) error {
	course, err := s.content.Course()
	if err != nil {
		return err
	}
	l, ok := course.Lesson(c.Param("slug"))
	if !ok {
		return echo.ErrNotFound
	}
	m := views.Lesson{
		Page:        s.page(l.Title, l.Why, "lesson"),
		CourseTitle: course.Title, Section: l.Section, Number: l.Number, TopicCount: course.TopicCount,
		Title: l.Title, Status: views.NotStarted, Summary: l.Summary, Why: l.Why, Body: l.Body,
	}
	for _, kp := range l.KeyPoints {
		m.KeyPoints = append(m.KeyPoints, views.KeyPoint{Title: kp.Title, Body: kp.Body})
	}
	for _, g := range l.GoDeeper {
		m.GoDeeper = append(m.GoDeeper, views.Link{Title: g.Title, Source: g.Source, URL: g.URL})
	}
	return render(c, 200, views.LessonPage(m, views.QuizPlaceholder()))
}

func lessonHref(l *content.Lesson) string { return "/topics/" + l.Slug }

// render writes a templ component as an HTML response.
func render(c echo.Context, code int, comp templ.Component) error {
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	c.Response().WriteHeader(code)
	return comp.Render(c.Request().Context(), c.Response())
}
