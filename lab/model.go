package lab

import (
	"fmt"

	"github.com/locklab/locklab/sim"
)

// Model is the fault model of a check: which faults its schedules may
// have. A learner chooses it; DefaultModel is what a check uses when the
// request names none, and a Report says which model it used.
type Model struct {
	// LongStalls lets pauses and late replies run past the TTL (to 2.5
	// TTLs); without it they stay inside one-holder's margin.
	LongStalls bool `json:"long_stalls"`
	// ClockJumps is "none", "forward" (Redis's clock jumps a TTL ahead)
	// or "both" (ahead, or a TTL back).
	ClockJumps string `json:"clock_jumps"`
	// Restarts is how Redis may restart: "none"; "with-data" (it writes
	// every command to its append-only file with fsync always, and comes
	// back with its data); "empty-delayed" (no persistence, but it stays
	// down longer than the TTL, as the Redis documentation advises);
	// "empty" (no persistence, and it is back at once).
	Restarts string `json:"restarts"`
	// Combine explores every pair of faults (two clients) and random
	// schedules of up to three faults, a restart during a pause
	// included; without it each schedule has one fault at most.
	Combine bool `json:"combine"`
}

// The values of Model.ClockJumps and Model.Restarts.
const (
	JumpsNone    = "none"
	JumpsForward = "forward"
	JumpsBoth    = "both"

	RestartsNone         = "none"
	RestartsWithData     = "with-data"
	RestartsEmptyDelayed = "empty-delayed"
	RestartsEmpty        = "empty"
)

// DefaultModel is the fault model of a check that names none: long
// pauses and late replies, forward clock jumps, restarts without
// persistence delayed past the TTL, and pairs of faults.
func DefaultModel() Model {
	return Model{LongStalls: true, ClockJumps: JumpsForward, Restarts: RestartsEmptyDelayed, Combine: true}
}

// Validate reports a model with an unknown value; the error matches
// ErrBadRecipe.
func (m Model) Validate() error {
	switch m.ClockJumps {
	case JumpsNone, JumpsForward, JumpsBoth:
	default:
		return fmt.Errorf("model: clock_jumps %q: must be %s, %s or %s: %w", m.ClockJumps, JumpsNone, JumpsForward, JumpsBoth, ErrBadRecipe)
	}
	switch m.Restarts {
	case RestartsNone, RestartsWithData, RestartsEmptyDelayed, RestartsEmpty:
	default:
		return fmt.Errorf("model: restarts %q: must be %s, %s, %s or %s: %w", m.Restarts, RestartsNone, RestartsWithData, RestartsEmptyDelayed, RestartsEmpty, ErrBadRecipe)
	}
	return nil
}

// Text says what the model allows, in one sentence.
func (m Model) Text() string {
	var parts []string
	if m.LongStalls {
		parts = append(parts, fmt.Sprintf("client pauses and late replies up to %s (past the TTL)", sim.Dur(ttlTimes(longest))))
	} else {
		parts = append(parts, fmt.Sprintf("client pauses and late replies inside the %s margin", sim.Dur(margin)))
	}
	parts = append(parts, "client crashes")
	switch m.ClockJumps {
	case JumpsForward:
		parts = append(parts, fmt.Sprintf("Redis's clock jumping %s ahead", sim.Dur(ttl)))
	case JumpsBoth:
		parts = append(parts, fmt.Sprintf("Redis's clock jumping %s ahead or back", sim.Dur(ttl)))
	}
	switch m.Restarts {
	case RestartsWithData:
		parts = append(parts, "Redis restarting with its data (append-only file, fsync always)")
	case RestartsEmptyDelayed:
		parts = append(parts, fmt.Sprintf("Redis restarting without persistence, down %s, longer than the TTL", sim.Dur(downDelayed)))
	case RestartsEmpty:
		parts = append(parts, fmt.Sprintf("Redis restarting without persistence, back after %s", sim.Dur(downQuick)))
	}
	how := "one fault per schedule"
	if m.Combine {
		how = "up to two faults per schedule in the systematic part, up to three in the random part"
	}
	return "Faults: " + sim.JoinAnd(parts) + "; " + how + "."
}
