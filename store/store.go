// Package store keeps learners' progress: which topics they started and
// which quiz questions they answered right. Two back ends share one model:
// an embedded bbolt file in a data directory (the default, for one server)
// and Redis (for several replicas behind a load balancer). A write returns
// only once it is durable, so an acknowledged answer survives a crash.
// With Redis, the replicas also share workshops, rate limits and copies of
// learners' playground sandboxes (SandboxCopies).
package store

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/learnerid"
	"github.com/locklab/locklab/progress"
)

// The progress model and its errors are package progress's; the store
// implements it and names them here for its own code.
var (
	ErrUnavailable = progress.ErrUnavailable
	ErrFull        = progress.ErrFull
	ErrBadLearner  = progress.ErrBadLearner
)

type (
	TopicProgress = progress.TopicProgress
	Progress      = progress.Progress
)

// backend is the little a storage engine must do: remember a set of flags
// per learner, keep one signing secret, and keep workshops.
type backend interface {
	add(ctx context.Context, learner string, flags ...string) error
	// list returns the learner's flags, which callers must not modify
	// (the bolt back end shares them with its cache).
	list(ctx context.Context, learner string) ([]string, error)
	secret(ctx context.Context, fresh []byte) ([]byte, error)
	close() error
	workshopBackend
	carryBackend
}

// Store is a progress store over one back end.
type Store struct {
	b    backend
	name string
}

// Name says which back end is in use, for logs.
func (s *Store) Name() string { return s.name }

// checkLearner refuses an id the web layer would not have made, so that
// no stored key is named by anything else.
func checkLearner(id string) error {
	if !learnerid.Valid(id) {
		return fmt.Errorf("learner %q: %w", id, ErrBadLearner)
	}
	return nil
}

// progressBackend is a back end that keeps learners' progress parsed
// (bolt, whose file only this process writes).
type progressBackend interface {
	progress(ctx context.Context, learner string) (Progress, error)
}

// Progress returns a learner's progress on every topic. An unknown learner
// has no progress. The Progress may be shared with the store's cache:
// callers read it and never modify it, nor the Right of its topics.
func (s *Store) Progress(ctx context.Context, id string) (Progress, error) {
	if err := checkLearner(id); err != nil {
		return nil, err
	}
	l, err := s.read(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("store: read learner: %w", err)
	}
	return l, nil
}

// read is the learner's progress as the back end keeps it: parsed already
// (progressBackend), or parsed here from the flags.
func (s *Store) read(ctx context.Context, id string) (Progress, error) {
	if pb, ok := s.b.(progressBackend); ok {
		return pb.progress(ctx, id)
	}
	flags, err := s.b.list(ctx, id)
	if err != nil {
		return nil, err
	}
	return progress.Parse(flags), nil
}

// Topic returns a learner's progress on one topic.
func (s *Store) Topic(ctx context.Context, id, topic string) (TopicProgress, error) {
	l, err := s.Progress(ctx, id)
	if err != nil {
		return TopicProgress{}, err
	}
	return l[topic], nil
}

// MarkStarted records that the learner began a topic, for example by
// running a playground command.
func (s *Store) MarkStarted(ctx context.Context, id, topic string) error {
	if err := checkLearner(id); err != nil {
		return err
	}
	if err := s.b.add(ctx, id, progress.StartedFlag(topic)); err != nil {
		return fmt.Errorf("store: mark started: %w", err)
	}
	return nil
}

// RecordAnswer records an answer: any answer starts the topic, a right one
// also marks the question as right. It returns the topic's progress after
// the write, which is durable when RecordAnswer returns.
func (s *Store) RecordAnswer(ctx context.Context, id, topic, question string, right bool) (TopicProgress, error) {
	if err := checkLearner(id); err != nil {
		return TopicProgress{}, err
	}
	flags := []string{progress.StartedFlag(topic)}
	if right {
		flags = append(flags, progress.RightFlag(topic, question))
	}
	if err := s.b.add(ctx, id, flags...); err != nil {
		return TopicProgress{}, fmt.Errorf("store: record answer: %w", err)
	}
	return s.Topic(ctx, id, topic)
}

// Merge adds everything learner from has done to learner into, as when a
// learner carries progress to a browser that already had some of its own.
// Nothing of into's is lost, and the size cap never drops into for room
// (MaxSize): a learner who carried their progress means to keep it.
func (s *Store) Merge(ctx context.Context, from, into string) error {
	if err := checkLearner(from); err != nil {
		return err
	}
	if err := checkLearner(into); err != nil {
		return err
	}
	flags, err := s.b.list(ctx, from)
	if err != nil {
		return fmt.Errorf("store: merge: %w", err)
	}
	if len(flags) == 0 {
		return nil
	}
	add := s.b.add
	if kb, ok := s.b.(keepingBackend); ok {
		add = kb.addKept
	}
	if err := add(ctx, into, flags...); err != nil {
		return fmt.Errorf("store: merge: %w", err)
	}
	return nil
}

// keepingBackend is a back end with a size cap of its own (bolt), which
// must keep a learner who carried their progress however full it is.
type keepingBackend interface {
	addKept(ctx context.Context, learner string, flags ...string) error
}

// Secret returns the key the server signs progress links with. The first
// caller's fresh value is kept; later callers, on any replica, get the same.
func (s *Store) Secret(ctx context.Context, fresh []byte) ([]byte, error) {
	sec, err := s.b.secret(ctx, fresh)
	if err != nil {
		return nil, fmt.Errorf("store: secret: %w", err)
	}
	return sec, nil
}

// Close releases the back end.
func (s *Store) Close() error { return s.b.close() }
