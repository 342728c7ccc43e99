package workshop

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Polls: the instructor opens a poll on a race run, every participant
// predicts which outcomes the run will have ("pick all that apply"), the
// room watches the distribution grow, and the instructor reveals the run.
// The back end keeps one counter per outcome of each poll and adds to
// them the Tally of a learner's previous and new prediction in the same
// atomic step that stores the new one, so a dashboard reads a poll's distribution without
// reading any participant, and a learner who changes their mind on one
// replica and again on another still counts once.

// ErrNoPoll means the workshop has no poll with that id, or no open poll.
var ErrNoPoll = errors.New("no such poll")

// ErrNotJoined means the learner has not joined the workshop, so they
// cannot see or answer its polls.
var ErrNotJoined = errors.New("not a participant of this workshop")

// ErrRevealed means the poll's run has been revealed, so predictions are
// closed.
var ErrRevealed = errors.New("poll already revealed")

// ErrTooManyPolls means the workshop has had MaxPolls polls.
var ErrTooManyPolls = errors.New("too many polls in this workshop")

// Limits of a poll: they bound what one poll costs to keep and to read.
const (
	MaxPolls      = 100 // polls per workshop
	maxChoices    = 16
	maxSetupLines = 30
	maxPollText   = 500 // runes in a title, description, query or setup line
	pollIDLen     = 10
)

// AnsweredCounter is the counter name a back end keeps beside a poll's
// outcome counters for how many participants answered. Outcome ids cannot
// contain '#', so it cannot collide with one.
const AnsweredCounter = "#answered"

// PollChoice is one outcome a participant may pick, with the label the
// race page gives it.
type PollChoice struct {
	ID    string `json:"id"`
	Label string `json:"label"`
}

// PollSpec is the race run a poll is about, as the web layer worked it out
// from the race package: what participants see before the reveal (title,
// setup, choices) and what the run did (Outcomes), which only the reveal
// shows.
type PollSpec struct {
	Scenario    string       `json:"scenario"`
	Title       string       `json:"title"`
	Description string       `json:"description,omitempty"`
	Query       string       `json:"query"` // the run's settings as a race URL query
	Setup       []string     `json:"setup"` // one line per setting and fault, no outcomes
	Choices     []PollChoice `json:"choices"`
	Outcomes    []string     `json:"outcomes"` // what happened, most serious first
}

// Poll is one poll of a workshop.
type Poll struct {
	ID string `json:"id"`
	PollSpec
	OpenedAt   time.Time `json:"opened_at"`
	RevealedAt time.Time `json:"revealed_at,omitzero"` // zero until revealed
}

// Revealed reports whether the run has been revealed.
func (p Poll) Revealed() bool { return !p.RevealedAt.IsZero() }

// PollResult is a poll with its distribution.
type PollResult struct {
	Poll
	Number   int            // 1 for the workshop's first poll; set by Polls
	Answered int            // participants who predicted
	Joined   int            // participants of the workshop
	Counts   map[string]int // outcome id -> participants whose prediction has it
}

// Share is the fraction of those who answered whose prediction had
// outcome o, 0 if nobody answered.
func (r PollResult) Share(o string) float64 {
	if r.Answered == 0 {
		return 0
	}
	return float64(r.Counts[o]) / float64(r.Answered)
}

// Happened reports whether the run had outcome o.
func (p Poll) Happened(o string) bool { return slices.Contains(p.Outcomes, o) }

// LearnerState is what a participant's page shows of their workshop: who
// they are in it, its open (or last revealed) poll and their prediction.
type LearnerState struct {
	Workshop   Workshop
	Nickname   string
	Poll       *Poll    // nil when the workshop has no poll
	Prediction []string // the learner's prediction on Poll; nil if none
}

// Judged is the learner's prediction judged outcome by outcome, once the
// poll is revealed and if they predicted; nil otherwise.
func (l LearnerState) Judged() []Judgement {
	if l.Poll == nil || !l.Poll.Revealed() || len(l.Prediction) == 0 {
		return nil
	}
	ids := make([]string, len(l.Poll.Choices))
	for i, c := range l.Poll.Choices {
		ids[i] = c.ID
	}
	return JudgeRace(ids, l.Prediction, l.Poll.Outcomes)
}

// Right reports whether the learner predicted exactly the outcomes that
// happened; false before the reveal or without a prediction.
func (l LearnerState) Right() bool {
	j := l.Judged()
	for _, x := range j {
		if !x.Right() {
			return false
		}
	}
	return len(j) > 0
}

