package store

// Workshops: Store is the workshop.Backend of the workshop package, which
// holds the rules; this file only hands calls to the bolt or Redis back
// end (workshop_bolt.go, workshop_redis.go), each of which makes every
// write one atomic step, so replicas writing at the same time never lose
// each other's counts.

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/locklab/locklab/workshop"
)

// workshopBackend is what a storage engine does for workshops; see
// workshop.Backend, whose methods these are, with times as Unix
// milliseconds.
type workshopBackend interface {
	createWorkshop(ctx context.Context, w workshop.Workshop) error
	workshop(ctx context.Context, code string) (workshop.Workshop, error)
	workshops(ctx context.Context, limit int) ([]workshop.Workshop, error)
	endWorkshop(ctx context.Context, code string, at int64) error
	joinWorkshop(ctx context.Context, code string, j workshop.Joining) error
	isMember(ctx context.Context, code, learner string) (bool, error)
	flushWorkshop(ctx context.Context, code string, b workshop.Batch) error
	setJoinClosed(ctx context.Context, code string, closed bool) error
	removeParticipant(ctx context.Context, code, learner string) error
	workshopData(ctx context.Context, code string) (workshop.Data, error)
	openPoll(ctx context.Context, code string, p workshop.Poll, limit int) error
	pollResult(ctx context.Context, code, id string) (workshop.PollResult, error)
	predict(ctx context.Context, code, id, learner string, prediction []string, at int64) error
	revealPoll(ctx context.Context, code, id string, at int64) error
	polls(ctx context.Context, code string) ([]workshop.PollResult, error)
	learnerState(ctx context.Context, code, learner string) (workshop.LearnerState, error)
	workshopVersion(ctx context.Context, code string) (string, error)
}

var _ workshop.Backend = (*Store)(nil)

// learnerFieldSep joins a learner id and a counter name in a Redis field;
// learner ids do not contain it.
const learnerFieldSep = "/"

// CreateWorkshop keeps a new workshop, or returns workshop.ErrExists.
func (s *Store) CreateWorkshop(ctx context.Context, w workshop.Workshop) error {
	return s.b.createWorkshop(ctx, w)
}

// Workshop returns a workshop, or workshop.ErrNotFound.
func (s *Store) Workshop(ctx context.Context, code string) (workshop.Workshop, error) {
	return s.b.workshop(ctx, code)
}

// Workshops returns up to limit workshops, newest first.
func (s *Store) Workshops(ctx context.Context, limit int) ([]workshop.Workshop, error) {
	return s.b.workshops(ctx, limit)
}

// EndWorkshop ends a workshop, keeping the first end time.
func (s *Store) EndWorkshop(ctx context.Context, code string, at time.Time) error {
	return s.b.endWorkshop(ctx, code, toMillis(at))
}

// JoinWorkshop adds or renames a participant; see workshop.Backend. A
// malformed learner id is workshop.ErrBadInput and ErrBadLearner.
func (s *Store) JoinWorkshop(ctx context.Context, code string, j workshop.Joining) error {
	if err := checkLearner(j.Learner); err != nil {
		return fmt.Errorf("store: %w: %w", workshop.ErrBadInput, err)
	}
	return s.b.joinWorkshop(ctx, code, j)
}

// IsMember reports whether learner is a participant, and only reads. A
// malformed learner id is workshop.ErrBadInput and ErrBadLearner.
func (s *Store) IsMember(ctx context.Context, code, learner string) (bool, error) {
	if err := checkLearner(learner); err != nil {
		return false, fmt.Errorf("store: %w: %w", workshop.ErrBadInput, err)
	}
	return s.b.isMember(ctx, code, learner)
}

// FlushWorkshop adds a batch of participants' activity in one atomic
// step; see workshop.Backend. A learner who is not a participant is
// skipped, as is a malformed learner id, which no participant has.
func (s *Store) FlushWorkshop(ctx context.Context, code string, b workshop.Batch) error {
	for learner := range b {
		if checkLearner(learner) != nil {
			b = maps.Clone(b)
			maps.DeleteFunc(b, func(l string, _ *workshop.MemberBatch) bool { return checkLearner(l) != nil })
			break
		}
	}
	return s.b.flushWorkshop(ctx, code, b)
}

// SetJoinClosed closes a workshop to newcomers, or opens it.
func (s *Store) SetJoinClosed(ctx context.Context, code string, closed bool) error {
	return s.b.setJoinClosed(ctx, code, closed)
}

// RemoveParticipant removes a participant; see workshop.Backend.
func (s *Store) RemoveParticipant(ctx context.Context, code, learner string) error {
	if err := checkLearner(learner); err != nil {
		return fmt.Errorf("store: %w: %w", workshop.ErrNoParticipant, err)
	}
	return s.b.removeParticipant(ctx, code, learner)
}

// WorkshopData returns everything kept about a workshop.
func (s *Store) WorkshopData(ctx context.Context, code string) (workshop.Data, error) {
	return s.b.workshopData(ctx, code)
}

// OpenPoll adds a poll and makes it the workshop's current one.
func (s *Store) OpenPoll(ctx context.Context, code string, p workshop.Poll, limit int) error {
	return s.b.openPoll(ctx, code, p, limit)
}

// PollResult returns a poll with its counters; "" is the current poll.
func (s *Store) PollResult(ctx context.Context, code, id string) (workshop.PollResult, error) {
	return s.b.pollResult(ctx, code, id)
}

// Predict replaces a learner's prediction on a poll; see
// workshop.PollBackend. A malformed learner id is workshop.ErrBadInput and
// ErrBadLearner.
func (s *Store) Predict(ctx context.Context, code, id, learner string, prediction []string, at time.Time) error {
	if err := checkLearner(learner); err != nil {
		return fmt.Errorf("store: %w: %w", workshop.ErrBadInput, err)
	}
	return s.b.predict(ctx, code, id, learner, prediction, toMillis(at))
}

// RevealPoll marks a poll revealed, keeping the first time.
func (s *Store) RevealPoll(ctx context.Context, code, id string, at time.Time) error {
	return s.b.revealPoll(ctx, code, id, toMillis(at))
}

// Polls returns every poll of a workshop with its counters.
func (s *Store) Polls(ctx context.Context, code string) ([]workshop.PollResult, error) {
	return s.b.polls(ctx, code)
}

// WorkshopVersion returns a token that changes with what participants
// see of the workshop: on Redis, its start time and its version field,
// read at most every versionFresh per replica; "" with the file store,
// whose reads are local.
func (s *Store) WorkshopVersion(ctx context.Context, code string) (string, error) {
	return s.b.workshopVersion(ctx, code)
}

// LearnerState returns a participant's view of the workshop, or
// workshop.ErrNotJoined; a malformed learner id has not joined anything.
func (s *Store) LearnerState(ctx context.Context, code, learner string) (workshop.LearnerState, error) {
	if err := checkLearner(learner); err != nil {
		return workshop.LearnerState{}, fmt.Errorf("store: %w: %w", workshop.ErrNotJoined, err)
	}
	return s.b.learnerState(ctx, code, learner)
}

// member builds a workshop member from what a back end keeps.
func member(learner, nickname string, joined, last int64, counts map[string]int) workshop.Member {
	return workshop.Member{Learner: learner, Nickname: nickname, JoinedAt: fromMillis(joined), LastActive: fromMillis(last), Counts: counts}
}

func toMillis(t time.Time) int64 { return t.UnixMilli() }

func fromMillis(ms int64) time.Time { return time.UnixMilli(ms) }
