// Package carry moves a learner's progress to another browser or device
// with a transfer code: eight random characters that are easy to read out
// and type on a phone, valid for a short time and for one use only. The
// code names a copy to make, never a session: adopting it copies the
// owner's progress into a fresh learner id for the adopting browser, so no
// learner id ever leaves the server and nobody can push their id onto
// someone else's browser. Codes live in a Store (store/ keeps them in
// bbolt or Redis); this package holds the rules.
package carry

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Alphabet is the characters of a code: capital letters and digits
// without the ones people confuse when reading or typing (0 and O, 1, I
// and L, and U, which looks like V). 30 characters.
const Alphabet = "ABCDEFGHJKMNPQRSTVWXYZ23456789"

// Length is the number of characters of a code: 30^8 ≈ 6.6·10^11 codes.
const Length = 8

// DefaultTTL is how long a code is valid unless configured otherwise.
const DefaultTTL = 15 * time.Minute

// Errors of taking a code. Each tells the learner something different:
// a typo, a code that never existed (or was cleaned up), one already used
// and one that ran out of time.
var (
	ErrMalformed = errors.New("not a transfer code")
	ErrUnknown   = errors.New("no such transfer code")
	ErrUsed      = errors.New("transfer code already used")
	ErrExpired   = errors.New("transfer code expired")
	// ErrNothingToCarry means the learner has no saved progress to copy.
	ErrNothingToCarry = errors.New("no saved progress to carry")
	// ErrTaken is a store's answer to a new code that already exists; New
	// then draws another.
	ErrTaken = errors.New("transfer code already exists")
)

// Ticket is what a code stands for: whose progress it copies, until when.
type Ticket struct {
	Learner string
	Expires time.Time
}

// Store keeps codes. Implementations make each method one atomic step, so
// that two browsers adopting one code at the same moment, on any replica,
// cannot both succeed; they keep a used or expired code for a while so the
// learner is told which it was, and then drop it.
type Store interface {
	// PutCarryCode keeps code for t.Learner until t.Expires and makes it
	// that learner's current code, dropping their previous one. It returns
	// ErrTaken if code exists already.
	PutCarryCode(ctx context.Context, code string, t Ticket) error
	// LiveCarryCode returns the learner's current code if it is unused and
	// not expired at now; ErrUnknown if there is none.
	LiveCarryCode(ctx context.Context, learner string, now time.Time) (string, Ticket, error)
	// TakeCarryCode uses code up and returns its ticket: ErrUnknown,
	// ErrUsed or ErrExpired if it cannot be used at now.
	TakeCarryCode(ctx context.Context, code string, now time.Time) (Ticket, error)
}

// Merger copies one learner's progress into another's, keeping what the
// other had.
type Merger interface {
	Merge(ctx context.Context, from, into string) error
}

// Code is a code handed to a learner.
type Code struct {
	Code    string // canonical form: Length characters of Alphabet
	Expires time.Time
}

// Display is the code as shown to people: two groups of four, K7QM-4TXP.
func (c Code) Display() string { return Format(c.Code) }

// Codes makes and takes codes.
type Codes struct {
	store    Store
	progress Merger
	ttl      time.Duration
	now      func() time.Time
}

// New returns Codes over st and progress, with codes valid for ttl (zero
// is DefaultTTL) by the clock now (nil is time.Now).
func New(st Store, progress Merger, ttl time.Duration, now func() time.Time) *Codes {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	if now == nil {
		now = time.Now
	}
	return &Codes{store: st, progress: progress, ttl: ttl, now: now}
}

// TTL is how long a new code is valid.
func (c *Codes) TTL() time.Duration { return c.ttl }

// Live returns the learner's current code, if they have one that can
// still be used.
func (c *Codes) Live(ctx context.Context, learner string) (Code, bool, error) {
	code, t, err := c.store.LiveCarryCode(ctx, learner, c.now())
	if errors.Is(err, ErrUnknown) {
		return Code{}, false, nil
	}
	if err != nil {
		return Code{}, false, fmt.Errorf("carry: live code: %w", err)
	}
	return Code{Code: code, Expires: t.Expires}, true, nil
}

