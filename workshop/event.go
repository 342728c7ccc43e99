package workshop

import (
	"fmt"
	"time"
)

// Kinds of workshop events.
const (
	EventAnswer   = "answer"    // a quiz answer: Question, Choice, Correct
	EventComplete = "complete"  // the learner completed Topic
	EventCommand  = "command"   // a playground command line
	EventRace     = "race"      // a race scenario played to the end: Scenario, Predicted (bool: a prediction was made), PredictionRight
	EventLabSolve = "lab-solve" // the learner solved a lab challenge: Challenge
)

// Event is something a participant did. Which fields matter depends on
// Kind; the others are ignored.
type Event struct {
	Kind            string
	Topic           string
	Question        string
	Choice          string
	Correct         bool
	Scenario        string
	Predicted       bool
	PredictionRight bool
	Challenge       string
	At              time.Time
}

// RaceEvent is a race played to the end, with the outcomes the learner
// predicted and those that happened (their names, as the race package
// gives them). A prediction counts if the learner made one (it is not
// empty), and is right if it names exactly the outcomes that happened:
// every one, and no other.
func RaceEvent(scenario string, prediction, happened []string) Event {
	ev := Event{Kind: EventRace, Scenario: scenario}
	if len(prediction) > 0 {
		ev.Predicted, ev.PredictionRight = true, true
		for _, j := range JudgeRace(nil, prediction, happened) {
			ev.PredictionRight = ev.PredictionRight && j.Right()
		}
	}
	return ev
}

// Judgement is a prediction judged on one outcome: whether the learner
// expected it, and whether it happened.
type Judgement struct {
	Outcome  string `json:"outcome"`
	Expected bool   `json:"expected"`
	Happened bool   `json:"happened"`
}

// Right reports whether the learner was right about this outcome: it
// expected what happened, or did not expect what did not.
func (j Judgement) Right() bool { return j.Expected == j.Happened }

// JudgeRace judges a prediction outcome by outcome: one Judgement for
// every outcome in all, in that order, then for any other outcome that
// was predicted or happened, in the order first seen. A repeated name
// counts once.
func JudgeRace(all, prediction, happened []string) []Judgement {
	var out []Judgement
	index := map[string]int{}
	add := func(o string) *Judgement {
		if i, ok := index[o]; ok {
			return &out[i]
		}
		index[o] = len(out)
		out = append(out, Judgement{Outcome: o})
		return &out[len(out)-1]
	}
	for _, o := range all {
		add(o)
	}
	for _, o := range prediction {
		add(o).Expected = true
	}
	for _, o := range happened {
		add(o).Happened = true
	}
	return out
}

// Workshop-wide counters. Question and choice ids cannot contain the
// separator, so the names cannot collide. Back ends keep these names, so
// they must not change.
const (
	countCommands         = "commands"
	countRaces            = "races"
	countPredictions      = "predictions"
	countPredictionsRight = "predictions-right"
	countCompletions      = "completions"
	countLabSolves        = "lab-solves"  // (participant, challenge) pairs solved
	countChoicePrefix     = "choice/"     // choice/<question>/<choice>: answers with that choice
	countTriesPrefix      = "tries/"      // tries/<question>: participants who answered it
	countFirstRightPrefix = "firstright/" // firstright/<question>: right on the first try
)

// Per-participant counters.
const (
	pcountAnswers    = "answers"
	pcountFirstRight = "firstright"
	pcountCompleted  = "completed" // topics completed
	pcountCommands   = "commands"
	pcountRaces      = "races"
	pcountLabSolves  = "lab-solves"
)

// Gates: sets that gate counters. A counter behind a gate counts only the
// first time its member goes into the set. Back ends name their sets after
// these, so they must not change.
const (
	GateNone      = ""
	GateFirst     = "first"     // "<learner>/<question>": answered once
	GateCompleted = "completed" // "<learner>/<topic>": completed once
	GateLab       = "lab"       // "<learner>/<challenge>": solved once
)

// gateMemberSep joins a learner id and another id in a gate member;
// neither learner ids nor other ids contain it.
const gateMemberSep = "/"

// Plan is what one event changes, worked out once here so that every back
// end applies exactly the same counters.
type Plan struct {
	Counts       []string // workshop counters to add one to
	MemberCounts []string // the participant's counters to add one to
	// If Gate is set, GateMember is added to that set, and only if it was
	// not there yet are GateCounts and GateMemberCounts added to.
	Gate             string
	GateMember       string
	GateCounts       []string
	GateMemberCounts []string
}

func planEvent(learner string, ev Event) (Plan, error) {
	var p Plan
	switch ev.Kind {
	case EventAnswer:
		if err := checkID("question", ev.Question); err != nil {
			return p, err
		}
		if err := checkID("choice", ev.Choice); err != nil {
			return p, err
		}
		p.Counts = []string{countChoicePrefix + ev.Question + "/" + ev.Choice}
		p.MemberCounts = []string{pcountAnswers}
		p.Gate, p.GateMember = GateFirst, learner+gateMemberSep+ev.Question
		p.GateCounts = []string{countTriesPrefix + ev.Question}
		if ev.Correct {
			p.GateCounts = append(p.GateCounts, countFirstRightPrefix+ev.Question)
			p.GateMemberCounts = []string{pcountFirstRight}
		}
	case EventComplete:
		if err := checkID("topic", ev.Topic); err != nil {
			return p, err
		}
		p.Gate, p.GateMember = GateCompleted, learner+gateMemberSep+ev.Topic
		p.GateCounts = []string{countCompletions}
		p.GateMemberCounts = []string{pcountCompleted}
	case EventCommand:
		p.Counts = []string{countCommands}
		p.MemberCounts = []string{pcountCommands}
	case EventRace:
		if err := checkID("scenario", ev.Scenario); err != nil {
			return p, err
		}
		p.Counts = []string{countRaces}
		if ev.Predicted {
			p.Counts = append(p.Counts, countPredictions)
			if ev.PredictionRight {
				p.Counts = append(p.Counts, countPredictionsRight)
			}
		}
		p.MemberCounts = []string{pcountRaces}
	case EventLabSolve:
		if err := checkID("challenge", ev.Challenge); err != nil {
			return p, err
		}
		p.Gate, p.GateMember = GateLab, learner+gateMemberSep+ev.Challenge
		p.GateCounts = []string{countLabSolves}
		p.GateMemberCounts = []string{pcountLabSolves}
	default:
		return p, fmt.Errorf("event kind %q: %w", ev.Kind, ErrBadInput)
	}
	return p, nil
}
