package workshop

import (
	"errors"
	"reflect"
	"slices"
	"testing"
)

// TestPlanEvent checks what each kind of event counts. The counter and
// gate names are what back ends keep on disk and in Redis, so they are
// spelled out here: changing one would lose existing workshops' counts.
func TestPlanEvent(t *testing.T) {
	for _, tt := range []struct {
		name string
		ev   Event
		want Plan
	}{
		{"right answer", Event{Kind: EventAnswer, Question: "q1", Choice: "a", Correct: true}, Plan{
			Counts: []string{"choice/q1/a"}, MemberCounts: []string{"answers"},
			Gate: "first", GateMember: alice + "/q1",
			GateCounts: []string{"tries/q1", "firstright/q1"}, GateMemberCounts: []string{"firstright"},
		}},
		{"wrong answer", Event{Kind: EventAnswer, Question: "q1", Choice: "b"}, Plan{
			Counts: []string{"choice/q1/b"}, MemberCounts: []string{"answers"},
			Gate: "first", GateMember: alice + "/q1",
			GateCounts: []string{"tries/q1"},
		}},
		{"complete", Event{Kind: EventComplete, Topic: "distributed-locks"}, Plan{
			Gate: "completed", GateMember: alice + "/distributed-locks",
			GateCounts: []string{"completions"}, GateMemberCounts: []string{"completed"},
		}},
		{"command", Event{Kind: EventCommand}, Plan{Counts: []string{"commands"}, MemberCounts: []string{"commands"}}},
		{"race without prediction", Event{Kind: EventRace, Scenario: "gc-pause", PredictionRight: true}, Plan{
			Counts: []string{"races"}, MemberCounts: []string{"races"},
		}},
		{"race predicted wrong", Event{Kind: EventRace, Scenario: "gc-pause", Predicted: true}, Plan{
			Counts: []string{"races", "predictions"}, MemberCounts: []string{"races"},
		}},
		{"race predicted right", Event{Kind: EventRace, Scenario: "gc-pause", Predicted: true, PredictionRight: true}, Plan{
			Counts: []string{"races", "predictions", "predictions-right"}, MemberCounts: []string{"races"},
		}},
		{"lab challenge solved", Event{Kind: EventLabSolve, Challenge: "two-holders"}, Plan{
			Gate: "lab", GateMember: alice + "/two-holders",
			GateCounts: []string{"lab-solves"}, GateMemberCounts: []string{"lab-solves"},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := planEvent(alice, tt.ev)
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("planEvent(%+v) = %+v, %v\nwant %+v", tt.ev, got, err, tt.want)
			}
		})
	}
	if _, err := planEvent(alice, Event{Kind: EventLabSolve, Challenge: "Bad/id"}); !errors.Is(err, ErrBadInput) {
		t.Errorf("planEvent(lab solve, bad challenge id) = %v; want ErrBadInput", err)
	}
	if _, err := planEvent(alice, Event{Kind: "dance"}); !errors.Is(err, ErrBadInput) {
		t.Errorf("planEvent(unknown kind) = %v; want ErrBadInput", err)
	}
}

// TestRaceEvent checks how a prediction is scored against the outcomes
// the server found: right only if it names exactly those.
func TestRaceEvent(t *testing.T) {
	for _, tt := range []struct {
		name                 string
		prediction, happened []string
		predicted, right     bool
	}{
		{"no prediction", nil, []string{"safe"}, false, false},
		{"safe, right", []string{"safe"}, []string{"safe"}, true, true},
		{"two holders, wrong", []string{"two-holders"}, []string{"safe"}, true, false},
		{"both outcomes", []string{"two-holders", "stale-write-accepted"}, []string{"two-holders", "stale-write-accepted"}, true, true},
		{"order does not matter", []string{"stale-write-accepted", "two-holders"}, []string{"two-holders", "stale-write-accepted"}, true, true},
		{"one missed", []string{"two-holders"}, []string{"two-holders", "stale-write-accepted"}, true, false},
		{"one too many", []string{"two-holders", "foreign-lock-deleted"}, []string{"two-holders"}, true, false},
		{"repeated name", []string{"two-holders", "two-holders"}, []string{"two-holders"}, true, true},
		{"labels are exact", []string{"Safe"}, []string{"safe"}, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ev := RaceEvent("gc-pause", tt.prediction, tt.happened)
			want := Event{Kind: EventRace, Scenario: "gc-pause", Predicted: tt.predicted, PredictionRight: tt.right}
			if ev != want {
				t.Errorf("RaceEvent(gc-pause, %q, %q) = %+v; want %+v", tt.prediction, tt.happened, ev, want)
			}
		})
	}
}

// TestJudgeRace: the feedback goes outcome by outcome, in the order of
// all, with anything else after.
func TestJudgeRace(t *testing.T) {
	all := []string{"foreign-lock-deleted", "two-holders", "stale-write-accepted", "stale-write-rejected", "safe"}
	got := JudgeRace(all, []string{"two-holders", "made-up"}, []string{"two-holders", "stale-write-accepted"})
	want := []Judgement{
		{Outcome: "foreign-lock-deleted"},
		{Outcome: "two-holders", Expected: true, Happened: true},
		{Outcome: "stale-write-accepted", Happened: true},
		{Outcome: "stale-write-rejected"},
		{Outcome: "safe"},
		{Outcome: "made-up", Expected: true},
	}
	if !slices.Equal(got, want) {
		t.Errorf("JudgeRace = %+v; want %+v", got, want)
	}
	for i, right := range []bool{true, true, false, true, true, false} {
		if got[i].Right() != right {
			t.Errorf("JudgeRace[%d] = %+v: Right() = %v; want %v", i, got[i], got[i].Right(), right)
		}
	}
}
