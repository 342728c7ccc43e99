package workshop

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

func minute(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }

// testData is a workshop as a back end might return it: counters as
// plans name them, and members in no particular order.
func testData() Data {
	return Data{
		Workshop: Workshop{Code: "STATS", Title: "Stats", StartedAt: t0},
		Counts: map[string]int{
			"choice/q1/a": 3, "choice/q1/b": 1, "tries/q1": 2, "firstright/q1": 1,
			"choice/q2/c": 1, "tries/q2": 1, // nobody right on the first try
			"firstright/q3": 1, // only this counter: the question still shows
			"choice/broken": 7, // no choice part: ignored
			"completions":   3, "commands": 4, "races": 5, "predictions": 2, "predictions-right": 1,
			"unknown": 9,
		},
		Members: []Member{
			{Learner: "carol", Nickname: "Cee", JoinedAt: minute(1), LastActive: minute(9), Counts: map[string]int{"answers": 1, "races": 2}},
			{Learner: "bob", JoinedAt: minute(0), LastActive: minute(2)},
			{Learner: "alice", Nickname: "Ann", JoinedAt: minute(0), LastActive: minute(5),
				Counts: map[string]int{"answers": 2, "firstright": 1, "completed": 2, "commands": 3, "races": 1}},
		},
	}
}

func TestDataStats(t *testing.T) {
	want := Stats{
		Workshop: Workshop{Code: "STATS", Title: "Stats", StartedAt: t0},
		Joined:   3,
		Active:   2,
		Questions: map[string]QuestionStats{
			"q1": {Choices: map[string]int{"a": 3, "b": 1}, FirstTries: 2, FirstRight: 1},
			"q2": {Choices: map[string]int{"c": 1}, FirstTries: 1},
			"q3": {Choices: map[string]int{}, FirstRight: 1},
		},
		Completions: 3, Commands: 4, Races: 5, Predictions: 2, PredictionsRight: 1,
	}
	if got := testData().Stats(minute(5)); !reflect.DeepEqual(got, want) {
		t.Errorf("Stats = %+v\nwant %+v", got, want)
	}
	for _, tt := range []struct {
		since time.Time
		want  int
	}{
		{time.Time{}, 3},
		{minute(2), 3}, // at activeSince counts
		{minute(3), 2},
		{minute(9), 1},
		{minute(10), 0},
	} {
		if got := testData().Stats(tt.since).Active; got != tt.want {
			t.Errorf("Stats(since %v).Active = %d; want %d", tt.since, got, tt.want)
		}
	}
	if got := (Data{}).Stats(t0); got.Questions == nil || got.Joined != 0 {
		t.Errorf("Stats of an empty workshop = %+v; want no one, an empty question map", got)
	}
}

// TestMisconceptions checks that the most picked wrong choices come
// first, right and unpicked ones never, and at most five.
func TestMisconceptions(t *testing.T) {
	var qs []DashboardQuestion
	for i := range 4 {
		qs = append(qs, DashboardQuestion{Prompt: "Q" + string(rune('1'+i)), Answers: 10, Choices: []DashboardChoice{
			{Text: "right", Count: 9, Right: true}, {Text: "wrong a", Count: i + 1}, {Text: "wrong b", Count: 4 - i}, {Text: "unpicked"},
		}})
	}
	got := misconceptions(qs)
	want := []Misconception{
		{Question: "Q1", Choice: "wrong b", Count: 4, Share: 0.4},
		{Question: "Q4", Choice: "wrong a", Count: 4, Share: 0.4},
		{Question: "Q2", Choice: "wrong b", Count: 3, Share: 0.3},
		{Question: "Q3", Choice: "wrong a", Count: 3, Share: 0.3},
		{Question: "Q2", Choice: "wrong a", Count: 2, Share: 0.2},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("misconceptions = %+v\nwant %+v", got, want)
	}
}

func TestDataParticipants(t *testing.T) {
	want := []Participant{
		{Learner: "alice", Nickname: "Ann", JoinedAt: minute(0), LastActive: minute(5), Answers: 2, FirstRight: 1, Completed: true, Commands: 3, Races: 1},
		{Learner: "bob", JoinedAt: minute(0), LastActive: minute(2)}, // same join time: by learner id
		{Learner: "carol", Nickname: "Cee", JoinedAt: minute(1), LastActive: minute(9), Answers: 1, Races: 2},
	}
	d := testData()
	for i := range want {
		want[i].Key = ParticipantKey(d.Workshop.Code, want[i].Learner)
	}
	if got := d.Participants(); !reflect.DeepEqual(got, want) {
		t.Errorf("Participants = %+v\nwant %+v", got, want)
	}
}

// TestNewDashboard checks that every course question is listed, in
// course order, with its counts, and the JSON the dashboard's script
// reads.
func TestNewDashboard(t *testing.T) {
	st := testData().Stats(minute(5))
	questions := []Question{
		{ID: "q2", Prompt: "Second?", Choices: []Choice{{ID: "c", Text: "C", Right: true}, {ID: "d", Text: "D"}}},
		{ID: "q1", Prompt: "First?", Choices: []Choice{{ID: "a", Text: "A", Right: true}, {ID: "b", Text: "B"}}},
		{ID: "q9", Prompt: "Unanswered?", Choices: []Choice{{ID: "x", Text: "X", Right: true}}},
	}
	d := NewDashboard(st, questions)
	want := Dashboard{
		Code: "STATS", Title: "Stats", Running: true, Joined: 3, Active: 2,
		Completions: 3, Commands: 4, Races: 5, Predictions: 2, PredictionsRight: 1,
		Questions: []DashboardQuestion{
			{ID: "q2", Prompt: "Second?", FirstTries: 1, FirstRight: 0, Answers: 1, Choices: []DashboardChoice{{ID: "c", Text: "C", Count: 1, Right: true}, {ID: "d", Text: "D"}}},
			{ID: "q1", Prompt: "First?", FirstTries: 2, FirstRight: 1, Answers: 4, Choices: []DashboardChoice{{ID: "a", Text: "A", Count: 3, Right: true}, {ID: "b", Text: "B", Count: 1}}},
			{ID: "q9", Prompt: "Unanswered?", Choices: []DashboardChoice{{ID: "x", Text: "X", Right: true}}},
		},
		Misconceptions: []Misconception{{Question: "First?", Choice: "B", Count: 1, Share: 0.25}},
	}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("NewDashboard = %+v\nwant %+v", d, want)
	}
	ended := st
	ended.Workshop.EndedAt = minute(30)
	if NewDashboard(ended, nil).Running {
		t.Error("dashboard of an ended workshop says running")
	}

	b, err := json.Marshal(NewDashboard(Stats{Workshop: Workshop{Code: "E"}}, nil))
	if err != nil {
		t.Fatal(err)
	}
	const wantJSON = `{"code":"E","title":"","running":true,"joined":0,"active":0,"completions":0,"commands":0,"races":0,"predictions":0,"predictions_right":0,"lab_solves":0,"questions":[],"misconceptions":[]}`
	if string(b) != wantJSON {
		t.Errorf("empty dashboard JSON = %s\nwant %s", b, wantJSON)
	}
	b, err = json.Marshal(want.Questions[2])
	if err != nil {
		t.Fatal(err)
	}
	const wantQuestion = `{"id":"q9","prompt":"Unanswered?","first_tries":0,"first_right":0,"answers":0,"choices":[{"id":"x","text":"X","count":0,"right":true}]}`
	if string(b) != wantQuestion {
		t.Errorf("question JSON = %s\nwant %s", b, wantQuestion)
	}
}
