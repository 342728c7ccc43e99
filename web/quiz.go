package web

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/locklab/locklab/progress"
	"github.com/locklab/locklab/quiz"
	"github.com/locklab/locklab/web/views"
)

// quizJSON is GET /api/topics/{slug}/quiz: the questions without any
// answer key, and the learner's progress.
type quizJSON struct {
	Questions []questionJSON `json:"questions"`
	Progress  quiz.Progress  `json:"progress"`
}

type questionJSON struct {
	ID      string       `json:"id"`
	Prompt  string       `json:"prompt"`
	Choices []choiceJSON `json:"choices"`
}

type choiceJSON struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

type answerRequest struct {
	Choice string `json:"choice"`
}

type answerJSON struct {
	Correct     bool          `json:"correct"`
	Explanation string        `json:"explanation"`
	Progress    quiz.Progress `json:"progress"`
	// NotSaved, when set, says why the answer was graded but not saved
	// (saving.go); Progress is then this answer's alone.
	NotSaved string `json:"not_saved,omitempty"`
}

func (s *Server) handleQuizAPI(c echo.Context) error {
	s.ensureLearner(c)
	q, err := s.quizzes.Quiz(c.Param("slug"))
	if err != nil {
		return err
	}
	out := quizJSON{Questions: []questionJSON{}}
	for _, qn := range q.Questions {
		qj := questionJSON{ID: qn.ID, Prompt: qn.Prompt}
		for _, ch := range qn.Choices {
			qj.Choices = append(qj.Choices, choiceJSON{ID: ch.ID, Text: ch.Text})
		}
		out.Questions = append(out.Questions, qj)
	}
	tp, err := s.topicProgress(c, q.Topic)
	if err != nil {
		return err
	}
	out.Progress = q.Progress(tp.Started, tp.Right)
	return c.JSON(http.StatusOK, out)
}

func (s *Server) handleAnswerAPI(c echo.Context) error {
	var req answerRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	res, p, notSaved, err := s.answer(c, c.Param("slug"), c.Param("question"), req.Choice)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, answerJSON{Correct: res.Correct, Explanation: res.Explanation, Progress: p, NotSaved: notSaved})
}

// handleAnswerForm is the same answer posted by the form when JavaScript is
// off: it returns the lesson page with the feedback under the question.
func (s *Server) handleAnswerForm(c echo.Context) error {
	slug, question, choice := c.Param("slug"), c.Param("question"), c.FormValue("choice")
	res, _, notSaved, err := s.answer(c, slug, question, choice)
	fb := &views.Feedback{Correct: res.Correct, Explanation: res.Explanation, NotSaved: notSaved}
	status := http.StatusOK
	if err != nil {
		code, msg := classify(err)
		if code == http.StatusNotFound && !errors.Is(err, quiz.ErrUnknownChoice) {
			return err
		}
		status, fb = code, &views.Feedback{Error: capitalize(msg) + "."}
	}
	return s.renderLessonWith(c, slug, status, lessonExtras{feedback: map[string]feedbackFor{question: {fb: fb, choice: choice}}})
}

// answer grades an answer and records it. Bad input changes nothing. An
// answer that may not be saved (saving.go) is graded all the same:
// notSaved then says why, and the progress is this answer's alone.
func (s *Server) answer(c echo.Context, slug, question, choice string) (res quiz.Result, p quiz.Progress, notSaved string, err error) {
	q, err := s.quizzes.Quiz(slug)
	if err != nil {
		return quiz.Result{}, quiz.Progress{}, "", err
	}
	if strings.TrimSpace(choice) == "" {
		if _, err := q.Question(question); err != nil {
			return quiz.Result{}, quiz.Progress{}, "", err
		}
		return quiz.Result{}, quiz.Progress{}, "", echo.NewHTTPError(http.StatusBadRequest, "choose one of the answers first")
	}
	res, err = q.Grade(question, choice)
	if err != nil {
		return quiz.Result{}, quiz.Progress{}, "", err
	}
	id := s.ensureLearner(c)
	notSaved, err = s.admitProgress(c.Request().Context(), id, clientAddress(c))
	if err != nil {
		return quiz.Result{}, quiz.Progress{}, "", err
	}
	var tp progress.TopicProgress
	if notSaved == "" {
		tp, err = s.progress.RecordAnswer(c.Request().Context(), id, q.Topic, question, res.Correct)
		notSaved = notSavedFor(err)
	}
	s.metrics.answers.WithLabelValues(q.Topic, map[bool]string{true: "right", false: "wrong"}[res.Correct]).Inc()
	if notSaved != "" {
		// A workshop still counts the answer: only progress is not kept.
		tp = progress.TopicProgress{Started: true}
		if res.Correct {
			tp.Right = []string{question}
		}
		p = q.Progress(tp.Started, tp.Right)
		s.answered(c, q.Topic, question, choice, res.Correct, p)
		return res, p, notSaved, nil
	}
	if err != nil {
		return quiz.Result{}, quiz.Progress{}, "", err
	}
	p = q.Progress(tp.Started, tp.Right)
	s.answered(c, q.Topic, question, choice, res.Correct, p)
	return res, p, "", nil
}

// topicProgress reads the learner's progress on a topic; a learner without
// a cookie has none.
func (s *Server) topicProgress(c echo.Context, topic string) (progress.TopicProgress, error) {
	id := s.learnerID(c)
	if id == "" {
		return progress.TopicProgress{}, nil
	}
	return s.progress.Topic(c.Request().Context(), id, topic)
}

type feedbackFor struct {
	fb     *views.Feedback
	choice string
}

// quizView builds the "Check yourself" view model. Explanations and the
// right choice are included only for questions already answered right.
func quizView(q *quiz.Quiz, tp progress.TopicProgress, feedback map[string]feedbackFor) views.Quiz {
	p := q.Progress(tp.Started, tp.Right)
	solved := map[string]bool{}
	for _, id := range tp.Right {
		solved[id] = true
	}
	v := views.Quiz{Topic: q.Topic, Right: p.Right, Total: p.Total, Status: views.Status(p.Status)}
	for i, qn := range q.Questions {
		fb := feedback[qn.ID]
		qv := views.Question{ID: qn.ID, Number: i + 1, Prompt: qn.Prompt, Solved: solved[qn.ID], Feedback: fb.fb}
		for _, ch := range qn.Choices {
			cv := views.Choice{ID: ch.ID, Text: ch.Text, Chosen: ch.ID == fb.choice}
			if qv.Solved {
				cv.Explanation, cv.Right = ch.Explanation, qn.IsRight(ch.ID)
			}
			qv.Choices = append(qv.Choices, cv)
		}
		v.Questions = append(v.Questions, qv)
	}
	return v
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
