package lab

import (
	"context"
	"fmt"
	"time"

	"github.com/locklab/locklab/sim"
)

// Property is something a lock must guarantee, judged after every
// schedule.
type Property string

// The properties, in the order a Report lists them.
const (
	// PropOneHolder: never two clients that believe they hold the lock at
	// the same moment, within the timing assumptions a TTL lock rests on:
	// every client's work, pauses and late replies together under
	// MarginMS, and honest clocks (on several nodes, the clocks of a
	// majority of them: a majority is meant to outvote the rest). Only
	// schedules that keep them are judged.
	PropOneHolder Property = "one-holder"
	// PropNoForeignRelease: a client never deletes or extends a lock that
	// is no longer its own.
	PropNoForeignRelease Property = "no-foreign-release"
	// PropNoStaleWrite: once the storage has accepted a write from a newer
	// holder of the lock, it never accepts one from an older holder, even
	// after long pauses. Without fencing the storage cannot tell.
	PropNoStaleWrite Property = "no-stale-write"
	// PropFreesAfterCrash: when a holder crashes, a fresh client can take
	// the lock with the recipe's own acquire once the TTL the holder set
	// has run out. Schedules with a crash of a holder are judged.
	PropFreesAfterCrash Property = "frees-after-crash"
)

// Properties returns every property with its description, in report order.
func Properties() []PropertyInfo {
	return []PropertyInfo{
		{PropOneHolder, "One holder", "Never two holders at once, within the timing assumptions of a TTL lock: each holder's work, pauses and late replies together stay well inside the TTL, and clocks are honest."},
		{PropNoForeignRelease, "No foreign release", "A client never deletes or extends a lock that is no longer its own."},
		{PropNoStaleWrite, "No stale write", "Once the storage has taken a write from a newer holder, it never takes one from an older holder, even after long pauses (this needs fencing)."},
		{PropFreesAfterCrash, "Frees after a crash", "When a holder crashes and never releases, a fresh client can take the lock once the TTL its holder set has run out."},
	}
}

// PropertyInfo describes a Property for people.
type PropertyInfo struct {
	ID    Property `json:"id"`
	Title string   `json:"title"`
	Text  string   `json:"text"`
}

// Request is one check: a recipe, optionally the challenge it answers,
// the fault model (nil: DefaultModel; a challenge has its own), and the
// seed that chooses the random schedules (0 means 1).
type Request struct {
	Recipe    Recipe `json:"recipe"`
	Challenge string `json:"challenge,omitempty"`
	Model     *Model `json:"model,omitempty"`
	Seed      uint64 `json:"seed,omitempty"`
}

// Budget bounds one check. A zero field takes its default
// (DefaultBudget); Check answers ErrBudget when the lines or the time
// run out before the schedules are done.
type Budget struct {
	// Random is how many random schedules to explore after the
	// systematic ones; default 64, at most MaxRandom.
	Random int
	// Steps bounds the recipe lines run in all schedules together;
	// default 400,000.
	Steps int
	// CPU bounds the CPU time of the check; default 3 s, where a check
	// of the textbook lock takes about a tenth of that. A check runs on
	// one goroutine locked to its OS thread, and on Linux that thread's
	// own CPU time is counted, so a busy machine does not spend a
	// learner's budget; else the time since it started.
	CPU time.Duration
	// LineTimeout bounds one line's scripts; default 500 ms, half the
	// playground's 1 s, as a lock's line runs in microseconds. A line
	// stopped at this deadline ends the check with ErrBudget.
	LineTimeout time.Duration
	// Turns, if set, makes the check take turns with the others that
	// share it, one schedule at a time (see Turns).
	Turns *Turns `json:"-"`
}

// MaxRandom is the most random schedules one check may explore.
const MaxRandom = 1000

// DefaultBudget is the budget of a check when none is given.
func DefaultBudget() Budget {
	return Budget{Random: 64, Steps: 400_000, CPU: 3 * time.Second * raceCPUFactor, LineTimeout: 500 * time.Millisecond}
}

func (b Budget) withDefaults() Budget {
	d := DefaultBudget()
	if b.Random <= 0 {
		b.Random = d.Random
	}
	b.Random = min(b.Random, MaxRandom)
	if b.Steps <= 0 {
		b.Steps = d.Steps
	}
	if b.CPU <= 0 {
		b.CPU = d.CPU
	}
	if b.LineTimeout <= 0 {
		b.LineTimeout = d.LineTimeout
	}
	return b
}

