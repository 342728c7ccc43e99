// Package views renders Lock Lab's HTML pages with templ. Views receive view
// models built by the web package; they never see domain internals such as
// answer keys.
package views

import (
	"html/template"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"

	"github.com/locklab/locklab/race"
)

// Page is what every page's layout needs.
type Page struct {
	Title       string
	Description string
	CSSHref     string
	// Scripts are extra scripts the page loads (deferred), by path.
	Scripts []string
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

// Quiz is the "Check yourself" region of a lesson. It never carries which
// choice is right for a question the learner has not yet answered right.
type Quiz struct {
	Topic     string
	Right     int
	Total     int
	Status    Status
	Questions []Question
	// Unavailable is set when the learner's progress could not be read.
	Unavailable bool
}

// Question is one quiz question as shown to the learner.
type Question struct {
	ID     string
	Number int
	Prompt string
	// Solved means the learner has answered it right; then every choice's
	// explanation is shown and the right one is marked.
	Solved   bool
	Choices  []Choice
	Feedback *Feedback
}

// Choice is one option. Explanation and Right are filled only once the
// question is solved.
type Choice struct {
	ID          string
	Text        string
	Explanation string
	Right       bool
	Chosen      bool
}

// Feedback is the result of the answer just given to a question (form
// posts without JavaScript), or an error about it.
type Feedback struct {
	Correct     bool
	Explanation string
	Error       string
	// NotSaved, when set, says why the answer was graded but not saved.
	NotSaved string
}

// ProgressText is the line under the questions, e.g. "1 of 3 right so far."
func (q Quiz) ProgressText() string {
	if q.Status == Completed {
		return "All " + numberWord(q.Total) + " right. You have finished this topic."
	}
	return itoa(q.Right) + " of " + itoa(q.Total) + " right so far."
}

// Carry is the page that moves progress to another browser: this
// browser's transfer code if it has a live one, and the form that takes a
// code from another device.
type Carry struct {
	Page
	// HasProgress: this browser has saved progress, so it may get a code.
	HasProgress bool
	// Code is the live code, grouped (K7QM-4TXP); Link opens the form
	// with it filled in, QR is the link as an SVG QR code (nil without an
	// absolute link), Until and ExpiresAt when it stops working.
	Code, Link       string
	QR               templ.Component
	Until, ExpiresAt string
	// TTL is how long a new code works, in words ("15 minutes").
	TTL string
	// IssueError says why no code was made; Entered and Error are the
	// code typed in the form and why it was refused.
	IssueError     string
	Entered, Error string
	Done           bool
}

// Race is the race widget: a scenario's settings and setup, its events
// and the outcomes of the run. Until the learner asks to see what
// happened, the page shows the setup only: the events, as a transcript,
// and the outcomes are folded away; race.js draws and plays them.
type Race struct {
	Compact   bool
	Heading   int // 1, 2 or 3: the level of the widget's title
	Scenario  string
	Title     string
	Setup     []string // what a learner may know before the run, no outcome
	Scenarios []RaceScenario
	Applies   map[string]bool

	TTL, Pause, Work        int64
	Fencing                 bool
	Release                 string
	ClockJump, RestartDelay int64
	ReplicationLag          int64
	Wait                    bool
	Renew                   string
	Seed                    uint64

	// Faults are the faults the learner added, in their URL form.
	Faults []RaceFault
	// Targets are what a new fault can hit in this run; FaultKinds are
	// the kinds of fault the form offers.
	Targets    []RaceScenario
	FaultKinds []RaceFaultKind

	// Choices are the outcomes a prediction offers, with their labels.
	Choices []VerdictOption
	// RunFields are the fields that reproduce this run, for the
	// prediction form.
	RunFields []RaceField
	// Shown is set when the learner sent the prediction form (without
	// JavaScript): what happened is then unfolded, with Judged, the
	// prediction judged outcome by outcome.
	Shown  bool
	Judged []RaceJudgement

	Events   []RaceEvent
	Outcomes []RaceOutcome
	Verdict  string
	Summary  string
	// API is the JSON address of this exact run, for race.js; PageURL
	// and PresentURL show the same run on /race and /race/present.
	API, PageURL, PresentURL string
	Error                    string
	// FaultError says why the fault the learner asked for was refused.
	FaultError string
}

// RaceField is one name and value of a form.
type RaceField struct{ Name, Value string }

// RaceFault is one fault the learner added: its URL form and a sentence.
type RaceFault struct{ Spec, Text string }

// RaceFaultKind is a kind of fault the fault form offers: its words, the
// label of its ARG field, and whether it can hit a client and a node.
type RaceFaultKind struct {
	Kind, Title, ArgLabel string
	Clients, Nodes        bool
}

// RaceOutcome is one thing that happened in a run, and when.
type RaceOutcome struct {
	ID, Label, Text string
	AtMS            int64
}

// RaceJudgement is a prediction judged on one outcome that the learner
// expected or that happened.
type RaceJudgement struct {
	ID, Label          string
	Expected, Happened bool
	AtMS               int64 // when it happened
}

// Right reports whether the learner was right about this outcome.
func (j RaceJudgement) Right() bool { return j.Expected == j.Happened }

// Sentence says how the prediction fared on this outcome.
func (j RaceJudgement) Sentence() string {
	switch {
	case j.Expected && j.Happened:
		return "You expected “" + j.Label + "”: right, at " + Seconds(j.AtMS) + "."
	case j.Expected:
		return "You expected “" + j.Label + "”: it did not happen."
	case j.Happened:
		return "You did not expect “" + j.Label + "”: it happened, at " + Seconds(j.AtMS) + "."
	}
	return "You did not expect “" + j.Label + "”, and it did not happen."
}

// Predicted reports whether the learner's prediction, sent with the
// form, has outcome id.
func (r Race) Predicted(id string) bool {
	for _, j := range r.Judged {
		if j.ID == id && j.Expected {
			return true
		}
	}
	return false
}

// SummarySaid reports whether one of the outcomes already says the
// run's summary, which is then not said twice.
func (r Race) SummarySaid() bool {
	for _, o := range r.Outcomes {
		if o.Text == r.Summary {
			return true
		}
	}
	return false
}

// OutcomeIDs is the outcomes' ids separated by spaces, for data-outcomes.
func (r Race) OutcomeIDs() string {
	ids := make([]string, len(r.Outcomes))
	for i, o := range r.Outcomes {
		ids[i] = o.ID
	}
	return strings.Join(ids, " ")
}

// RaceScenario is one entry of the scenario picker.
type RaceScenario struct {
	ID, Title string
}

// RaceEvent is one line of the transcript.
type RaceEvent struct {
	TMS   int64
	Actor string
	Kind  string
	Text  string
}

// RacePage is the full-page race at /race.
type RacePage struct {
	Page
	Race Race
	// PresentCSS is the presenter view's own style sheet.
	PresentCSS string
}

// VerdictOption is one outcome a prediction offers, with its label.
type VerdictOption struct{ ID, Label string }

// Seconds writes a time given in milliseconds as the race's transcript
// does ("12.5 s"): race.Seconds, for models that hold milliseconds.
func Seconds(ms int64) string {
	return race.Seconds(time.Duration(ms) * time.Millisecond)
}

// Playground is the redis-cli playground widget.
type Playground struct {
	// From says where the no-JavaScript forms return: "lesson" or "page".
	From  string
	Topic string
	// Client is the client the input sends as: "A" or "B".
	Client string
	// Target is the node the line form sends to: "" or "1" to "5",
	// "all", "storage".
	Target  string
	Entries []PGEntry
	// Transcript is Entries encoded for the forms' hidden field.
	Transcript string
	Keys       []PGKey
	ClockMS    int64
	// Nodes are the learner's five nodes as the node panel lists them.
	Nodes []PGNode
}

// PGNode is one of the learner's nodes in the node panel.
type PGNode struct {
	N int
	// State is "running", "stopped" or "not started".
	State string
	// Skew is how far its clock is from node 1's ("+31 s"); "" for none.
	Skew string
}

// PGEntry is one command and its reply in the transcript, or a notice.
type PGEntry struct {
	Client string `json:"c,omitempty"`
	Line   string `json:"l,omitempty"`
	Output string `json:"o,omitempty"`
	Notice string `json:"n,omitempty"`
}

// PGKey is one row of the key inspector. PTTLMS, the time to live left
// in milliseconds (-1 for none), lets playground.js count TTL down.
type PGKey struct {
	Key, Type, Value, TTL string
	PTTLMS                int64
	// Node is the learner's node the key is on; the inspector names
	// nodes 2 to 5.
	Node int
}

// NodeWord is the terminal's word for node n: "@3".
func NodeWord(n int) string { return "@" + strconv.Itoa(n) }

// PlaygroundPage is the full-page playground at /playground.
type PlaygroundPage struct {
	Page
	Playground Playground
}

// AdminLogin is the instructor's sign-in page.
type AdminLogin struct {
	Page
	Error string
}

// AdminHome lists the workshops.
type AdminHome struct {
	Page
	Workshops []WorkshopRow
	TitleMax  int // the longest title the workshop rules take, in characters
}

// WorkshopRow is one workshop in the list.
type WorkshopRow struct {
	Code, Title, Started, Ended string
	Running                     bool
}

// Dashboard is a workshop's live dashboard.
type Dashboard struct {
	Page
	Code, Title, JoinLink string
	Running               bool
	Tiles                 []Tile
	Questions             []QuestionStat
	Misconceptions        []Misconception
	Poll                  *PollView      // the current poll; nil if none
	Scenarios             []RaceScenario // what a poll may be opened on
	TitleMax              int
	// JoinClosed: newcomers are turned away (the instructor closed it).
	JoinClosed bool
	// Participants are listed in the order they joined.
	Participants []ParticipantRow
	// Notice says what the instructor's last action did.
	Notice string
}

// Tile is one number on the dashboard; Of, when set, is its total.
type Tile struct {
	Key, Label string
	Value, Of  int
}

// QuestionStat is how a workshop answered one question.
type QuestionStat struct {
	ID, Prompt                      string
	FirstTries, FirstRight, Answers int
	Choices                         []ChoiceStat
}

// ChoiceStat is how many answers chose one option.
type ChoiceStat struct {
	ID, Text string
	Count    int
	Right    bool
}

// Join is the learner's page for joining a workshop.
type Join struct {
	Page
	Code, Title, Nickname, Error string
	// NicknameTaken: Error is about the nickname, which another
	// participant has.
	NicknameTaken bool
	// CodeMax and NicknameMax are the longest code and nickname the
	// workshop rules take, in characters.
	CodeMax, NicknameMax int
}
