package quiz

import (
	"errors"
	"os"
	"strings"
	"testing"
	"testing/fstest"
)

func loadReal(t *testing.T) *Quiz {
	t.Helper()
	b, err := Load(os.DirFS("../content"))
	if err != nil {
		t.Fatalf("Load(content) = %v", err)
	}
	q, err := b.Quiz("distributed-locks")
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func TestRealQuiz(t *testing.T) {
	q := loadReal(t)
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
			t.Errorf("question %s has %d right choices", qn.ID, rights)
		}
	}
}

func TestGrade(t *testing.T) {
	q := loadReal(t)
	for _, tt := range []struct {
		question, choice string
		want             bool
		wantErr          error
		wantText         string
	}{
		{"release-script", "other-holder", true, nil, "late release"},
		{"release-script", "get-then-del", false, nil, "two separate commands"},
		{"gc-pause", "fencing", true, nil, "token 33"},
		{"gc-pause", "longer-ttl", false, nil, "shrinks the window"},
		{"nightly-report", "efficiency", true, nil, "idempotent"},
		{"nightly-report", "correctness-bug", false, nil, "duplicate work"},
		{"nope", "fencing", false, ErrUnknownQuestion, ""},
		{"gc-pause", "nope", false, ErrUnknownChoice, ""},
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
	q := loadReal(t)
	for _, tt := range []struct {
		name    string
		started bool
		right   []string
		want    Progress
	}{
		{"nothing yet", false, nil, Progress{0, 3, NotStarted}},
		{"used the playground", true, nil, Progress{0, 3, InProgress}},
		{"one right", true, []string{"gc-pause"}, Progress{1, 3, InProgress}},
		{"right twice counts once", true, []string{"gc-pause", "gc-pause"}, Progress{1, 3, InProgress}},
		{"unknown ids ignored", true, []string{"gone", "gc-pause"}, Progress{1, 3, InProgress}},
		{"all three", true, []string{"gc-pause", "release-script", "nightly-report"}, Progress{3, 3, Completed}},
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
