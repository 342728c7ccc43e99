// Package quiz holds the "Check yourself" questions of each topic, grades
// answers and applies the rule that a topic is finished when every question
// has been answered right. It knows nothing of HTTP or storage: the web
// layer asks it to grade, a store remembers what was right.
package quiz

import (
	"errors"
	"fmt"
)

// Errors returned for answers that do not fit the quiz. The web layer maps
// them to 404 and 400.
var (
	ErrUnknownTopic    = errors.New("no quiz for this topic")
	ErrUnknownQuestion = errors.New("no such question")
	ErrUnknownChoice   = errors.New("no such choice")
)

// Bank is every topic's quiz, keyed by topic slug.
type Bank struct {
	quizzes map[string]*Quiz
}

// Quiz returns the quiz of a topic.
func (b *Bank) Quiz(topic string) (*Quiz, error) {
	q, ok := b.quizzes[topic]
	if !ok {
		return nil, fmt.Errorf("quiz %q: %w", topic, ErrUnknownTopic)
	}
	return q, nil
}

// Topics returns the slugs of the topics that have a quiz.
func (b *Bank) Topics() []string {
	var out []string
	for t := range b.quizzes {
		out = append(out, t)
	}
	return out
}

// Quiz is one topic's questions, in the order they are asked.
type Quiz struct {
	Topic     string
	Questions []*Question
}

// Question is a multiple-choice question with exactly one right choice.
// Which one is right is unexported: code that shows a question to a learner
// cannot leak it by accident.
type Question struct {
	ID      string
	Prompt  string
	Choices []Choice
	right   string
}

// Choice is one option of a question, with the explanation shown once the
// learner has picked it.
type Choice struct {
	ID          string
	Text        string
	Explanation string
}

// Result is the outcome of grading one answer.
type Result struct {
	Correct     bool
	Explanation string
}

// Question returns the question with the given id.
func (q *Quiz) Question(id string) (*Question, error) {
	for _, qn := range q.Questions {
		if qn.ID == id {
			return qn, nil
		}
	}
	return nil, fmt.Errorf("quiz %q question %q: %w", q.Topic, id, ErrUnknownQuestion)
}

// Grade checks an answer and returns the explanation of the chosen option.
func (q *Quiz) Grade(questionID, choiceID string) (Result, error) {
	qn, err := q.Question(questionID)
	if err != nil {
		return Result{}, err
	}
	for _, c := range qn.Choices {
		if c.ID == choiceID {
			return Result{Correct: c.ID == qn.right, Explanation: c.Explanation}, nil
		}
	}
	return Result{}, fmt.Errorf("quiz %q question %q choice %q: %w", q.Topic, questionID, choiceID, ErrUnknownChoice)
}

// IsRight reports whether choiceID is the right choice. Views use it only
// for questions the learner has already answered right.
func (qn *Question) IsRight(choiceID string) bool { return choiceID == qn.right }

// Status is where a learner stands on a topic.
type Status string

// The three statuses of a topic.
const (
	NotStarted Status = "not-started"
	InProgress Status = "in-progress"
	Completed  Status = "completed"
)

// Progress is a learner's standing on one topic's quiz.
type Progress struct {
	Right  int    `json:"right"`
	Total  int    `json:"total"`
	Status Status `json:"status"`
}

// Progress applies the finishing rule: a topic is completed once every
// question has been answered right, in progress once the learner has done
// anything (answered, or used the playground), and not started otherwise.
// right holds the ids of questions answered right; ids the quiz no longer
// has are ignored, and each question counts once.
func (q *Quiz) Progress(started bool, right []string) Progress {
	seen := map[string]bool{}
	for _, id := range right {
		if _, err := q.Question(id); err == nil {
			seen[id] = true
		}
	}
	p := Progress{Right: len(seen), Total: len(q.Questions), Status: NotStarted}
	switch {
	case p.Total > 0 && p.Right == p.Total:
		p.Status = Completed
	case started || len(right) > 0:
		p.Status = InProgress
	}
	return p
}
