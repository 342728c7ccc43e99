package worker

import (
	"context"
	"errors"

	"github.com/locklab/locklab/playground"
)

// The protocol: the supervisor writes requests to the worker's stdin, the
// worker responses to its stdout, as frames (frame.go, encoding.go). The
// first request is opConfig and the first response the hello; after that,
// every request with an ID gets one response with that ID, in any order,
// and the others (open, close, compact, cancel) get none. A lab check
// (opLab) belongs to no sandbox: it runs on a goroutine of its own and
// answers when it is done, and cancel stops it. The worker runs each sandbox's
// requests in the order they arrive, open first and close last, and
// writes the responses of one sandbox in the order its commands ran, so
// that the supervisor applies their Changes in order.

// helloMagic starts a worker's first response, so that the supervisor
// knows it started the right program.
const helloMagic = "locklab-sandbox-worker/1"

type op uint8

const (
	opConfig  op = iota + 1 // the sandboxes' limits; first, once
	opOpen                  // start sandbox Box, empty or from Snap
	opClose                 // stop sandbox Box
	opExec                  // run Line as Client
	opAdvance               // move the clock by D
	opCompact               // free what an idle sandbox can rebuild
	opCancel                // cancel request Target
	opLab                   // run the lab check in Job (lab.go); no sandbox
)

// request is one message to a worker.
type request struct {
	ID  uint64 // 0 for requests without a response
	Op  op
	Box uint64
	// Now is the supervisor's clock, in Unix nanoseconds: the sandbox clock
	// follows it, plus the learner's offset, so that both processes agree
	// on the time and tests can move it.
	Now    int64
	Client playground.Client
	Line   string
	// Allow is the data the sandbox may hold after opExec's line, as
	// playground.Sandbox.ExecWithin takes it: the Manager's share of its
	// budget for the sandbox.
	Allow  int64
	D      int64 // nanoseconds, for opAdvance
	Target uint64
	Snap   *playground.Snapshot
	Limits *playground.Limits
	// Job is opLab's check: a labJob in JSON.
	Job []byte

	ctx context.Context // the worker's, for opExec; not sent
}

// response is one message from a worker.
type response struct {
	ID      uint64
	Hello   string
	PID     int
	Result  playground.Result
	ErrKind errKind
	ErrMsg  string
	// Changes are what the command changed in the sandbox, if anything.
	Changes *playground.Changes
	// Clock and Expired are opAdvance's: the sandbox clock after it, in
	// Unix nanoseconds, and the keys whose TTL ran out in it. The key
	// inspector needs nothing more: the supervisor lists the keys from
	// its Mirror.
	Clock   int64
	Expired []string
	// Size is opExec's bound of the sandbox's data after the line, for
	// the Manager's budget.
	Size int64
	// Timeouts counts the scripts the worker stopped at their deadline,
	// since it started.
	Timeouts int64
	// Job is opLab's answer in JSON: the lab.Report, or with
	// errLabBadRecipe the *lab.LineError if one line is to blame.
	Job []byte
}

// errKind says which of the playground's sentinel errors a response's
// error matches.
type errKind uint8

const (
	errNone errKind = iota
	errNotAllowed
	errLimit
	errClosed
	errUnknownClient
	errBadAdvance
	errOther
	// The lab's errors (lab.go), and a check stopped by its context.
	errLabBadRecipe
	errLabBudget
	errLabUnknownChallenge
	errLabBadSeed
	errCanceled
	errDeadline
)

func encodeErr(err error) (errKind, string) {
	if err == nil {
		return errNone, "" // most answers; and ref below would escape
	}
	var ref *playground.RefusedError
	switch {
	case errors.As(err, &ref) && errors.Is(ref.Kind, playground.ErrNotAllowed):
		return errNotAllowed, ref.Msg
	case errors.As(err, &ref):
		return errLimit, ref.Msg
	case errors.Is(err, playground.ErrClosed):
		return errClosed, err.Error()
	case errors.Is(err, playground.ErrUnknownClient):
		return errUnknownClient, err.Error()
	case errors.Is(err, playground.ErrBadAdvance):
		return errBadAdvance, err.Error()
	}
	return errOther, err.Error()
}

func decodeErr(kind errKind, msg string) error {
	switch kind {
	case errNone:
		return nil
	case errNotAllowed:
		return &playground.RefusedError{Kind: playground.ErrNotAllowed, Msg: msg}
	case errLimit:
		return &playground.RefusedError{Kind: playground.ErrLimit, Msg: msg}
	case errClosed:
		return &remoteError{msg, playground.ErrClosed}
	case errUnknownClient:
		return &remoteError{msg, playground.ErrUnknownClient}
	case errBadAdvance:
		return &remoteError{msg, playground.ErrBadAdvance}
	}
	return errors.New(msg)
}

// remoteError is an error from a worker, which matches the sentinel it
// matched there.
type remoteError struct {
	msg  string
	kind error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.kind }
