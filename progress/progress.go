// Package progress is a learner's progress through the course: what is
// kept for each topic, how it is recorded, and the errors a store of it
// may answer. Package store implements it on bbolt and Redis; web shows
// it and names only this package.
package progress

import (
	"errors"
	"slices"
	"sort"
	"strings"
)

// ErrUnavailable means the store cannot be reached or written right now
// (Redis down, a full disk); the caller should tell the learner that
// progress can't be saved, and try again later.
var ErrUnavailable = errors.New("progress store unavailable")

// ErrFull means the file store is at its size cap and holds no anonymous
// learner to drop for a new one: the newcomer's progress is not saved.
// Learners already saved are never refused.
var ErrFull = errors.New("progress store full")

// ErrBadLearner means a learner id is malformed.
var ErrBadLearner = errors.New("malformed learner id")

// TopicProgress is what a learner has done on one topic.
type TopicProgress struct {
	Started bool
	// Right holds the ids of the questions answered right, sorted.
	Right []string
}

// Progress is one learner's progress on every topic, keyed by topic slug.
type Progress map[string]TopicProgress

// A learner's progress is kept as flags: "<topic>/started" and
// "<topic>/right/<question>". Adding a flag twice changes nothing, so
// concurrent writes never lose each other's work.

// StartedFlag is the flag that says a topic was started.
func StartedFlag(topic string) string { return topic + "/started" }

// RightFlag is the flag that says a question was answered right.
func RightFlag(topic, question string) string { return topic + "/right/" + question }

// Parse reads a learner's flags into their Progress, skipping flags it
// does not know. Each topic's questions come sorted, and each slice is
// clipped, so that a reader's append never writes into flags a cache
// shares.
func Parse(flags []string) Progress {
	l := Progress{}
	for _, f := range flags {
		topic, rest, ok := strings.Cut(f, "/")
		if !ok {
			continue
		}
		tp := l[topic]
		switch {
		case rest == "started":
			tp.Started = true
		case strings.HasPrefix(rest, "right/"):
			if tp.Right == nil {
				tp.Right = make([]string, 0, len(flags)) // one allocation per topic
			}
			tp.Right = append(tp.Right, strings.TrimPrefix(rest, "right/"))
		default:
			continue
		}
		l[topic] = tp
	}
	for topic, tp := range l {
		sort.Strings(tp.Right)
		// Clipped: an append by a reader copies rather than writing into
		// a slice the cache shares.
		tp.Right = slices.Clip(tp.Right)
		l[topic] = tp
	}
	return l
}
