package content

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/locklab/locklab/quiz"
)

// embeddedWith is the embedded content with some files replaced or added.
func embeddedWith(t *testing.T, files map[string]string) fstest.MapFS {
	t.Helper()
	out := fstest.MapFS{}
	err := fs.WalkDir(Embedded(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(Embedded(), p)
		out[p] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for p, body := range files {
		out[p] = &fstest.MapFile{Data: []byte(body)}
	}
	return out
}

// withRace is the embedded lesson with its race: id replaced.
func withRace(t *testing.T, id string) map[string]string {
	t.Helper()
	b, err := fs.ReadFile(Embedded(), "lessons/distributed-locks.md")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), "\nrace: gc-pause\n", "\nrace: "+id+"\n", 1)
	if s == string(b) {
		t.Fatal("the embedded lesson has no race: gc-pause line to replace")
	}
	return map[string]string{"lessons/distributed-locks.md": s}
}

func orphanQuiz(t *testing.T) map[string]string {
	t.Helper()
	b, err := fs.ReadFile(Embedded(), "quizzes/distributed-locks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), "\ntopic: distributed-locks\n", "\ntopic: leader-election\n", 1)
	if s == string(b) {
		t.Fatal("the embedded quiz has no topic: distributed-locks line to replace")
	}
	return map[string]string{"quizzes/leader-election.yaml": s}
}

var scenarios = Known{RaceScenarios: []string{"gc-pause", "clock-jump"}}

func TestLoadSite(t *testing.T) {
	for _, tt := range []struct {
		name    string
		files   func(*testing.T) map[string]string
		known   Known
		wantIs  error
		wantErr string // "" for success
	}{
		{"embedded", func(*testing.T) map[string]string { return nil }, scenarios, nil, ""},
		{"another known scenario", func(t *testing.T) map[string]string { return withRace(t, "clock-jump") }, scenarios, nil, ""},
		{"unknown scenario", func(t *testing.T) map[string]string { return withRace(t, "gc-pasue") }, scenarios, ErrInvalid,
			`lessons/distributed-locks.md: front matter: race "gc-pasue" is not a race scenario (there are gc-pause, clock-jump)`},
		{"no scenarios to check against", func(t *testing.T) map[string]string { return withRace(t, "gc-pasue") }, Known{}, nil, ""},
		{"quiz without a lesson", orphanQuiz, scenarios, quiz.ErrInvalid,
			`quizzes/leader-election.yaml: there is no lesson "leader-election"`},
		{"broken quiz", func(*testing.T) map[string]string {
			return map[string]string{"quizzes/distributed-locks.yaml": "questions: [\n"}
		}, scenarios, quiz.ErrInvalid, "quizzes/distributed-locks.yaml"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			site, err := LoadSite(embeddedWith(t, tt.files(t)), tt.known)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("LoadSite = %v; want no error", err)
				}
				if _, ok := site.Course.Lesson("distributed-locks"); !ok {
					t.Error("the site has no distributed-locks lesson")
				}
				if _, err := site.Quizzes.Quiz("distributed-locks"); err != nil {
					t.Errorf("Quizzes.Quiz(distributed-locks) = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, tt.wantIs) {
				t.Fatalf("LoadSite = %v; want an error containing %q wrapping %v", err, tt.wantErr, tt.wantIs)
			}
		})
	}
}

// TestReloaderChecks checks that the authoring mode applies the start-up
// checks on every load: a lesson naming an unknown scenario breaks the
// course, and a quiz without a lesson breaks the quizzes but not the
// lesson pages.
func TestReloaderChecks(t *testing.T) {
	r := Reloader{FS: embeddedWith(t, withRace(t, "gc-pasue")), Known: scenarios}
	if _, err := r.Course(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `race "gc-pasue"`) {
		t.Errorf("Course with an unknown scenario = %v; want ErrInvalid naming it", err)
	}
	if _, err := r.Quiz("distributed-locks"); !errors.Is(err, ErrInvalid) {
		t.Errorf("Quiz with an unknown scenario = %v; want ErrInvalid", err)
	}

	r = Reloader{FS: embeddedWith(t, orphanQuiz(t)), Known: scenarios}
	if _, err := r.Course(); err != nil {
		t.Errorf("Course with a quiz without a lesson = %v; want the course", err)
	}
	if _, err := r.Quiz("distributed-locks"); !errors.Is(err, quiz.ErrInvalid) {
		t.Errorf("Quiz with a quiz without a lesson = %v; want quiz.ErrInvalid", err)
	}

	r = Reloader{FS: Embedded(), Known: scenarios}
	if q, err := r.Quiz("distributed-locks"); err != nil || q == nil {
		t.Errorf("Quiz(distributed-locks) = %v, %v; want the quiz", q, err)
	}
	if _, err := r.Quiz("leader-election"); !errors.Is(err, quiz.ErrUnknownTopic) {
		t.Errorf("Quiz(leader-election) = %v; want quiz.ErrUnknownTopic", err)
	}
}
