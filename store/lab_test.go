package store

import (
	"context"
	"reflect"
	"testing"
)

func TestSolvedChallenges(t *testing.T) {
	ctx := context.Background()
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			if got, err := s.Solved(ctx, alice); err != nil || len(got) != 0 {
				t.Fatalf("Solved(new learner) = %v, %v; want none", got, err)
			}
			for _, c := range []string{"setnx-expire", "plain-del", "setnx-expire"} {
				if err := s.RecordSolved(ctx, alice, c); err != nil {
					t.Fatalf("RecordSolved(%q): %v", c, err)
				}
			}
			if _, err := s.RecordAnswer(ctx, alice, "distributed-locks", "q1", true); err != nil {
				t.Fatal(err)
			}
			got, err := s.Solved(ctx, alice)
			if want := []string{"plain-del", "setnx-expire"}; err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("Solved = %v, %v; want %v", got, err, want)
			}
			// The lab counts as progress, so a progress code carries it,
			// and Merge copies the solved challenges.
			p, err := s.Progress(ctx, alice)
			if err != nil || !p[LabTopic].Started || len(p[LabTopic].Right) != 0 {
				t.Errorf("Progress[%q] = %+v, %v; want started, nothing right", LabTopic, p[LabTopic], err)
			}
			if err := s.Merge(ctx, alice, bob); err != nil {
				t.Fatal(err)
			}
			if got, err := s.Solved(ctx, bob); err != nil || len(got) != 2 {
				t.Errorf("Solved(bob) after Merge = %v, %v; want 2", got, err)
			}
			if got, _ := s.Solved(ctx, "nobody-0123456789abcde"); len(got) != 0 {
				t.Errorf("Solved(other learner) = %v; want none", got)
			}
		})
	}
}

func TestRecordSolvedRefuses(t *testing.T) {
	s, err := OpenBolt(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for _, tt := range []struct{ name, learner, challenge string }{
		{"bad learner", "x", "plain-del"},
		{"empty challenge", alice, ""},
		{"slash", alice, "a/b"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := s.RecordSolved(ctx, tt.learner, tt.challenge); err == nil {
				t.Errorf("RecordSolved(%q, %q) = nil; want an error", tt.learner, tt.challenge)
			}
		})
	}
	if got, _ := s.Solved(ctx, alice); len(got) != 0 {
		t.Errorf("Solved after refusals = %v; want none", got)
	}
}