// Report is the result of a check.
type Report struct {
	Schedules int `json:"schedules"` // schedules explored
	// Systematic is how many of them are the systematic part: every
	// schedule with up to MaxFaults faults; Random the rest.
	Systematic int `json:"systematic"`
	Random     int `json:"random"`
	MaxFaults  int `json:"max_faults"`
	// Shrunk counts the schedules run to shrink a random counterexample.
	Shrunk int `json:"shrunk,omitempty"`
	// Summary says what was explored: "All 612 schedules with up to 2
	// faults explored, and 64 random."
	Summary  string `json:"summary"`
	Seed     uint64 `json:"seed"`      // the seed that chose the random schedules
	TTLMS    int64  `json:"ttl_ms"`    // the TTL every client used
	MarginMS int64  `json:"margin_ms"` // one-holder's timing margin (see PropOneHolder)
	// Nodes is how many Redis nodes the recipe ran on; Quorum how many
	// had to say yes (on one node, 1).
	Nodes  int `json:"nodes"`
	Quorum int `json:"quorum"`
	// Model is the fault model the check used, ModelText the same in one
	// sentence.
	Model     Model  `json:"model"`
	ModelText string `json:"model_text"`
	Steps     int    `json:"steps"` // recipe lines run
	// CPUMS is the CPU time the check took. It varies from run to run;
	// everything else in a Report is the same for the same request.
	CPUMS      int64            `json:"cpu_ms"`
	Properties []PropertyResult `json:"properties"`
	// Works says whether, in the schedule without faults, every client
	// took the lock and released it: a recipe that never takes it breaks
	// nothing and passes no challenge. WorksText says why not.
	Works     bool   `json:"works"`
	WorksText string `json:"works_text,omitempty"`
	// Challenge and Passed are set when the request named a challenge:
	// Passed when the recipe works and every property the challenge
	// requires holds (see Challenge.Requires). PassText says so, or what
	// the recipe still breaks.
	Challenge string `json:"challenge,omitempty"`
	Passed    *bool  `json:"passed,omitempty"`
	PassText  string `json:"pass_text,omitempty"`
}

// Property returns the result for p, or false if the report has none.
func (r Report) Property(p Property) (PropertyResult, bool) {
	for _, pr := range r.Properties {
		if pr.ID == p {
			return pr, true
		}
	}
	return PropertyResult{}, false
}

// The statuses of a property in a Report.
const (
	StatusHolds     = "holds"      // judged in at least one schedule, and never broken
	StatusBroken    = "broken"     // broken in a schedule; see the counterexample
	StatusNotJudged = "not-judged" // no schedule could judge it
)

// PropertyResult is what a check found for one property.
type PropertyResult struct {
	ID     Property `json:"id"`
	Status string   `json:"status"` // StatusHolds, StatusBroken or StatusNotJudged
	// Holds is Status == StatusHolds: a property nobody exercised is not
	// judged, never held.
	Holds bool `json:"holds"`
	// Explored is how many schedules exercised the property: two clients
	// that took the lock within the timing assumptions (one-holder), a
	// release or renewal while another client held the lock
	// (no-foreign-release), writes from two holders (no-stale-write), a
	// holder's crash (frees-after-crash).
	Explored int `json:"explored"`
	// Note qualifies the result: the margin of one-holder, or why no
	// schedule could judge the property.
	Note string `json:"note,omitempty"`
	// Counterexample is the shortest schedule that broke the property
	// (fewest faults, then fewest clients, then earliest), nil when it
	// held.
	Counterexample *Counterexample `json:"counterexample"`
}

