package workshop

import (
	"reflect"
	"testing"
	"time"
)

func TestParticipantRows(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	ps := []Participant{
		{Nickname: "Ann", JoinedAt: t0.In(cet), LastActive: t0.Add(90 * time.Second), Answers: 2, FirstRight: 1, Completed: true, Commands: 3, Races: 1},
		{Nickname: "", JoinedAt: t0, LastActive: t0},
		{Nickname: "=HYPERLINK(\"x\")", JoinedAt: t0, LastActive: t0},
	}
	want := [][]string{
		{"nickname", "joined_at", "last_active", "answers", "first_try_right", "completed", "commands", "races"},
		{"Ann", "2026-03-01T09:00:00Z", "2026-03-01T09:01:30Z", "2", "1", "true", "3", "1"},
		{"", "2026-03-01T09:00:00Z", "2026-03-01T09:00:00Z", "0", "0", "false", "0", "0"},
		{"'=HYPERLINK(\"x\")", "2026-03-01T09:00:00Z", "2026-03-01T09:00:00Z", "0", "0", "false", "0", "0"},
	}
	if got := ParticipantRows(ps); !reflect.DeepEqual(got, want) {
		t.Errorf("ParticipantRows = %q\nwant %q", got, want)
	}
	if got := ParticipantRows(nil); len(got) != 1 {
		t.Errorf("ParticipantRows(nil) = %q; want the header only", got)
	}
}

func TestQuestionRows(t *testing.T) {
	d := Dashboard{Questions: []DashboardQuestion{
		{ID: "q1", FirstTries: 2, FirstRight: 1, Choices: []DashboardChoice{{ID: "a", Count: 3, Right: true}, {ID: "b", Count: 1}}},
		{ID: "q2", Choices: []DashboardChoice{{ID: "c", Right: true}}},
		{ID: "q3"}, // no choices: no rows
	}}
	want := [][]string{
		{"question", "choice", "right", "answers", "first_tries", "first_right"},
		{"q1", "a", "true", "3", "2", "1"},
		{"q1", "b", "false", "1", "2", "1"},
		{"q2", "c", "true", "0", "0", "0"},
	}
	if got := QuestionRows(d); !reflect.DeepEqual(got, want) {
		t.Errorf("QuestionRows = %q\nwant %q", got, want)
	}
}

// TestCSVSafe checks that a nickname a spreadsheet would run as a formula
// is quoted, and nothing else is changed.
func TestCSVSafe(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"Ann", "Ann"},
		{"a=b", "a=b"},
		{"=1+1", "'=1+1"},
		{"+1", "'+1"},
		{"-1", "'-1"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\tx", "'\tx"},
		{"\rx", "'\rx"},
		{"'quoted", "'quoted"},
	} {
		if got := csvSafe(tt.in); got != tt.want {
			t.Errorf("csvSafe(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}
