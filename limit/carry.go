package limit

import (
	"context"
	"errors"
)

// CarryLimit meters one kind of event per key: each costs Cost units of
// Meter, which refills Refill units a second, and none may happen while
// fewer than Cost are left. A nil Meter is no limit.
type CarryLimit struct {
	Meter        Meter
	Cost, Refill int
}

// CarryLimits meter transfer codes: new codes per learner and per client
// address, and failed adoptions (a code that is unknown, used or expired)
// per client address, so that codes cannot be guessed. They fail open, as
// the write limits do.
type CarryLimits struct {
	Issue, IssuePerAddress, Guesses CarryLimit
}

// NewCarryLimits returns the carry limits made by m, none when r.Writes
// is 0 (no limits at all): a learner may make
// five new codes at once, then one a minute; an address a hundred, then
// ten a minute (a classroom); and an address may type ten wrong codes,
// then one a minute. With 30^8 codes, that makes guessing hopeless.
func NewCarryLimits(m Maker, r Rates) CarryLimits {
	if r.Writes == 0 {
		return CarryLimits{}
	}
	perMinute := func(n, burst int) CarryLimit {
		// A unit a second; an event costs a minute's units over n.
		cost := 60 / n
		return CarryLimit{Meter: m.Meter(1, burst*cost), Cost: cost, Refill: 1}
	}
	return CarryLimits{Issue: perMinute(1, 5), IssuePerAddress: perMinute(10, 100), Guesses: perMinute(1, 10)}
}

// CheckIssue checks a new code for learner from addr: refused by
// "carry_codes".
func (c CarryLimits) CheckIssue(ctx context.Context, learner, addr string) (Decision, error) {
	var errs error
	for _, k := range c.issue(learner, addr) {
		w, err := wait(ctx, k.l.Meter, k.key, k.l.Cost, unitEvery(k.l.Refill))
		errs = errors.Join(errs, err)
		if w > 0 {
			return Decision{Limit: "carry_codes", Wait: w}, errs
		}
	}
	return Decision{}, errs
}

// Issued charges a new code to learner and addr, even if ctx has ended.
func (c CarryLimits) Issued(ctx context.Context, learner, addr string) error {
	var errs error
	for _, k := range c.issue(learner, addr) {
		errs = errors.Join(errs, take(ctx, k.l.Meter, k.key, k.l.Cost))
	}
	return errs
}

// CheckGuess checks an adoption from addr: refused by "carry_guesses" while
// the address has typed too many wrong codes.
func (c CarryLimits) CheckGuess(ctx context.Context, addr string) (Decision, error) {
	w, err := wait(ctx, c.Guesses.Meter, guessKey(addr), c.Guesses.Cost, unitEvery(c.Guesses.Refill))
	if w > 0 {
		return Decision{Limit: "carry_guesses", Wait: w}, err
	}
	return Decision{}, err
}

// WrongGuess counts a wrong code (unknown, used or expired) from addr,
// even if ctx has ended.
func (c CarryLimits) WrongGuess(ctx context.Context, addr string) error {
	return take(ctx, c.Guesses.Meter, guessKey(addr), c.Guesses.Cost)
}

type carryKey struct {
	l   CarryLimit
	key string
}

func (c CarryLimits) issue(learner, addr string) [2]carryKey {
	return [2]carryKey{{c.Issue, "c:learner:" + learner}, {c.IssuePerAddress, "c:addr:" + addr}}
}

func guessKey(addr string) string { return "g:addr:" + addr }
