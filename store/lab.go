package store

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/locklab/locklab/progress"
)

// LabTopic is the topic the lock lab's progress is kept under, beside the
// lessons': it is started once a challenge is solved, so that progress
// codes carry a learner who has only used the lab, and each solved
// challenge is one more flag that Merge copies like any other.
const LabTopic = "lab"

// solvedPrefix starts the flag of a solved lab challenge:
// "lab/solved/<challenge>".
const solvedPrefix = LabTopic + "/solved/"

// RecordSolved records that the learner solved a lab challenge. Solving
// it again changes nothing.
func (s *Store) RecordSolved(ctx context.Context, id, challenge string) error {
	if err := checkLearner(id); err != nil {
		return err
	}
	if challenge == "" || strings.ContainsAny(challenge, "/ ") {
		// The web layer only passes ids of the lab's own challenges.
		return fmt.Errorf("store: record solved: malformed challenge id %q", challenge)
	}
	if err := s.b.add(ctx, id, progress.StartedFlag(LabTopic), solvedPrefix+challenge); err != nil {
		return fmt.Errorf("store: record solved: %w", err)
	}
	return nil
}

// Solved returns the ids of the lab challenges the learner solved,
// sorted. An unknown learner has solved none.
func (s *Store) Solved(ctx context.Context, id string) ([]string, error) {
	if err := checkLearner(id); err != nil {
		return nil, err
	}
	flags, err := s.b.list(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("store: read solved: %w", err)
	}
	var out []string
	for _, f := range flags {
		if c, ok := strings.CutPrefix(f, solvedPrefix); ok {
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out, nil
}
