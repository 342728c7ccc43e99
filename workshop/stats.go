package workshop

import (
	"sort"
	"strings"
	"time"
)

// Data is a workshop's raw state as a Backend keeps it: the workshop-wide
// counters that Plans name, and the members.
type Data struct {
	Workshop Workshop
	Counts   map[string]int
	Members  []Member
}

// Member is one participant as a Backend keeps them, with the counters
// that Plans name for a participant.
type Member struct {
	Learner, Nickname    string
	JoinedAt, LastActive time.Time
	Counts               map[string]int
}

func (m Member) participant(code string) Participant {
	return Participant{
		Learner:    m.Learner,
		Key:        ParticipantKey(code, m.Learner),
		Nickname:   m.Nickname,
		JoinedAt:   m.JoinedAt,
		LastActive: m.LastActive,
		Answers:    m.Counts[pcountAnswers],
		FirstRight: m.Counts[pcountFirstRight],
		Completed:  m.Counts[pcountCompleted] > 0,
		Commands:   m.Counts[pcountCommands],
		Races:      m.Counts[pcountRaces],
		LabSolves:  m.Counts[pcountLabSolves],
	}
}

// QuestionStats is how a workshop answered one quiz question.
type QuestionStats struct {
	Choices    map[string]int // choice id -> how many answers chose it (all tries)
	FirstTries int            // participants who have answered it at least once
	FirstRight int            // of those, how many were right on their first try
}

// Stats is what the dashboard shows about a workshop.
type Stats struct {
	Workshop         Workshop
	Joined           int
	Active           int                      // participants active (joined or any event) at or after activeSince
	Questions        map[string]QuestionStats // by question id
	Completions      int                      // participants who completed a topic (count each participant once per topic)
	Commands         int
	Races            int
	Predictions      int
	PredictionsRight int
	LabSolves        int // lab challenges solved, each participant's each challenge once
}

// Stats adds up d; members count as active if they joined or did
// something at or after activeSince.
func (d Data) Stats(activeSince time.Time) Stats {
	st := Stats{
		Workshop:         d.Workshop,
		Joined:           len(d.Members),
		Questions:        map[string]QuestionStats{},
		Completions:      d.Counts[countCompletions],
		Commands:         d.Counts[countCommands],
		Races:            d.Counts[countRaces],
		Predictions:      d.Counts[countPredictions],
		PredictionsRight: d.Counts[countPredictionsRight],
		LabSolves:        d.Counts[countLabSolves],
	}
	for _, m := range d.Members {
		if !m.LastActive.Before(activeSince) {
			st.Active++
		}
	}
	question := func(id string) QuestionStats {
		qs := st.Questions[id]
		if qs.Choices == nil {
			qs.Choices = map[string]int{}
		}
		return qs
	}
	for name, n := range d.Counts {
		switch {
		case strings.HasPrefix(name, countChoicePrefix):
			q, c, ok := strings.Cut(strings.TrimPrefix(name, countChoicePrefix), "/")
			if !ok {
				continue
			}
			qs := question(q)
			qs.Choices[c] = n
			st.Questions[q] = qs
		case strings.HasPrefix(name, countTriesPrefix):
			q := strings.TrimPrefix(name, countTriesPrefix)
			qs := question(q)
			qs.FirstTries = n
			st.Questions[q] = qs
		case strings.HasPrefix(name, countFirstRightPrefix):
			q := strings.TrimPrefix(name, countFirstRightPrefix)
			qs := question(q)
			qs.FirstRight = n
			st.Questions[q] = qs
		}
	}
	return st
}

// Question is a quiz question as the dashboard lists it: the course's
// questions, in course order, with which choice is right.
type Question struct {
	ID, Prompt string
	Choices    []Choice
}

// Choice is one choice of a Question.
type Choice struct {
	ID, Text string
	Right    bool
}

// Dashboard is what an instructor's dashboard shows, and what its event
// stream sends again whenever it changes.
type Dashboard struct {
	Code             string              `json:"code"`
	Title            string              `json:"title"`
	Running          bool                `json:"running"`
	Joined           int                 `json:"joined"`
	Active           int                 `json:"active"`
	Completions      int                 `json:"completions"`
	Commands         int                 `json:"commands"`
	Races            int                 `json:"races"`
	Predictions      int                 `json:"predictions"`
	PredictionsRight int                 `json:"predictions_right"`
	LabSolves        int                 `json:"lab_solves"`
	Questions        []DashboardQuestion `json:"questions"`
	// Misconceptions are the wrong choices picked most often, most
	// picked first: what the instructor may want to address.
	Misconceptions []Misconception `json:"misconceptions"`
}

// Misconception is a wrong choice and how often it was picked.
type Misconception struct {
	Question string  `json:"question"` // the prompt
	Choice   string  `json:"choice"`   // the choice's text
	Count    int     `json:"count"`
	Share    float64 `json:"share"` // of the question's answers
}

// maxMisconceptions is how many wrong choices the dashboard lists.
const maxMisconceptions = 5

// misconceptions are d's most picked wrong choices, at most
// maxMisconceptions, ties in course order.
func misconceptions(qs []DashboardQuestion) []Misconception {
	out := []Misconception{}
	for _, q := range qs {
		for _, ch := range q.Choices {
			if !ch.Right && ch.Count > 0 {
				out = append(out, Misconception{Question: q.Prompt, Choice: ch.Text, Count: ch.Count, Share: float64(ch.Count) / float64(max(q.Answers, 1))})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Count > out[j].Count })
	return out[:min(len(out), maxMisconceptions)]
}

// DashboardQuestion is how the room answered one question.
type DashboardQuestion struct {
	ID         string            `json:"id"`
	Prompt     string            `json:"prompt"`
	FirstTries int               `json:"first_tries"`
	FirstRight int               `json:"first_right"`
	Answers    int               `json:"answers"` // all tries
	Choices    []DashboardChoice `json:"choices"`
}

// DashboardChoice is how often one choice was picked.
type DashboardChoice struct {
	ID    string `json:"id"`
	Text  string `json:"text"`
	Count int    `json:"count"`
	Right bool   `json:"right"`
}

// NewDashboard puts st beside the course's questions: every question is
// listed, in the order given, answered or not.
func NewDashboard(st Stats, questions []Question) Dashboard {
	d := Dashboard{
		Code: st.Workshop.Code, Title: st.Workshop.Title, Running: st.Workshop.Running(),
		Joined: st.Joined, Active: st.Active, Completions: st.Completions, Commands: st.Commands,
		Races: st.Races, Predictions: st.Predictions, PredictionsRight: st.PredictionsRight,
		LabSolves: st.LabSolves, Questions: []DashboardQuestion{},
	}
	for _, qn := range questions {
		qs := st.Questions[qn.ID]
		out := DashboardQuestion{ID: qn.ID, Prompt: qn.Prompt, FirstTries: qs.FirstTries, FirstRight: qs.FirstRight}
		for _, ch := range qn.Choices {
			n := qs.Choices[ch.ID]
			out.Answers += n
			out.Choices = append(out.Choices, DashboardChoice{ID: ch.ID, Text: ch.Text, Count: n, Right: ch.Right})
		}
		d.Questions = append(d.Questions, out)
	}
	d.Misconceptions = misconceptions(d.Questions)
	return d
}
