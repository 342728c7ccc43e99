// Package views renders Lock Lab's HTML pages with templ. Views receive view
// models built by the web package; they never see domain internals such as
// answer keys.
package views

import "html/template"

// Page is what every page's layout needs.
type Page struct {
	Title       string
	Description string
	CSSHref     string
	// Nav marks the current section of the site ("home", "lesson") for the
	// header's aria-current.
	Nav string
}

// Status is a learner's progress on one topic.
type Status string

// The three states a topic can be in for a learner.
const (
	NotStarted Status = "not-started"
	InProgress Status = "in-progress"
	Completed  Status = "completed"
)

// Label is the status as shown to the learner.
func (s Status) Label() string {
	switch s {
	case InProgress:
		return "In progress"
	case Completed:
		return "Completed"
	default:
		return "Not started"
	}
}

// Home is the course home page.
type Home struct {
	Page
	CourseTitle string
	Description string
	TopicCount  int
	Shipped     int
	Sections    []HomeSection
}

// HomeSection is one section of the path with its shipped topics.
type HomeSection struct {
	Title  string
	Topics []TopicCard
}

// TopicCard is one topic on the home page.
type TopicCard struct {
	Number     int
	TopicCount int
	Title      string
	Why        string
	Href       string
	Status     Status
}

// Lesson is a topic's lesson page.
type Lesson struct {
	Page
	CourseTitle string
	Section     string
	Number      int
	TopicCount  int
	Title       string
	Status      Status
	Summary     string
	Why         string
	KeyPoints   []KeyPoint
	Body        template.HTML
	GoDeeper    []Link
}

// KeyPoint is one numbered key point; Body is trusted HTML from content.
type KeyPoint struct {
	Title string
	Body  template.HTML
}

// Link is an outside reference in "Go deeper".
type Link struct {
	Title  string
	Source string
	URL    string
}

// Error is the page shown for 404s and other failures.
type Error struct {
	Page
	Code    int
	Heading string
	Message string
}
