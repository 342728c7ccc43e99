package playground

import (
	"errors"
	"fmt"
)

// Sentinel errors. The web layer maps them to HTTP statuses with errors.Is.
var (
	// ErrUnknownClient: the client is not "A" or "B".
	ErrUnknownClient = errors.New("playground: unknown client")
	// ErrNotAllowed: the playground refuses the command (SUBSCRIBE, BLPOP,
	// CONFIG, ...). Exec also returns the refusal as an (error) line in
	// Result.Output.
	ErrNotAllowed = errors.New("playground: command not allowed")
	// ErrLimit: a line, argument, value, key count or script went over one
	// of the sandbox limits; the sandbox is unchanged. Exec also returns it
	// as an (error) line in Result.Output.
	ErrLimit = errors.New("playground: limit exceeded")
	// ErrBadAdvance: Advance was asked to move the clock by a duration that
	// is not positive or is larger than the maximum.
	ErrBadAdvance = errors.New("playground: bad clock advance")
	// ErrClosed: the Manager or the sandbox has been closed.
	ErrClosed = errors.New("playground: closed")
)

// A RefusedError is the playground refusing a line before Redis sees it.
// Its message is the Redis-style error text the learner sees after
// "(error) "; it matches ErrNotAllowed or ErrLimit with errors.Is.
type RefusedError struct {
	Kind error  // ErrNotAllowed or ErrLimit
	Msg  string // "ERR the playground does not support SUBSCRIBE: ..."
}

func (e *RefusedError) Error() string { return e.Msg }

// Unwrap lets errors.Is see the sentinel.
func (e *RefusedError) Unwrap() error { return e.Kind }

func notAllowed(format string, args ...any) *RefusedError {
	return &RefusedError{Kind: ErrNotAllowed, Msg: fmt.Sprintf(format, args...)}
}

func overLimit(format string, args ...any) *RefusedError {
	return &RefusedError{Kind: ErrLimit, Msg: fmt.Sprintf(format, args...)}
}
