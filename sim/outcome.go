package sim

import "slices"

// Outcome is something that went right or wrong in a run. A run may have
// several (a paused client that wakes up and writes gives two holders and
// a stale write); it has OutcomeSafe only when it has none of the others.
type Outcome string

// The outcomes, from most to least serious: the order of AllOutcomes, and
// the order in which a run lists them.
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

// words returns the outcome's label and short words, or "" twice.
func (o Outcome) words() (label, short string) {
	switch o {
	case OutcomeForeignLockDeleted:
		return "A client deletes another client's lock", "another's lock deleted"
	case OutcomeForeignLockExtended:
		return "A client extends another client's lock", "another's lock extended"
	case OutcomeTwoHolders:
		return "Two clients hold the lock at once", "two holders"
	case OutcomeStaleWriteAccepted:
		return "A stale write is accepted", "stale write accepted"
	case OutcomeLockNeverFreed:
		return "A stuck or crashed holder's lock is never freed", "lock never freed"
	case OutcomeStarved:
		return "A client that wants the lock never gets it", "never got the lock"
	case OutcomeStaleWriteRejected:
		return "A stale write is rejected", "stale write rejected"
	case OutcomeSafe:
		return "Safe: one holder at a time, and every client gets its turn", "safe"
	}
	return "", ""
}

// Label is the outcome as a prediction offers it and a result names it:
// "Two clients hold the lock at once". It is "" for a name that is no
// outcome.
func (o Outcome) Label() string {
	label, _ := o.words()
	return label
}

// Short is the outcome in a few words, for a flag on a drawing: "two
// holders". It is "" for a name that is no outcome.
func (o Outcome) Short() string {
	_, short := o.words()
	return short
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

// Found is one outcome of a run, tied to the event where it first
// happened. A Timeline has at most one Found per outcome.
type Found struct {
	Outcome Outcome `json:"outcome"`
	Event   int     `json:"event"` // index into the run's events
	AtMS    int64   `json:"at_ms"` // that event's time
	Text    string  `json:"text"`  // one sentence: who did what
}

// Findings are the outcomes of a run so far, each tied to the event where
// it first happened: at most one Found per outcome.
type Findings []Found

// Add ties o to event i, at atMS, unless o happened already.
func (fs *Findings) Add(o Outcome, i int, atMS int64, text string) {
	for _, f := range *fs {
		if f.Outcome == o {
			return
		}
	}
	*fs = append(*fs, Found{Outcome: o, Event: i, AtMS: atMS, Text: text})
}

// Sorted returns the findings most serious first, those of equal rank in
// the order they happened.
func (fs Findings) Sorted() []Found {
	out := slices.Clone(fs)
	slices.SortStableFunc(out, func(a, b Found) int { return a.Outcome.Rank() - b.Outcome.Rank() })
	return out
}
