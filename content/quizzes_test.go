package content

import (
	"testing"

	"github.com/locklab/locklab/quiz"
)

// TestCourseQuizShape checks the course's own quiz as authored: three
// questions of four choices, one of them right. The quiz package tests
// grading on a fixture of its own; this is about the course text.
func TestCourseQuizShape(t *testing.T) {
	bank, err := quiz.Load(Embedded())
	if err != nil {
		t.Fatalf("quiz.Load(Embedded()) = %v", err)
	}
	q, err := bank.Quiz("distributed-locks")
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Questions) != 3 {
		t.Fatalf("%d questions; want 3", len(q.Questions))
	}
	for _, qn := range q.Questions {
		if len(qn.Choices) != 4 {
			t.Errorf("question %s has %d choices; want 4", qn.ID, len(qn.Choices))
		}
		rights := 0
		for _, c := range qn.Choices {
			if qn.IsRight(c.ID) {
				rights++
			}
		}
		if rights != 1 {
			t.Errorf("question %s has %d right choices; want 1", qn.ID, rights)
		}
	}
}
