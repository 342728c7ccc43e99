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
	// ErrUnknownNode: a node number outside 1 to MaxNodes.
	ErrUnknownNode = errors.New("playground: unknown node")
	// ErrBadNodeAction: a node action other than stop, start, restart
	// and clock.
	ErrBadNodeAction = errors.New("playground: bad node action")
	// ErrClosed: the Manager or the sandbox has been closed.
	ErrClosed = errors.New("playground: closed")
	// ErrRestarting: the process that would run the request is being
	// restarted (or keeps crashing), so nothing ran; the learner may try
	// again in a moment. A sandbox in this process never fails so; the
	// worker host (package worker), which runs sandboxes in other
	// processes, answers errors that match it or ErrStopped, so that the
	// web layer acts on them without naming that host.
	ErrRestarting = errors.New("playground: restarting")
	// ErrStopped: the process running the line stopped (it ran out of
	// memory, crashed or was killed) before answering. The sandbox is
	// restored to its state before the line, but the line may have run
	// for any time up to then, so what it used is unknown.
	ErrStopped = errors.New("playground: stopped while running the line")
	// ErrBusy: the learner's sandbox kept changing on another replica of
	// the server while a call ran here (many requests at once from one
	// learner); nothing the call did was kept.
	ErrBusy = errors.New("playground: sandbox busy on another replica")
	// ErrStoreDown: the shared copies of sandboxes (Options.SandboxCopies)
	// could not be reached, so the call could neither be saved for the
	// other replicas nor checked against them; it is refused, as what it
	// did here alone might be lost or contradicted when the learner's next
	// request reaches another replica. A line refused after it ran may
	// have been saved all the same (the reply to a save that Redis made
	// can be lost): the learner's next call starts from the shared copy,
	// whatever it holds.
	ErrStoreDown = errors.New("playground: shared sandbox store unreachable")
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
