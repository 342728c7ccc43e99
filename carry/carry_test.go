package carry

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		in, want string
		err      error
	}{
		{"K7QM4TXP", "K7QM4TXP", nil},
		{"K7QM-4TXP", "K7QM4TXP", nil},
		{" k7qm 4txp ", "K7QM4TXP", nil},
		{"k7qm-4Txp", "K7QM4TXP", nil},
		{"https://locks.example.org/carry/K7QM-4TXP", "K7QM4TXP", nil},
		{"K7QM-4TX", "", ErrMalformed},   // too short
		{"K7QM-4TXPP", "", ErrMalformed}, // too long
		{"K7QM-4TX0", "", ErrMalformed},  // 0 is not in the alphabet
		{"K7QM-4TXO", "", ErrMalformed},  // nor O
		{"K7QM-4TXÉ", "", ErrMalformed},
		{"", "", ErrMalformed},
		{strings.Repeat("A", 1000), "", ErrMalformed},
	} {
		got, err := Parse(tt.in)
		if got != tt.want || !errors.Is(err, tt.err) {
			t.Errorf("Parse(%q) = %q, %v; want %q, %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestAlphabetHasNoLookAlikes(t *testing.T) {
	if len(Alphabet) != 30 {
		t.Errorf("len(Alphabet) = %d; want 30", len(Alphabet))
	}
	for _, c := range "01OILU" {
		if strings.ContainsRune(Alphabet, c) {
			t.Errorf("Alphabet has %q", c)
		}
	}
}

func TestRandomCodes(t *testing.T) {
	counts := map[rune]int{}
	const n = 3000
	for range n {
		c := random()
		if got, err := Parse(c); err != nil || got != c {
			t.Fatalf("random() = %q does not parse back (%v)", c, err)
		}
		for _, r := range c {
			counts[r]++
		}
	}
	// Every character turns up, none far more often than the others:
	// 24000 draws, 800 expected each.
	for _, r := range Alphabet {
		if counts[r] < 600 || counts[r] > 1000 {
			t.Errorf("%q drawn %d times in %d; want about %d", r, counts[r], n*Length, n*Length/len(Alphabet))
		}
	}
	if got := Format("K7QM4TXP"); got != "K7QM-4TXP" {
		t.Errorf("Format = %q; want K7QM-4TXP", got)
	}
}

// memStore is a Store in a map, for the rules above the store.
type memStore struct {
	codes map[string]*memCode
	by    map[string]string
	puts  int
	taken []string // codes PutCarryCode says exist
}

type memCode struct {
	t    Ticket
	used bool
}

func (m *memStore) PutCarryCode(_ context.Context, code string, t Ticket) error {
	m.puts++
	if len(m.taken) > 0 {
		m.taken = m.taken[1:]
		return ErrTaken
	}
	m.codes[code] = &memCode{t: t}
	m.by[t.Learner] = code
	return nil
}

func (m *memStore) LiveCarryCode(_ context.Context, learner string, now time.Time) (string, Ticket, error) {
	c, ok := m.codes[m.by[learner]]
	if !ok || c.used || !now.Before(c.t.Expires) {
		return "", Ticket{}, ErrUnknown
	}
	return m.by[learner], c.t, nil
}

func (m *memStore) TakeCarryCode(_ context.Context, code string, now time.Time) (Ticket, error) {
	c, ok := m.codes[code]
	switch {
	case !ok:
		return Ticket{}, ErrUnknown
	case c.used:
		return Ticket{}, ErrUsed
	case !now.Before(c.t.Expires):
		return Ticket{}, ErrExpired
	}
	c.used = true
	return c.t, nil
}

type merges [][2]string

func (m *merges) Merge(_ context.Context, from, into string) error {
	*m = append(*m, [2]string{from, into})
	return nil
}

func TestIssueAndAdopt(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	st := &memStore{codes: map[string]*memCode{}, by: map[string]string{}, taken: []string{"x"}}
	var m merges
	c := New(st, &m, 0, func() time.Time { return now })
	code, err := c.Issue(ctx, "owner")
	if err != nil || st.puts != 2 || !code.Expires.Equal(now.Add(DefaultTTL)) {
		t.Fatalf("Issue = %+v, %v after %d puts; want a code valid for %v, drawn again after a taken one", code, err, st.puts, DefaultTTL)
	}
	if live, ok, _ := c.Live(ctx, "owner"); !ok || live != code || !c.Reusable(live) {
		t.Errorf("Live = %+v %v; want the new code, reusable", live, ok)
	}
	now = now.Add(DefaultTTL/2 + time.Second)
	if live, _, _ := c.Live(ctx, "owner"); c.Reusable(live) {
		t.Errorf("a code with less than half its time left is reusable")
	}
	// Typed in lower case with a space: the owner's progress and the
	// adopting browser's own go into the fresh id, in that order.
	typed := strings.ToLower(code.Code[:4] + " " + code.Code[4:])
	if err := c.Adopt(ctx, typed, "laptop", "fresh"); err != nil {
		t.Fatal(err)
	}
	if want := (merges{{"owner", "fresh"}, {"laptop", "fresh"}}); len(m) != 2 || m[0] != want[0] || m[1] != want[1] {
		t.Errorf("merges = %v; want %v", m, want)
	}
	if err := c.Adopt(ctx, code.Display(), "", "fresh2"); !errors.Is(err, ErrUsed) {
		t.Errorf("second Adopt = %v; want ErrUsed", err)
	}
	if err := c.Adopt(ctx, "not a code", "", "fresh3"); !errors.Is(err, ErrMalformed) {
		t.Errorf("Adopt(garbage) = %v; want ErrMalformed", err)
	}
	code2, _ := c.Issue(ctx, "owner")
	now = now.Add(DefaultTTL)
	if err := c.Adopt(ctx, code2.Code, "", "fresh4"); !errors.Is(err, ErrExpired) {
		t.Errorf("Adopt after the TTL = %v; want ErrExpired", err)
	}
	if len(m) != 2 {
		t.Errorf("failed adoptions merged: %v", m[2:])
	}
}