// PollBackend keeps polls. Ids, specs and predictions arrive validated;
// each method is one atomic step in the back end.
type PollBackend interface {
	// OpenPoll adds p to the workshop and makes it the current poll. It
	// returns ErrNotFound, ErrEnded, or ErrTooManyPolls once the workshop
	// has had limit polls.
	OpenPoll(ctx context.Context, code string, p Poll, limit int) error
	// PollResult returns a poll with its counters and the number of
	// participants; an empty id means the current poll. ErrNoPoll if
	// there is none.
	PollResult(ctx context.Context, code, id string) (PollResult, error)
	// Predict replaces learner's prediction on poll id with the one the
	// poll's CheckPrediction returns, and adds the Tally of the old and
	// the new one to the poll's counters, in one atomic step. It returns
	// ErrNotFound, ErrEnded, ErrNotJoined, ErrNoPoll, ErrRevealed, or
	// CheckPrediction's ErrBadInput, and then changes nothing.
	Predict(ctx context.Context, code, id, learner string, prediction []string, at time.Time) error
	// RevealPoll marks the poll revealed, keeping the first time.
	RevealPoll(ctx context.Context, code, id string, at time.Time) error
	// Polls returns every poll with its counters, in any order.
	Polls(ctx context.Context, code string) ([]PollResult, error)
	// LearnerState returns ErrNotJoined if learner has not joined.
	LearnerState(ctx context.Context, code, learner string) (LearnerState, error)
	// WorkshopVersion returns a token that changes whenever something
	// every participant's LearnerState shows may have changed (not a
	// learner's own joining or prediction), or "" when the back end
	// cannot tell (or the workshop does not exist). It may be up to a
	// fraction of a second old, so it is for readers that poll (the event
	// streams, which also read again now and then), not for answering a
	// request after a write.
	WorkshopVersion(ctx context.Context, code string) (string, error)
}

