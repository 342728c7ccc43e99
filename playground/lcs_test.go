package playground

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestLCSBound: LCS of strings whose table would pass maxLCSCells is
// refused with a message that says why, and costs nothing; one just
// under it runs.
func TestLCSBound(t *testing.T) {
	s := newTestSandbox(t, newFakeClock(), Limits{})
	runSteps(t, s, []step{
		{ClientA, "SET a " + strings.Repeat("a", 1023), "OK"},
		{ClientA, "SET b " + strings.Repeat("a", 1023), "OK"},
		{ClientA, "LCS a b LEN", "(integer) 1023"},
		{ClientA, "APPEND b x", "(integer) 1024"},
		{ClientA, "LCS a b LEN", "(error) ERR the playground runs LCS on strings whose lengths, each plus one, multiply to at most 1048576; these are 1023 and 1024 bytes"},
	})
}

// TestLCSIsASubsequenceOfBoth checks LCS's answers on random strings: the
// string is a subsequence of both, as long as LEN says, and the ranges of
// IDX match byte for byte and add up to it.
func TestLCSIsASubsequenceOfBoth(t *testing.T) {
	s := newTestSandbox(t, newFakeClock(), Limits{})
	r := rand.New(rand.NewPCG(7, 7))
	for range 200 {
		a, b := randomDNA(r), randomDNA(r)
		s.m.Set("a", a)
		s.m.Set("b", b)
		got := s.lcs([]string{"LCS", "a", "b"}).Str
		n := s.lcs([]string{"LCS", "a", "b", "LEN"}).Int
		if int64(len(got)) != n || !isSubsequence(got, a) || !isSubsequence(got, b) {
			t.Fatalf("LCS(%q, %q) = %q, LEN %d; want a common subsequence that long", a, b, got, n)
		}
		idx := s.lcs([]string{"LCS", "a", "b", "IDX"})
		total := int64(0)
		for _, m := range idx.Elems[1].Elems {
			ar, br := m.Elems[0].Elems, m.Elems[1].Elems
			if a[ar[0].Int:ar[1].Int+1] != b[br[0].Int:br[1].Int+1] {
				t.Fatalf("LCS(%q, %q) IDX range %v~%v does not match", a, b, ar, br)
			}
			total += ar[1].Int - ar[0].Int + 1
		}
		if total != n {
			t.Fatalf("LCS(%q, %q) IDX ranges add to %d; want %d", a, b, total, n)
		}
	}
	if _, err := s.Exec(context.Background(), ClientA, "PING"); err != nil {
		t.Fatal(err)
	}
}

func randomDNA(r *rand.Rand) string {
	b := make([]byte, r.IntN(40))
	for i := range b {
		b[i] = "ACGT"[r.IntN(4)]
	}
	return string(b)
}

func isSubsequence(sub, s string) bool {
	for i := 0; i < len(s) && sub != ""; i++ {
		if s[i] == sub[0] {
			sub = sub[1:]
		}
	}
	return sub == ""
}
