// Package faillog logs failures that can repeat many times a second, such
// as every request's call to a Redis that is down: each kind of failure
// at most once a minute, the line carrying how many of that kind were not
// logged since the last one. One failing dependency then costs the log a
// few lines a minute, not one per request, and an operator still sees how
// often it failed.
package faillog

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Every is how often one kind of failure is logged at most.
const Every = time.Minute

// NotLogged is the attribute that says how many failures of the line's
// kind were not logged since the last line of that kind.
const NotLogged = "more_failures_not_logged"

// Log logs failures through a logger, each kind at most once a minute.
// A kind is a message written in the code, such as "rate limiter" or
// "read progress", never one made from a request: the kinds are a small
// fixed set, and so is what Log remembers.
type Log struct {
	log *slog.Logger
	now func() time.Time

	mu    sync.Mutex
	kinds map[string]*kind
}

type kind struct {
	last      time.Time // when this kind was last logged
	notLogged int       // since then
}

// New returns a Log writing to log (none: nothing is written) that reads
// the time from now (nil: time.Now).
func New(log *slog.Logger, now func() time.Time) *Log {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if now == nil {
		now = time.Now
	}
	return &Log{log: log, now: now, kinds: map[string]*kind{}}
}

// Warn logs a failure of kind msg as a warning with args, unless one of
// the same kind was logged less than Every ago: then it only counts it.
func (l *Log) Warn(msg string, args ...any) {
	l.Log(context.Background(), slog.LevelWarn, msg, args...)
}

// Log logs a failure of kind msg at level with args, unless one of the
// same kind was logged less than Every ago: then it only counts it. The
// line logged carries NotLogged, the failures of its kind counted since
// the last line.
func (l *Log) Log(ctx context.Context, level slog.Level, msg string, args ...any) {
	now := l.now()
	l.mu.Lock()
	k := l.kinds[msg]
	if k == nil {
		k = &kind{}
		l.kinds[msg] = k
	} else if now.Sub(k.last) < Every {
		k.notLogged++
		l.mu.Unlock()
		return
	}
	notLogged := k.notLogged
	k.last, k.notLogged = now, 0
	l.mu.Unlock()
	l.log.Log(ctx, level, msg, append(args, NotLogged, notLogged)...)
}