// newPollID makes a random poll id from lower-case letters and digits,
// which replicas can make without asking each other.
func newPollID() string {
	const alphabet = "abcdefghijkmnpqrstuvwxyz23456789"
	b := make([]byte, pollIDLen)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

func (sp PollSpec) check() (PollSpec, error) {
	if err := checkID("scenario", sp.Scenario); err != nil {
		return sp, err
	}
	var err error
	for _, t := range []*string{&sp.Title, &sp.Description, &sp.Query} {
		if *t, err = cleanText("poll text", *t, maxPollText); err != nil {
			return sp, err
		}
	}
	if len(sp.Setup) > maxSetupLines {
		return sp, fmt.Errorf("poll setup: %d lines, at most %d: %w", len(sp.Setup), maxSetupLines, ErrBadInput)
	}
	sp.Setup = slices.Clone(sp.Setup)
	for i := range sp.Setup {
		if sp.Setup[i], err = cleanText("poll setup", sp.Setup[i], maxPollText); err != nil {
			return sp, err
		}
	}
	if len(sp.Choices) == 0 || len(sp.Choices) > maxChoices {
		return sp, fmt.Errorf("poll: %d choices, want 1 to %d: %w", len(sp.Choices), maxChoices, ErrBadInput)
	}
	ids := map[string]bool{}
	sp.Choices = slices.Clone(sp.Choices)
	for i, c := range sp.Choices {
		if err := checkID("outcome", c.ID); err != nil {
			return sp, err
		}
		if ids[c.ID] {
			return sp, fmt.Errorf("poll: choice %q twice: %w", c.ID, ErrBadInput)
		}
		ids[c.ID] = true
		if sp.Choices[i].Label, err = cleanText("choice label", c.Label, maxPollText); err != nil {
			return sp, err
		}
	}
	if len(sp.Outcomes) == 0 {
		return sp, fmt.Errorf("poll: no outcomes: %w", ErrBadInput)
	}
	for _, o := range sp.Outcomes {
		if !ids[o] {
			return sp, fmt.Errorf("poll: outcome %q is not a choice: %w", o, ErrBadInput)
		}
	}
	sp.Outcomes = slices.Clone(sp.Outcomes)
	return sp, nil
}

// OpenPoll opens a poll on the run sp describes, which becomes the
// workshop's current poll: the previous one, revealed or not, is kept
// with its results but no longer shown to learners.
func (s *Service) OpenPoll(ctx context.Context, code string, sp PollSpec, at time.Time) (Poll, error) {
	if err := checkLookupCode(code); err != nil {
		return Poll{}, fmt.Errorf("workshop: open poll: %w", err)
	}
	sp, err := sp.check()
	if err != nil {
		return Poll{}, fmt.Errorf("workshop: %s open poll: %w", code, err)
	}
	if err := checkTime("poll time", at); err != nil {
		return Poll{}, fmt.Errorf("workshop: %s open poll: %w", code, err)
	}

	p := Poll{ID: newPollID(), PollSpec: sp, OpenedAt: time.UnixMilli(at.UnixMilli())}
	if err := s.b.OpenPoll(ctx, code, p, MaxPolls); err != nil {
		return Poll{}, fmt.Errorf("workshop: %s open poll: %w", code, err)
	}
	return p, nil
}

// checkPollID accepts what newPollID makes, and reports anything else as
// a poll that does not exist.
func checkPollID(id string) error {
	if err := checkID("poll", id); err != nil {
		return fmt.Errorf("%w (%w)", err, ErrNoPoll)
	}
	return nil
}

// Poll returns a poll and its distribution; an empty id is the current
// poll.
func (s *Service) Poll(ctx context.Context, code, id string) (PollResult, error) {
	if err := checkLookupCode(code); err != nil {
		return PollResult{}, fmt.Errorf("workshop: poll: %w", err)
	}
	if id != "" {
		if err := checkPollID(id); err != nil {
			return PollResult{}, fmt.Errorf("workshop: %s poll: %w", code, err)
		}
	}

	r, err := s.b.PollResult(ctx, code, id)
	if err != nil {
		return PollResult{}, fmt.Errorf("workshop: %s poll %s: %w", code, id, err)
	}
	return r, nil
}

// Reveal closes a poll's predictions and lets learners see the run's
// outcomes. Revealing again changes nothing.
func (s *Service) Reveal(ctx context.Context, code, id string, at time.Time) error {
	if err := checkLookupCode(code); err != nil {
		return fmt.Errorf("workshop: reveal: %w", err)
	}
	if err := checkPollID(id); err != nil {
		return fmt.Errorf("workshop: %s reveal: %w", code, err)
	}
	if err := checkTime("reveal time", at); err != nil {
		return fmt.Errorf("workshop: %s reveal: %w", code, err)
	}

	if err := s.b.RevealPoll(ctx, code, id, time.UnixMilli(at.UnixMilli())); err != nil {
		return fmt.Errorf("workshop: %s reveal %s: %w", code, id, err)
	}
	return nil
}

// Predict records a participant's prediction on a poll: the outcomes they
// expect, at least one. A later prediction replaces an earlier one, so
// each participant counts once. Errors wrap ErrNotJoined, ErrNoPoll,
// ErrRevealed, ErrEnded or ErrBadInput.
func (s *Service) Predict(ctx context.Context, code, id, learner string, prediction []string, at time.Time) error {
	if err := checkLookupCode(code); err != nil {
		return fmt.Errorf("workshop: predict: %w", err)
	}
	if err := checkPollID(id); err != nil {
		return fmt.Errorf("workshop: %s predict: %w", code, err)
	}
	if err := checkTime("prediction time", at); err != nil {
		return fmt.Errorf("workshop: %s predict: %w", code, err)
	}
	set, err := cleanPrediction(prediction)
	if err != nil {
		return fmt.Errorf("workshop: %s predict: %w", code, err)
	}

	if err := s.b.Predict(ctx, code, id, learner, set, at); err != nil {
		return fmt.Errorf("workshop: %s predict %s: %w", code, id, err)
	}
	return nil
}

// Polls returns every poll of the workshop with its results, oldest
// first, numbered from 1.
func (s *Service) Polls(ctx context.Context, code string) ([]PollResult, error) {
	if err := checkLookupCode(code); err != nil {
		return nil, fmt.Errorf("workshop: polls: %w", err)
	}

	rs, err := s.b.Polls(ctx, code)
	if err != nil {
		return nil, fmt.Errorf("workshop: %s polls: %w", code, err)
	}
	sort.Slice(rs, func(i, j int) bool {
		if !rs[i].OpenedAt.Equal(rs[j].OpenedAt) {
			return rs[i].OpenedAt.Before(rs[j].OpenedAt)
		}
		return rs[i].ID < rs[j].ID
	})
	for i := range rs {
		rs[i].Number = i + 1
	}
	return rs, nil
}

// Learner returns what a participant's page shows of their workshop.
// Errors wrap ErrNotFound or ErrNotJoined.
func (s *Service) Learner(ctx context.Context, code, learner string) (LearnerState, error) {
	if err := checkLookupCode(code); err != nil {
		return LearnerState{}, fmt.Errorf("workshop: learner: %w", err)
	}
	if learner == "" {
		return LearnerState{}, fmt.Errorf("workshop: %s learner: %w", code, ErrNotJoined)
	}

	st, err := s.b.LearnerState(ctx, code, learner)
	if err != nil {
		return LearnerState{}, fmt.Errorf("workshop: %s learner: %w", code, err)
	}
	return st, nil
}

// Version returns the workshop's version (see
// PollBackend.WorkshopVersion): a stream that read a learner's state at
// one version need not read it again while the version stays the same.
func (s *Service) Version(ctx context.Context, code string) (string, error) {
	if err := checkLookupCode(code); err != nil {
		return "", fmt.Errorf("workshop: version: %w", err)
	}
	v, err := s.b.WorkshopVersion(ctx, code)
	if err != nil {
		return "", fmt.Errorf("workshop: %s version: %w", code, err)
	}
	return v, nil
}

// cleanPrediction is prediction as a set, in its order, each outcome once:
// ErrBadInput if it is empty, too long or names a malformed id.
func cleanPrediction(prediction []string) ([]string, error) {
	// Cost before work: a prediction names at most every choice once, so
	// a longer list is refused before it is read, and the rest is
	// de-duplicated with a set.
	if len(prediction) == 0 || len(prediction) > maxChoices {
		return nil, fmt.Errorf("pick from 1 to %d of the poll's outcomes: %w", maxChoices, ErrBadInput)
	}
	set := make([]string, 0, len(prediction))
	seen := make(map[string]bool, len(prediction))
	for _, o := range prediction {
		if err := checkID("outcome", o); err != nil {
			return nil, err
		}
		if !seen[o] {
			seen[o] = true
			set = append(set, o)
		}
	}
	return set, nil
}

// CheckPrediction returns the prediction a participant may make on p: the
// outcomes they named, each once, in their order. It returns ErrBadInput
// if they named none, too many, or one that is not among p's choices. A
// poll's choices never change once it is open, so a back end may check a
// prediction before the atomic step that records it.
func (p Poll) CheckPrediction(prediction []string) ([]string, error) {
	set, err := cleanPrediction(prediction)
	if err != nil {
		return nil, err
	}
	for _, o := range set {
		if !slices.ContainsFunc(p.Choices, func(c PollChoice) bool { return c.ID == o }) {
			return nil, fmt.Errorf("poll %s: outcome %q is not a choice: %w", p.ID, o, ErrBadInput)
		}
	}
	return set, nil
}

// Tally is how a poll's counters change when a participant's prediction
// goes from old to new, nil meaning none: each outcome of old counts down
// and each of new up, and AnsweredCounter goes up for a first prediction
// and down when a prediction is taken away, so a participant counts once
// however often they change their mind. Counters that do not change are
// left out. A back end adds it to the counters in the same atomic step
// that swaps old for new, and only if old is still the stored prediction.
func Tally(old, new []string) map[string]int {
	d := make(map[string]int, len(old)+len(new)+1)
	for _, o := range old {
		d[o]--
	}
	for _, o := range new {
		d[o]++
	}
	switch {
	case old == nil && new != nil:
		d[AnsweredCounter]++
	case old != nil && new == nil:
		d[AnsweredCounter]--
	}
	for k, n := range d {
		if n == 0 {
			delete(d, k)
		}
	}
	return d
}

// Result is p's result from the counters a back end keeps for it, the
// sums of every Tally, and the number of participants: outcomes that no
// prediction has, and counters that are not p's choices, are left out.
func (p Poll) Result(counters map[string]int, joined int) PollResult {
	r := PollResult{Poll: p, Joined: joined, Answered: max(counters[AnsweredCounter], 0), Counts: map[string]int{}}
	for _, c := range p.Choices {
		if n := counters[c.ID]; n > 0 {
			r.Counts[c.ID] = n
		}
	}
	return r
}

// JoinPrediction is a stored prediction, the outcome ids joined by commas;
// SplitPrediction undoes it. Outcome ids contain no commas.
func JoinPrediction(p []string) string { return strings.Join(p, ",") }

// SplitPrediction is the prediction JoinPrediction stored.
func SplitPrediction(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
