package race

import (
	"fmt"
	"strings"
)

// Outcome is something that went right or wrong in a run. A run may have
// several (a paused client that wakes up and writes gives two holders and
// a stale write); it has OutcomeSafe only when it has none of the others.
type Outcome string

// The outcomes, from most to least serious: the order of AllOutcomes, and
// the order in which a Timeline lists them.
const (
	// OutcomeForeignLockDeleted: a client deleted a lock that another
	// client held (a plain DEL after its own lock had expired).
	OutcomeForeignLockDeleted Outcome = "foreign-lock-deleted"
	// OutcomeForeignLockExtended: a client renewed a lock that was no
	// longer its own, keeping another client's lock alive.
	OutcomeForeignLockExtended Outcome = "foreign-lock-extended"
	// OutcomeTwoHolders: two clients each believed they held the lock at
	// the same moment; reported at the event that made the second one
	// believe it.
	OutcomeTwoHolders Outcome = "two-holders"
	// OutcomeStaleWriteAccepted: the storage took a write from a client
	// whose lock had since been granted to another.
	OutcomeStaleWriteAccepted Outcome = "stale-write-accepted"
	// OutcomeLockNeverFreed: a lock whose holder can no longer use it (it
	// crashed, or its work hangs) stayed taken: nobody else could get it
	// for as long as the run was watched.
	OutcomeLockNeverFreed Outcome = "lock-never-freed"
	// OutcomeStarved: a client that wanted the lock never got it before
	// the run ended.
	OutcomeStarved Outcome = "starved"
	// OutcomeStaleWriteRejected: such a write reached the storage and
	// fencing refused it.
	OutcomeStaleWriteRejected Outcome = "stale-write-rejected"
	// OutcomeSafe: none of the above happened.
	OutcomeSafe Outcome = "safe"
)

// AllOutcomes returns every outcome, most serious first.
func AllOutcomes() []Outcome {
	return []Outcome{OutcomeForeignLockDeleted, OutcomeForeignLockExtended, OutcomeTwoHolders, OutcomeStaleWriteAccepted,
		OutcomeLockNeverFreed, OutcomeStarved, OutcomeStaleWriteRejected, OutcomeSafe}
}

// Outcomes returns the outcomes a race run can have, most serious first:
// every outcome but the lab's own (a renewal of another's lock).
func Outcomes() []Outcome {
	return []Outcome{OutcomeForeignLockDeleted, OutcomeTwoHolders, OutcomeStaleWriteAccepted, OutcomeStaleWriteRejected, OutcomeSafe}
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

// Rank orders outcomes by seriousness: lower is worse.
func (o Outcome) Rank() int {
	for i, x := range AllOutcomes() {
		if x == o {
			return i
		}
	}
	return len(AllOutcomes())
}

func (o Outcome) rank() int { return o.Rank() }

// Found is one outcome of a run, tied to the event where it first
// happened. A Timeline has at most one Found per outcome.
type Found struct {
	Outcome Outcome `json:"outcome"`
	Event   int     `json:"event"` // index into Timeline.Events
	AtMS    int64   `json:"at_ms"` // that event's time
	Text    string  `json:"text"`  // one sentence: who did what
}
