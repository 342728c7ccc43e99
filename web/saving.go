package web

import (
	"context"
	"errors"

	"github.com/locklab/locklab/progress"
)

// Saving a learner's progress. A learner new to the store is saved only
// while their client address has newcomers left today (limit.Newcomers)
// and the store has room for them (progress.ErrFull). A newcomer refused
// uses the course all the same: answers are graded, checks run, and the
// page says that their progress is not being kept. A learner whose
// progress is saved already is never refused.

// What a newcomer whose progress is not saved is told, by reason.
const (
	notSavedNewcomers = "Your progress is not being saved: too many new learners came from your network today. Everything here works; only your progress is not kept."
	notSavedFull      = "Your progress is not being saved: this server has no room for new learners' progress right now. Everything here works; only your progress is not kept."
)

// admitProgress decides whether the learner's progress may be saved. It
// returns "" if it may, else the sentence that tells the learner why
// not. Only a newcomer (nothing saved yet) takes one from the allowance
// of their client address addr.
func (s *Server) admitProgress(ctx context.Context, id, addr string) (string, error) {
	if s.newcomers.PerDay() == 0 {
		return "", nil
	}
	p, err := s.progress.Progress(ctx, id)
	if err != nil {
		return "", err
	}
	if len(p) > 0 {
		return "", nil
	}
	d, err := s.newcomers.Admit(ctx, addr)
	if err != nil {
		s.failures.Warn("newcomer limit", "error", err)
	}
	if !d.Allowed() {
		s.metrics.rateLimited.WithLabelValues(d.Limit).Inc()
		return notSavedNewcomers, nil
	}
	return "", nil
}

// notSavedFor is the sentence for a write the store refused because it is
// full of learners it keeps (progress.ErrFull), or "" for any other outcome.
func notSavedFor(err error) string {
	if errors.Is(err, progress.ErrFull) {
		return notSavedFull
	}
	return ""
}
