package workshop

import (
	"reflect"
	"testing"
	"time"
)

func TestParticipantRows(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	ps := []Participant{
		{Nickname: "Ann", JoinedAt: t0.In(cet), LastActive: t0.Add(90 * time.Second), Answers: 2, FirstRight: 1, Completed: true, Commands: 3, Races: 1, LabSolves: 2},
		{Nickname: "", JoinedAt: t0, LastActive: t0},
		{Nickname: "=HYPERLINK(\"x\")", JoinedAt: t0, LastActive: t0},
	}
	want := [][]string{
		{"nickname", "joined_at", "last_active", "answers", "first_try_right", "completed", "commands", "races", "lab_solves"},
		{"Ann", "2026-03-01T09:00:00Z", "2026-03-01T09:01:30Z", "2", "1", "true", "3", "1", "2"},
		{"", "2026-03-01T09:00:00Z", "2026-03-01T09:00:00Z", "0", "0", "false", "0", "0", "0"},
		{"'=HYPERLINK(\"x\")", "2026-03-01T09:00:00Z", "2026-03-01T09:00:00Z", "0", "0", "false", "0", "0", "0"},
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
		{ID: "q1", Prompt: "Why a token?", FirstTries: 2, FirstRight: 1, Answers: 4, Choices: []DashboardChoice{{ID: "a", Text: "To release only your own lock", Count: 3, Right: true}, {ID: "b", Text: "=speed", Count: 1}}},
		{ID: "q2", Prompt: "TTL?", Choices: []DashboardChoice{{ID: "c", Text: "Yes", Right: true}}},
		{ID: "q3"}, // no choices: no rows
	}}
	want := [][]string{
		{"question_id", "question", "choice_id", "choice", "right", "answers", "share", "first_tries", "first_right"},
		{"q1", "Why a token?", "", "", "", "4", "", "2", "1"},
		{"q1", "Why a token?", "a", "To release only your own lock", "true", "3", "0.75", "", ""},
		{"q1", "Why a token?", "b", "'=speed", "false", "1", "0.25", "", ""},
		{"q2", "TTL?", "", "", "", "0", "", "0", "0"},
		{"q2", "TTL?", "c", "Yes", "true", "0", "0.00", "", ""},
	}
	if got := QuestionRows(d); !reflect.DeepEqual(got, want) {
		t.Errorf("QuestionRows = %q\nwant %q", got, want)
	}
}

func TestPollRows(t *testing.T) {
	choices := []PollChoice{{ID: "two-holders", Label: "Two holders"}, {ID: "safe", Label: "Safe"}}
	rs := []PollResult{
		{Number: 1, Poll: Poll{ID: "p1", OpenedAt: t0, RevealedAt: t0.Add(time.Minute), PollSpec: PollSpec{Scenario: "gc-pause", Title: "GC pause", Query: "ttl_ms=100", Choices: choices, Outcomes: []string{"two-holders"}}},
			Answered: 4, Joined: 5, Counts: map[string]int{"two-holders": 3, "safe": 2}},
		{Number: 2, Poll: Poll{ID: "p2", OpenedAt: t0.Add(time.Hour), PollSpec: PollSpec{Scenario: "normal", Title: "Normal", Choices: choices[1:], Outcomes: []string{"safe"}}}, Joined: 5},
	}
	want := [][]string{
		{"poll", "opened_at", "scenario", "title", "settings", "outcome", "label", "picked", "share", "answered", "joined", "revealed", "happened"},
		{"1", "2026-03-01T09:00:00Z", "gc-pause", "GC pause", "ttl_ms=100", "two-holders", "Two holders", "3", "0.75", "4", "5", "true", "true"},
		{"1", "2026-03-01T09:00:00Z", "gc-pause", "GC pause", "ttl_ms=100", "safe", "Safe", "2", "0.50", "4", "5", "true", "false"},
		{"2", "2026-03-01T10:00:00Z", "normal", "Normal", "", "safe", "Safe", "0", "0.00", "0", "5", "false", ""},
	}
	if got := PollRows(rs); !reflect.DeepEqual(got, want) {
		t.Errorf("PollRows = %q\nwant %q", got, want)
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
