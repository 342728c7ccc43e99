package workshop

import (
	"crypto/rand"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits on what callers may store. The exported ones are also the
// forms' maxlength, so a browser stops at the same point the check does.
const (
	MaxTitleRunes = 100
	MaxNickRunes  = 40
	minCodeLen    = 4
	MaxCodeLen    = 12
	maxIDLen      = 64
	newCodeLen    = 6
)

// codeAlphabet leaves out letters and digits that are easy to confuse.
const codeAlphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"

// NewCode makes a random six-character join code from letters and digits
// that are hard to confuse when read off a projector.
func NewCode() string {
	b := make([]byte, newCodeLen)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = codeAlphabet[int(b[i])%len(codeAlphabet)]
	}
	return string(b)
}

// NormalizeCode is a code as a learner may type it (lower case, spaces
// around it) in the form codes have.
func NormalizeCode(s string) string {
	return strings.ToUpper(strings.TrimSpace(s))
}

// checkCode accepts ^[A-Z0-9]{4,12}$.
func checkCode(code string) error {
	ok := len(code) >= minCodeLen && len(code) <= MaxCodeLen
	for i := 0; ok && i < len(code); i++ {
		c := code[i]
		ok = 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	}
	if !ok {
		return fmt.Errorf("workshop code %q: %w", code, ErrBadInput)
	}
	return nil
}

// checkLookupCode is checkCode for a workshop that should exist: no
// workshop can have a malformed code, so the error is also ErrNotFound,
// and a learner who mistypes a code is told there is no such workshop.
func checkLookupCode(code string) error {
	if err := checkCode(code); err != nil {
		return fmt.Errorf("%w (%w)", err, ErrNotFound)
	}
	return nil
}

// checkID accepts ^[a-z0-9-]{1,64}$, the shape of question, choice,
// scenario and topic ids.
func checkID(what, id string) error {
	ok := len(id) >= 1 && len(id) <= maxIDLen
	for i := 0; ok && i < len(id); i++ {
		c := id[i]
		ok = 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-'
	}
	if !ok {
		return fmt.Errorf("%s id %q: %w", what, id, ErrBadInput)
	}
	return nil
}

// cleanText trims s and checks that it is valid UTF-8 without control,
// format (bidi overrides, zero-width joiners), private-use or surrogate
// characters and at most max runes long: titles and nicknames end up on
// dashboards, beside others' names, and in CSV files, where an
// invisible or reordering character could make one name pass for another.
func cleanText(what, s string, max int) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case !utf8.ValidString(s):
		return "", fmt.Errorf("%s: not UTF-8: %w", what, ErrBadInput)
	case utf8.RuneCountInString(s) > max:
		return "", fmt.Errorf("%s: longer than %d characters: %w", what, max, ErrBadInput)
	case strings.ContainsFunc(s, unicode.IsControl):
		return "", fmt.Errorf("%s: control characters: %w", what, ErrBadInput)
	case strings.ContainsFunc(s, func(r rune) bool { return unicode.In(r, unicode.Cf, unicode.Co, unicode.Cs) }):
		return "", fmt.Errorf("%s: invisible, direction-changing or private-use characters: %w", what, ErrBadInput)
	}
	return s, nil
}

func checkTime(what string, t time.Time) error {
	if t.IsZero() {
		return fmt.Errorf("%s missing: %w", what, ErrBadInput)
	}
	return nil
}