// Counterexample is one schedule that broke a property, in the shape of
// the race page's run (GET /api/race/{id}), so that the race animation
// plays it as it is: Events have the fields of sim.Event with the time
// as t_ms too, Outcomes those of sim.Found with t_ms, and Params, Nodes,
// Verdict and Summary what the animation reads besides. Lanes are the
// actors in the order they are drawn.
type Counterexample struct {
	// Seed names the schedule: Replay with the same recipe, model and
	// seed plays it again. It is the check's seed times 2^20 plus the
	// schedule's number.
	Seed   uint64   `json:"seed"`
	Faults []string `json:"faults"` // the schedule's faults, one sentence each
	Events []Event  `json:"events"`
	// Outcomes are everything that went wrong, most serious first, each
	// tied to the event where it first happened; exactly [safe] if
	// nothing did.
	Outcomes []Found     `json:"outcomes"`
	Params   RunParams   `json:"params"`
	Verdict  sim.Outcome `json:"verdict"` // Outcomes[0]'s
	// Summary says what broke, in one sentence.
	Summary string `json:"summary"`
	// Lanes are the actors, in drawing order: "client 1" ... "redis" (or
	// "redis node 1" ... on several nodes), "storage". Nodes is the
	// number of Redis nodes.
	Lanes []string `json:"lanes"`
	Nodes int      `json:"nodes"`
	// Violation is the index in Events where the property broke.
	Violation int `json:"violation"`
}

// Event is one step of a schedule: a sim.Event (same JSON fields, so the
// race animation plays it), with the time again as t_ms and, for a
// recipe line, the line as run and the reply redis-cli would print.
type Event struct {
	sim.Event
	TMS   int64  `json:"t_ms"`
	Line  string `json:"line,omitempty"`
	Reply string `json:"reply,omitempty"`
}

// Found is an outcome of a schedule (a sim.Found) with its time again as
// t_ms, as the race animation reads it.
type Found struct {
	sim.Found
	TMS int64 `json:"t_ms"`
}

// RunParams are the settings of a schedule the race animation reads.
type RunParams struct {
	TTLMS   int64 `json:"ttl_ms"`
	Fencing bool  `json:"fencing"`
}

// The lab's own event kinds, besides the race's (see package sim).
const (
	// KindCommand: a recipe line that decides nothing ran.
	KindCommand = sim.KindCommand
	// KindExtendOther: a renewal extended another client's lock.
	KindExtendOther = sim.KindExtendOther
	// KindClientCrash: a client crashed; it never runs another line.
	KindClientCrash = sim.KindClientCrash
	// KindStillLocked: after a holder crashed, a fresh client still
	// could not take its lock.
	KindStillLocked = sim.KindStillLocked
)

// Check validates the request's recipe and model and explores every
// systematic schedule and then budget.Random random ones, judging every
// property in each. It returns a *LineError (ErrBadRecipe) for a recipe
// that cannot run, ErrUnknownChallenge, and ErrBudget when the budget
// ran out; ctx stops it early. The same request and budget always give
// the same Report.
func Check(ctx context.Context, req Request, budget Budget) (Report, error) {
	if err := req.Recipe.Validate(); err != nil {
		return Report{}, err
	}
	ru, err := compileRules(req.Recipe)
	if err != nil {
		return Report{}, err
	}
	m := DefaultModel()
	if req.Model != nil {
		m = *req.Model
	}
	var ch *Challenge
	if req.Challenge != "" {
		c, err := ChallengeByID(req.Challenge)
		if err != nil {
			return Report{}, err
		}
		ch = &c
		m = c.model()
	}
	if err := m.Validate(); err != nil {
		return Report{}, err
	}
	seed := req.Seed
	if seed == 0 {
		seed = 1
	}
	if seed > maxSeed {
		return Report{}, fmt.Errorf("check: seed %d is above %d: %w", seed, uint64(maxSeed), ErrBadSeed)
	}
	return explore(ctx, req.Recipe, ru, m, ch, seed, budget.withDefaults())
}

// maxSeed keeps seed*2^20+n within the integers a JSON number read as a
// double holds exactly.
const maxSeed = 1 << 32

// Replay plays the one schedule that seed names (a Counterexample.Seed)
// with recipe and model (nil: DefaultModel), and returns it as a
// counterexample, whether or not a property broke in it.
func Replay(ctx context.Context, recipe Recipe, model *Model, seed uint64) (Counterexample, error) {
	if err := recipe.Validate(); err != nil {
		return Counterexample{}, err
	}
	ru, err := compileRules(recipe)
	if err != nil {
		return Counterexample{}, err
	}
	m := DefaultModel()
	if model != nil {
		m = *model
	}
	if err := m.Validate(); err != nil {
		return Counterexample{}, err
	}
	base, n := seed/spacing, int(seed%spacing)
	if base == 0 || base > maxSeed {
		return Counterexample{}, fmt.Errorf("replay seed %d: not a schedule's seed: %w", seed, ErrBadSeed)
	}
	return replay(ctx, recipe, ru, m, base, n, DefaultBudget())
}
