package race

import "github.com/locklab/locklab/sim"

// Kind says what happened in an Event: the simulation kernel's kinds.
type Kind = sim.Kind

// The event kinds (see package sim).
const (
	KindAcquireOK     = sim.KindAcquireOK
	KindAcquireFail   = sim.KindAcquireFail
	KindPauseStart    = sim.KindPauseStart
	KindPauseEnd      = sim.KindPauseEnd
	KindExpire        = sim.KindExpire
	KindWriteAccepted = sim.KindWriteAccepted
	KindWriteRejected = sim.KindWriteRejected
	KindReleaseOK     = sim.KindReleaseOK
	KindReleaseNoop   = sim.KindReleaseNoop
	KindDeleteOther   = sim.KindDeleteOther
	KindExtendOK      = sim.KindExtendOK
	KindExtendFail    = sim.KindExtendFail
	KindStop          = sim.KindStop
	KindClockJump     = sim.KindClockJump
	KindCrash         = sim.KindCrash
	KindRestart       = sim.KindRestart
	KindDelay         = sim.KindDelay
	KindReplicate     = sim.KindReplicate
	KindFailover      = sim.KindFailover
	KindWait          = sim.KindWait
	KindRenewLimit    = sim.KindRenewLimit
	KindStuck         = sim.KindStuck
	KindCommand       = sim.KindCommand
	KindExtendOther   = sim.KindExtendOther
	KindClientCrash   = sim.KindClientCrash
	KindStillLocked   = sim.KindStillLocked
)

// Verdict sums up a run: its most serious Outcome.
type Verdict = Outcome

// The verdicts, from worst to best: the outcomes under their old names.
const (
	VerdictForeignLockDeleted = OutcomeForeignLockDeleted
	VerdictTwoHolders         = OutcomeTwoHolders
	VerdictStaleWriteAccepted = OutcomeStaleWriteAccepted
	VerdictStaleWriteRejected = OutcomeStaleWriteRejected
	VerdictSafe               = OutcomeSafe
)

// Timeline is the result of a run: what happened, in time order, every
// outcome with the event where it happened, and the verdict.
type Timeline struct {
	Scenario string  `json:"scenario"`
	Params   Params  `json:"params"`
	Events   []Event `json:"events"`
	// Outcomes has one entry per outcome that happened, most serious
	// first; it is exactly [safe] when nothing went wrong.
	Outcomes []Found `json:"outcomes"`
	Verdict  Verdict `json:"verdict"` // Outcomes[0].Outcome
	Summary  string  `json:"summary"` // the verdict in one sentence
}

// Has reports whether o is among the run's outcomes.
func (t Timeline) Has(o Outcome) bool {
	for _, f := range t.Outcomes {
		if f.Outcome == o {
			return true
		}
	}
	return false
}

// OutcomeSet returns the run's outcomes, most serious first.
func (t Timeline) OutcomeSet() []Outcome {
	out := make([]Outcome, len(t.Outcomes))
	for i, f := range t.Outcomes {
		out[i] = f.Outcome
	}
	return out
}

// Event is one step of a Timeline, with the state after it.
type Event = sim.Event

// NodeState is the lock key on one Redis node at the time of an Event.
type NodeState = sim.NodeState
