package race

import (
	"fmt"
	"strings"

	"github.com/locklab/locklab/sim"
)

// Outcome is something that went right or wrong in a run: the simulation
// kernel's outcomes, with their words.
type Outcome = sim.Outcome

// The outcomes, from most to least serious (see package sim).
const (
	OutcomeForeignLockDeleted  = sim.OutcomeForeignLockDeleted
	OutcomeForeignLockExtended = sim.OutcomeForeignLockExtended
	OutcomeTwoHolders          = sim.OutcomeTwoHolders
	OutcomeStaleWriteAccepted  = sim.OutcomeStaleWriteAccepted
	OutcomeLockNeverFreed      = sim.OutcomeLockNeverFreed
	OutcomeStarved             = sim.OutcomeStarved
	OutcomeStaleWriteRejected  = sim.OutcomeStaleWriteRejected
	OutcomeSafe                = sim.OutcomeSafe
)

// AllOutcomes returns every outcome, most serious first.
func AllOutcomes() []Outcome { return sim.AllOutcomes() }

// Outcomes returns the outcomes a race run can have, most serious first:
// every outcome but the lab's own (a renewal of another's lock). They are
// the choices a prediction offers.
func Outcomes() []Outcome {
	return []Outcome{OutcomeForeignLockDeleted, OutcomeTwoHolders, OutcomeStaleWriteAccepted,
		OutcomeLockNeverFreed, OutcomeStarved, OutcomeStaleWriteRejected, OutcomeSafe}
}

// ParseOutcome returns the outcome named s, or an error wrapping
// ErrBadParams that lists the valid names.
func ParseOutcome(s string) (Outcome, error) {
	for _, o := range AllOutcomes() {
		if string(o) == s {
			return o, nil
		}
	}
	names := make([]string, 0, 8)
	for _, o := range AllOutcomes() {
		names = append(names, string(o))
	}
	return "", fmt.Errorf("outcome %q: must be one of %s: %w", s, strings.Join(names, ", "), ErrBadParams)
}

// Found is one outcome of a run, tied to the event where it first
// happened. A Timeline has at most one Found per outcome.
type Found = sim.Found
