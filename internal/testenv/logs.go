package testenv

import (
	"context"
	"log/slog"
	"sync"
)

// Logs is a slog.Handler that keeps every record, for tests that check
// what was logged: Logs.Logger() is the logger to hand to the code under
// test. Safe for concurrent use.
type Logs struct {
	mu      sync.Mutex
	records []slog.Record
}

// Logger returns a logger whose records l keeps.
func (l *Logs) Logger() *slog.Logger { return slog.New(l) }

// Enabled keeps records of every level.
func (l *Logs) Enabled(context.Context, slog.Level) bool { return true }

// Handle keeps r.
func (l *Logs) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records = append(l.records, r.Clone())
	return nil
}

// WithAttrs and WithGroup are not kept apart: the tests that use Logs
// log through the logger itself.
func (l *Logs) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *Logs) WithGroup(string) slog.Handler      { return l }

// Count returns how many records have the message msg.
func (l *Logs) Count(msg string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.records {
		if r.Message == msg {
			n++
		}
	}
	return n
}

// Messages returns how many records have each message.
func (l *Logs) Messages() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := map[string]int{}
	for _, r := range l.records {
		m[r.Message]++
	}
	return m
}

// Attrs returns the attributes of the records with message msg, in the
// order they were logged, each as a map from key to value.
func (l *Logs) Attrs(msg string) []map[string]slog.Value {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]slog.Value
	for _, r := range l.records {
		if r.Message != msg {
			continue
		}
		m := map[string]slog.Value{}
		r.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value; return true })
		out = append(out, m)
	}
	return out
}
