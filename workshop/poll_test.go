package workshop

import (
	"errors"
	"reflect"
	"testing"
)

// testPoll is a poll with three choices, two of which happened.
func testPoll() Poll {
	return Poll{ID: "poll1", PollSpec: PollSpec{
		Scenario: "gc-pause",
		Choices:  []PollChoice{{ID: "safe", Label: "Safe"}, {ID: "two-holders", Label: "Two holders"}, {ID: "stale-write", Label: "Stale write"}},
		Outcomes: []string{"two-holders", "stale-write"},
	}}
}

func TestCheckPrediction(t *testing.T) {
	tooMany := make([]string, maxChoices+1)
	for i := range tooMany {
		tooMany[i] = "safe"
	}
	for _, tt := range []struct {
		name       string
		prediction []string
		want       []string // nil: ErrBadInput
	}{
		{"one choice", []string{"safe"}, []string{"safe"}},
		{"kept in order", []string{"stale-write", "safe"}, []string{"stale-write", "safe"}},
		{"each once", []string{"two-holders", "stale-write", "two-holders"}, []string{"two-holders", "stale-write"}},
		{"every choice", []string{"safe", "two-holders", "stale-write"}, []string{"safe", "two-holders", "stale-write"}},
		{"none", nil, nil},
		{"empty", []string{}, nil},
		{"not a choice", []string{"safe", "lost"}, nil},
		{"malformed id", []string{"safe,two-holders"}, nil},
		{"counter name", []string{AnsweredCounter}, nil},
		{"longer than any poll's choices", tooMany, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := testPoll().CheckPrediction(tt.prediction)
			if tt.want == nil {
				if !errors.Is(err, ErrBadInput) {
					t.Errorf("CheckPrediction(%q) = %q, %v; want ErrBadInput", tt.prediction, got, err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("CheckPrediction(%q) = %q, %v; want %q", tt.prediction, got, err, tt.want)
			}
		})
	}
}

func TestTally(t *testing.T) {
	for _, tt := range []struct {
		name     string
		old, new []string
		want     map[string]int
	}{
		{"first prediction", nil, []string{"safe", "stale-write"}, map[string]int{"safe": 1, "stale-write": 1, AnsweredCounter: 1}},
		{"changed mind", []string{"safe"}, []string{"two-holders", "stale-write"}, map[string]int{"safe": -1, "two-holders": 1, "stale-write": 1}},
		{"kept an outcome", []string{"safe", "two-holders"}, []string{"two-holders"}, map[string]int{"safe": -1}},
		{"same again", []string{"safe"}, []string{"safe"}, map[string]int{}},
		{"taken away", []string{"safe", "two-holders"}, nil, map[string]int{"safe": -1, "two-holders": -1, AnsweredCounter: -1}},
		{"nothing to take away", nil, nil, map[string]int{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Tally(tt.old, tt.new); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Tally(%q, %q) = %v; want %v", tt.old, tt.new, got, tt.want)
			}
		})
	}
}

// TestTallyCountsEachLearnerOnce: whatever order learners predict and
// change their minds in, the sums of the tallies are the counts of their
// last predictions, and Result reads them as such.
func TestTallyCountsEachLearnerOnce(t *testing.T) {
	p := testPoll()
	stored := map[string][]string{}
	counters := map[string]int{}
	predict := func(learner string, prediction []string) {
		t.Helper()
		set, err := p.CheckPrediction(prediction)
		if err != nil {
			t.Fatal(err)
		}
		for k, n := range Tally(stored[learner], set) {
			counters[k] += n
		}
		stored[learner] = set
	}
	predict("ann", []string{"safe"})
	predict("bob", []string{"two-holders", "stale-write"})
	predict("ann", []string{"two-holders"})
	predict("cat", []string{"two-holders", "two-holders"})
	predict("bob", []string{"stale-write"})
	for k, n := range Tally(stored["cat"], nil) { // cat is removed
		counters[k] += n
	}
	delete(stored, "cat")

	got := p.Result(counters, 5)
	want := PollResult{Poll: p, Joined: 5, Answered: 2, Counts: map[string]int{"two-holders": 1, "stale-write": 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Result = %+v; want %+v", got, want)
	}
}

func TestResult(t *testing.T) {
	p := testPoll()
	got := p.Result(map[string]int{"safe": 3, "two-holders": 0, "lost": 7, AnsweredCounter: 4}, 9)
	want := PollResult{Poll: p, Joined: 9, Answered: 4, Counts: map[string]int{"safe": 3}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Result = %+v; want %+v (only the poll's choices, and only those someone picked)", got, want)
	}
	if got := p.Result(nil, 0); got.Answered != 0 || len(got.Counts) != 0 || got.Counts == nil {
		t.Errorf("Result(nil, 0) = %+v; want nobody answered and empty counts", got)
	}
}
