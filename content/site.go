package content

import (
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/locklab/locklab/quiz"
)

// Known lists what the course may refer to that other packages own, so
// that LoadSite can check every reference at start-up while content
// depends on none of them: the caller, which wires those packages, fills
// it in.
type Known struct {
	// RaceScenarios are the ids a lesson's race: may name. Nil skips the
	// check, for callers (tests of the content alone) that have no race
	// engine.
	RaceScenarios []string
}

// Site is the course with its quizzes, loaded and checked together.
type Site struct {
	Course  *Course
	Quizzes *quiz.Bank
}

// LoadSite loads the course and the quizzes from fsys and checks them
// against each other and against known: every quiz belongs to a lesson,
// and every lesson's race scenario exists. A problem in a lesson or in
// course.yaml wraps ErrInvalid, one in a quiz quiz.ErrInvalid; both name
// the file.
func LoadSite(fsys fs.FS, known Known) (*Site, error) {
	course, err := loadCourseChecked(fsys, known)
	if err != nil {
		return nil, err
	}
	bank, err := quiz.Load(fsys)
	if err != nil {
		return nil, err
	}
	for _, topic := range bank.Topics() {
		if _, ok := course.Lesson(topic); !ok {
			return nil, fmt.Errorf("quizzes/%s.yaml: there is no lesson %q: %w", topic, topic, quiz.ErrInvalid)
		}
	}
	return &Site{Course: course, Quizzes: bank}, nil
}

// loadCourseChecked is Load with the checks of the lessons' references.
func loadCourseChecked(fsys fs.FS, known Known) (*Course, error) {
	course, err := Load(fsys)
	if err != nil {
		return nil, err
	}
	if err := known.check(course); err != nil {
		return nil, err
	}
	return course, nil
}

// check reports the first lesson that names something known lacks.
func (k Known) check(c *Course) error {
	if k.RaceScenarios == nil {
		return nil
	}
	for _, l := range c.Lessons() {
		if l.Race != "" && !slices.Contains(k.RaceScenarios, l.Race) {
			return invalid(l.File, "front matter: race %q is not a race scenario (there are %s)", l.Race, strings.Join(k.RaceScenarios, ", "))
		}
	}
	return nil
}
