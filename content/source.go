package content

import (
	"io/fs"

	"github.com/locklab/locklab/quiz"
)

// Fixed is a course loaded once; it never changes.
type Fixed struct{ C *Course }

// Course returns the loaded course.
func (f Fixed) Course() (*Course, error) { return f.C, nil }

// Reloader loads the content again from its file system on every call, so
// an author editing a content directory sees each change on the next
// reload of the page, and a broken edit as an error that names the file.
// It is meant for authoring, not for serving learners. It hands out both
// the course and the quizzes, each checked as LoadSite checks them at
// start-up.
type Reloader struct {
	FS fs.FS
	// Known is what lessons are checked against; see LoadSite.
	Known Known
}

// Course loads and checks the lessons as they are on disk now. A broken
// quiz does not stop the lesson pages, only that quiz.
func (r Reloader) Course() (*Course, error) { return loadCourseChecked(r.FS, r.Known) }

// Quiz loads and checks all the content as it is on disk now and returns
// topic's quiz.
func (r Reloader) Quiz(topic string) (*quiz.Quiz, error) {
	site, err := LoadSite(r.FS, r.Known)
	if err != nil {
		return nil, err
	}
	return site.Quizzes.Quiz(topic)
}
