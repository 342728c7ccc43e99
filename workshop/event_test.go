package workshop

import (
	"errors"
	"reflect"
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
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := planEvent(alice, tt.ev)
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("planEvent(%+v) = %+v, %v\nwant %+v", tt.ev, got, err, tt.want)
			}
		})
	}
	if _, err := planEvent(alice, Event{Kind: "dance"}); !errors.Is(err, ErrBadInput) {
		t.Errorf("planEvent(unknown kind) = %v; want ErrBadInput", err)
	}
}

// TestRaceEvent checks how a prediction is scored against the server's
// verdict.
func TestRaceEvent(t *testing.T) {
	for _, tt := range []struct {
		prediction, verdict string
		predicted, right    bool
	}{
		{"", "safe", false, false},
		{"safe", "safe", true, true},
		{"two-holders", "safe", true, false},
		{"foreign-lock-deleted", "foreign-lock-deleted", true, true},
		{"Safe", "safe", true, false}, // labels are exact
	} {
		ev := RaceEvent("gc-pause", tt.prediction, tt.verdict)
		want := Event{Kind: EventRace, Scenario: "gc-pause", Predicted: tt.predicted, PredictionRight: tt.right}
		if ev != want {
			t.Errorf("RaceEvent(gc-pause, %q, %q) = %+v; want %+v", tt.prediction, tt.verdict, ev, want)
		}
	}
}