// Reusable reports whether a live code has at least half its time left;
// asking for a code again then returns it instead of making a new one, so
// repeated requests cost no new records.
func (c *Codes) Reusable(code Code) bool {
	return code.Expires.Sub(c.now()) >= c.ttl/2
}

// maxDraws bounds the retries on a code that exists already; with 30^8
// codes even one retry is rare.
const maxDraws = 5

// Issue makes a new code for learner, which replaces their previous one.
func (c *Codes) Issue(ctx context.Context, learner string) (Code, error) {
	for range maxDraws {
		code := Code{Code: random(), Expires: c.now().Add(c.ttl)}
		err := c.store.PutCarryCode(ctx, code.Code, Ticket{Learner: learner, Expires: code.Expires})
		if errors.Is(err, ErrTaken) {
			continue
		}
		if err != nil {
			return Code{}, fmt.Errorf("carry: new code: %w", err)
		}
		return code, nil
	}
	return Code{}, fmt.Errorf("carry: new code: %d draws all taken: %w", maxDraws, ErrTaken)
}

// Adopt uses up input (a code as typed, or a pasted link) and copies its
// owner's progress, and current's if the adopting browser had an id, into
// fresh: the new id the adopting browser will carry. The owner's later
// progress is not linked: the code copies what they had at this moment.
func (c *Codes) Adopt(ctx context.Context, input, current, fresh string) error {
	code, err := Parse(input)
	if err != nil {
		return err
	}
	t, err := c.store.TakeCarryCode(ctx, code, c.now())
	if err != nil {
		return fmt.Errorf("carry: take code: %w", err)
	}
	if err := c.progress.Merge(ctx, t.Learner, fresh); err != nil {
		return fmt.Errorf("carry: copy progress: %w", err)
	}
	if current != "" {
		if err := c.progress.Merge(ctx, current, fresh); err != nil {
			return fmt.Errorf("carry: keep this browser's progress: %w", err)
		}
	}
	return nil
}

// random draws a code. Each byte is taken only below the largest multiple
// of len(Alphabet), so every character is equally likely.
func random() string {
	const limit = 256 - 256%len(Alphabet)
	out := make([]byte, 0, Length)
	var buf [16]byte
	for len(out) < Length {
		_, _ = rand.Read(buf[:]) // crypto/rand.Read never fails
		for _, b := range buf {
			if int(b) < limit && len(out) < Length {
				out = append(out, Alphabet[int(b)%len(Alphabet)])
			}
		}
	}
	return string(out)
}

// Parse turns what a learner typed or pasted into a canonical code: case
// does not matter, spaces and dashes are ignored, and a whole link
// (…/carry/K7QM-4TXP) gives its code.
func Parse(input string) (string, error) {
	s := strings.TrimSpace(input)
	if i := strings.LastIndex(s, "/carry/"); i >= 0 {
		s = s[i+len("/carry/"):]
	}
	if len(s) > 4*Length { // nobody types that much; do not loop over it
		return "", ErrMalformed
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '-' || r == ' ' || r == '\t' || r == '\u2010' || r == '\u2011' || r == '\u2013':
			continue
		case 'a' <= r && r <= 'z':
			r -= 'a' - 'A'
		}
		if r > 0x7f || !strings.ContainsRune(Alphabet, r) {
			return "", ErrMalformed
		}
		b.WriteRune(r)
	}
	if b.Len() != Length {
		return "", ErrMalformed
	}
	return b.String(), nil
}

// Format groups a canonical code in fours for people: K7QM-4TXP.
func Format(code string) string {
	if len(code) != Length {
		return code
	}
	return code[:Length/2] + "-" + code[Length/2:]
}
