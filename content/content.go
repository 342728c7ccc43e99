// Package content holds Lock Lab's course material: the structure of the
// Redis path and the lessons it ships, written as Markdown with YAML front
// matter, and their quizzes. Everything is embedded in the binary; LoadSite
// parses and validates it once, lessons and quizzes together and against
// the race scenarios the caller knows, so a broken file stops the server at
// start-up instead of surprising a learner later. Reloader does the same on
// every request for authors editing a -content directory.
package content

import (
	"embed"
	"html/template"
	"io/fs"
)

//go:embed course.yaml lessons quizzes
var embedded embed.FS

// Embedded returns the course content compiled into the binary.
func Embedded() fs.FS { return embedded }

// Course is the Redis path as this site ships it: its title, how many topics
// the whole path has, and the sections with the topics that ship here.
type Course struct {
	Title       string
	Description string
	TopicCount  int
	Sections    []Section
	lessons     map[string]*Lesson
}

// Section is one part of the path, such as "Using it well".
type Section struct {
	Title  string
	Topics []Topic
}

// Topic is one numbered topic of the path with the lesson that teaches it.
type Topic struct {
	Number int
	Lesson *Lesson
}

// Lesson is one topic's page: the header, the key points, the worked
// explanation (already rendered to HTML) and links for further reading.
type Lesson struct {
	Slug      string
	Title     string
	Summary   string
	Why       string
	KeyPoints []KeyPoint
	Body      template.HTML
	GoDeeper  []Link
	// Race is the id of the race scenario shown with the key points.
	Race string
	// Playground is set when the lesson has the redis-cli playground; using
	// the playground counts as starting the topic.
	Playground bool
	// Section and Number place the lesson in the path; set by Load.
	Section string
	Number  int
	// File is the path of the source file, for error messages.
	File string
}

// KeyPoint is one of a lesson's numbered key points. Body is rendered
// inline Markdown (code spans, emphasis, links).
type KeyPoint struct {
	Title string
	Body  template.HTML
}

// Link is a "Go deeper" reference.
type Link struct {
	Title  string
	Source string
	URL    string
}

// Lesson returns the lesson with the given slug.
func (c *Course) Lesson(slug string) (*Lesson, bool) {
	l, ok := c.lessons[slug]
	return l, ok
}

// Lessons returns every lesson in path order.
func (c *Course) Lessons() []*Lesson {
	var out []*Lesson
	for _, s := range c.Sections {
		for _, t := range s.Topics {
			out = append(out, t.Lesson)
		}
	}
	return out
}
