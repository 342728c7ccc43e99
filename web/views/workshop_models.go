package views

// View models of workshop polls and the pages around them.

// ParticipantRow is one participant on the dashboard: Key names them in
// the form that removes them (never their learner id).
type ParticipantRow struct {
	Key, Nickname      string
	Joined, LastActive string // times of day, UTC
	Commands, Answers  int
	Active             bool // did something in the last few minutes
}

// participantName is how a participant is named to a screen reader.
func participantName(p ParticipantRow) string {
	if p.Nickname == "" {
		return "the participant without a nickname who joined at " + p.Joined
	}
	return p.Nickname
}

// Misconception is a wrong quiz choice the room picks often.
type Misconception struct {
	Question, Choice string
	Count, Percent   int // Percent of the question's answers
}

// PollView is a poll as the dashboard and presenter view show it: the
// distribution, without names.
type PollView struct {
	ID                   string
	Number               int
	Title                string
	Setup                []string
	Choices              []PollChoiceView
	Answered, Joined     int
	Revealed             bool
	RunURL               string // the run on /race/present
	RevealAction, BackTo string // the reveal form's action and back field
}

// PollChoiceView is one outcome of a poll with how many picked it.
type PollChoiceView struct {
	ID, Label string
	Count     int
	Happened  bool // after the reveal
}

// PresentPage is a workshop's presenter view, for the projector.
type PresentPage struct {
	Page
	Code, Title, JoinLink string
	Poll                  *PollView
	Race                  *Race // the poll's run, after the reveal
	PresentCSS            string
}

// LearnerPage is a participant's workshop page: whom they joined as, a
// way to leave, and the poll.
type LearnerPage struct {
	Page
	Code, Title, Nickname string
	Running               bool
	Poll                  *LearnerPoll
	PickOne               bool // the last form had no outcome ticked
}

// LearnerPoll is a poll as a participant sees it.
type LearnerPoll struct {
	ID, Title string
	Setup     []string
	Choices   []LearnerChoice
	Revealed  bool
	Predicted bool
	AllRight  bool   // after the reveal: exactly the outcomes that happened
	RunURL    string // after the reveal: the run on /race
}

// LearnerChoice is one outcome of a poll for a participant.
type LearnerChoice struct {
	ID, Label        string
	Picked, Happened bool
}

// Right reports whether the participant was right about this outcome.
func (c LearnerChoice) Right() bool { return c.Picked == c.Happened }

// plural is n and the noun, with an s unless n is 1: "1 answer", "3 answers".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return itoa(n) + " " + noun + "s"
}
