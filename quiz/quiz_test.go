package quiz

import (
	"errors"
	"os"
	"strings"
	"testing"
	"testing/fstest"
)

// loadFixture loads the quiz package's own quizzes in testdata, not the
// course's: these tests are about grading and progress, and must not
// change when an author edits a question.
func loadFixture(t *testing.T) *Bank {
	t.Helper()
	b, err := Load(os.DirFS("testdata"))
	if err != nil {
		t.Fatalf("Load(testdata) = %v", err)
	}
	return b
}

func colours(t *testing.T) *Quiz {
	t.Helper()
	q, err := loadFixture(t).Quiz("colours")
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func TestBank(t *testing.T) {
	b := loadFixture(t)
	for _, tt := range []struct {
		topic     string
		questions int
		wantErr   error
	}{
		{"colours", 3, nil},
		{"shapes", 1, nil},
		{"distributed-locks", 0, ErrUnknownTopic},
	} {
		q, err := b.Quiz(tt.topic)
		if !errors.Is(err, tt.wantErr) {
			t.Errorf("Quiz(%q) error = %v; want %v", tt.topic, err, tt.wantErr)
			continue
		}
		if err == nil && (q.Topic != tt.topic || len(q.Questions) != tt.questions) {
			t.Errorf("Quiz(%q) = topic %q with %d questions; want %d", tt.topic, q.Topic, len(q.Questions), tt.questions)
		}
	}
}

func TestGrade(t *testing.T) {
	q := colours(t)
	for _, tt := range []struct {
		question, choice string
		want             bool
		wantErr          error
		wantText         string
	}{
		{"sky", "blue", true, nil, "scatters blue"},
		{"sky", "red", false, nil, "sunset"},
		{"grass", "green", true, nil, "Chlorophyll"},
		{"grass", "purple", false, nil, "Not usually"},
		{"snow", "white", true, nil, "every colour"},
		{"snow", "black", false, nil, "soot"},
		{"sky", "white", false, ErrUnknownChoice, ""},
		{"nope", "blue", false, ErrUnknownQuestion, ""},
		{"sky", "nope", false, ErrUnknownChoice, ""},
	} {
		got, err := q.Grade(tt.question, tt.choice)
		if !errors.Is(err, tt.wantErr) {
			t.Errorf("Grade(%q, %q) error = %v; want %v", tt.question, tt.choice, err, tt.wantErr)
			continue
		}
		if err == nil && (got.Correct != tt.want || !strings.Contains(got.Explanation, tt.wantText)) {
			t.Errorf("Grade(%q, %q) = %+v; want correct=%v with %q", tt.question, tt.choice, got, tt.want, tt.wantText)
		}
	}
}

func TestProgress(t *testing.T) {
	q := colours(t)
	for _, tt := range []struct {
		name    string
		started bool
		right   []string
		want    Progress
	}{
		{"nothing yet", false, nil, Progress{0, 3, NotStarted}},
		{"used the playground", true, nil, Progress{0, 3, InProgress}},
		{"a right answer starts the topic", false, []string{"sky"}, Progress{1, 3, InProgress}},
		{"one right", true, []string{"sky"}, Progress{1, 3, InProgress}},
		{"right twice counts once", true, []string{"sky", "sky"}, Progress{1, 3, InProgress}},
		{"unknown ids ignored", true, []string{"gone", "corners", "sky"}, Progress{1, 3, InProgress}},
		{"all three", true, []string{"sky", "grass", "snow"}, Progress{3, 3, Completed}},
	} {
		if got := q.Progress(tt.started, tt.right); got != tt.want {
			t.Errorf("%s: Progress(%v, %q) = %+v; want %+v", tt.name, tt.started, tt.right, got, tt.want)
		}
	}
}

func TestLoadRejects(t *testing.T) {
	good := `topic: t
questions:
  - id: q
    prompt: P?
    choices:
      - {id: a, text: A, explanation: EA, correct: true}
      - {id: b, text: B, explanation: EB}
`
	for _, tt := range []struct{ name, src, want string }{
		{"no right choice", strings.Replace(good, ", correct: true", "", 1), "exactly one right choice, has 0"},
		{"two right choices", strings.Replace(good, "EB}", "EB, correct: true}", 1), "exactly one right choice, has 2"},
		{"no explanation", strings.Replace(good, "explanation: EB", "explanation: ''", 1), "no explanation"},
		{"duplicate choice", strings.Replace(good, "id: b", "id: a", 1), "used twice"},
		{"topic mismatch", strings.Replace(good, "topic: t", "topic: u", 1), "match the file name"},
		{"unknown field", strings.Replace(good, "prompt:", "promt:", 1), "promt"},
		{"one choice", strings.Replace(good, "      - {id: b, text: B, explanation: EB}\n", "", 1), "at least two choices"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(fstest.MapFS{"quizzes/t.yaml": {Data: []byte(tt.src)}})
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.HasPrefix(err.Error(), "quizzes/t.yaml:") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Load = %v; want an ErrInvalid naming quizzes/t.yaml and %q", err, tt.want)
			}
		})
	}
	if _, err := Load(fstest.MapFS{"quizzes/t.yaml": {Data: []byte(good)}}); err != nil {
		t.Errorf("Load(good) = %v", err)
	}
}
