package worker

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locklab/locklab/playground"
)

// isChild reports whether this process is a worker.
func isChild() bool { return os.Getenv(ChildEnv) != "" }

// Messages for the learner, shown as the (error) reply of their line.
const (
	stoppedMsg     = "ERR the sandbox worker stopped while running your command (it ran out of memory or crashed); your sandbox was restored to its state before that command"
	unavailableMsg = "ERR the playground's sandbox worker is restarting; please try again in a moment"
)

// workerError is a line's failure in the worker layer. It matches its
// kind (ErrWorkerStopped or ErrUnavailable) and playground.ErrLimit: like
// a refused line, it leaves the sandbox unchanged and comes with a message
// for the learner.
type workerError struct {
	kind error
	msg  string
}

func (e *workerError) Error() string   { return e.msg }
func (e *workerError) Unwrap() []error { return []error{e.kind, playground.ErrLimit} }

// maxAttempts bounds how often a request is sent again after its worker
// died without having run it.
const maxAttempts = 3

// remoteBox is a sandbox in a worker process, seen by the Manager as a
// playground.Box. It keeps a Mirror of the sandbox, from the changes the
// worker reports, to restore it in a new worker if its worker dies.
type remoteBox struct {
	sup  *Supervisor
	slot *slot
	id   uint64
	now  func() time.Time

	mu     sync.Mutex // guards proc and closed
	proc   *proc      // the worker holding the sandbox; nil before the first request
	closed bool
	// restored says that the sandbox starts from the state in its
	// mirror, not empty.
	restored bool

	mirrorMu sync.Mutex
	mirror   playground.Mirror
	writes   uint64 // changes applied to the mirror

	// For RequestTimeout: requests in flight, and when the sandbox last
	// answered one (or got one while idle), in Supervisor.mono time.
	inflight atomic.Int32
	progress atomic.Int64
}

// bind returns the worker process that holds the sandbox, first opening
// the sandbox there, restored from its mirror, if it is not open yet. The
// open is queued before any request that follows, and the worker handles
// it first.
func (b *remoteBox) bind(ctx context.Context) (*proc, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, playground.ErrClosed
	}
	p, err := b.slot.current(ctx)
	if err != nil {
		return nil, err
	}
	if b.proc == p {
		return p, nil
	}
	now := b.now()
	req := request{Op: opOpen, Box: b.id, Now: now.UnixNano()}
	if b.proc != nil || b.restored {
		b.mirrorMu.Lock()
		snap := b.mirror.Snapshot(now)
		b.mirrorMu.Unlock()
		req.Snap = &snap
	}
	if err := p.send(&call{req: req}); err != nil {
		return nil, err
	}
	b.proc = p
	return p, nil
}

// call sends req to the sandbox, sending it again if the worker died
// before it was written (retry) or, when again is set, in any case.
func (b *remoteBox) call(ctx context.Context, req request, again bool) (*response, error) {
	for attempt := 1; ; attempt++ {
		p, err := b.bind(ctx)
		if err != nil {
			return nil, err
		}
		req.Box, req.Now = b.id, b.now().UnixNano()
		resp, err := p.call(ctx, b, req)
		var died *diedError
		if errors.As(err, &died) && (!died.sent || again) && attempt < maxAttempts {
			continue
		}
		return resp, err
	}
}

func (b *remoteBox) apply(c playground.Changes) {
	b.mirrorMu.Lock()
	defer b.mirrorMu.Unlock()
	b.mirror.Apply(c)
	b.writes++
}

// Writes counts the changes the worker reported.
func (b *remoteBox) Writes() uint64 {
	b.mirrorMu.Lock()
	defer b.mirrorMu.Unlock()
	return b.writes
}

// ExecWithin runs a line in the sandbox, within the data allowance. A
// line whose worker died while running it is not sent again: it may be
// what killed the worker. The size is -1 when the worker did not answer;
// the sandbox is then as it was.
func (b *remoteBox) ExecWithin(ctx context.Context, client playground.Client, line string, allow int) (playground.Result, int, error) {
	resp, err := b.call(ctx, request{Op: opExec, Client: client, Line: line, Allow: int64(allow)}, false)
	switch {
	case errors.Is(err, ErrWorkerStopped):
		return b.failed(client, ErrWorkerStopped, stoppedMsg)
	case errors.Is(err, ErrUnavailable):
		return b.failed(client, ErrUnavailable, unavailableMsg)
	case err != nil:
		return playground.Result{}, -1, err
	}
	return resp.Result, int(resp.Size), decodeErr(resp.ErrKind, resp.ErrMsg)
}

func (b *remoteBox) failed(client playground.Client, kind error, msg string) (playground.Result, int, error) {
	return playground.Result{
		Client:  playground.Client(strings.ToUpper(string(client))),
		Output:  "(error) " + msg,
		ClockMS: b.Now().UnixMilli(),
	}, -1, &workerError{kind: kind, msg: msg}
}

// Advance moves the sandbox clock and names the keys that expired, in
// one round trip; it is safe to send again.
func (b *remoteBox) Advance(d time.Duration) (playground.Advanced, error) {
	resp, err := b.call(context.Background(), request{Op: opAdvance, D: int64(d)}, true)
	if err != nil {
		return playground.Advanced{}, wrapUnavailable(err)
	}
	if err := decodeErr(resp.ErrKind, resp.ErrMsg); err != nil {
		return playground.Advanced{}, err
	}
	a := playground.Advanced{Now: time.Unix(0, resp.Clock), Expired: resp.Expired}
	if a.Expired == nil {
		a.Expired = []string{}
	}
	return a, nil
}

// Now returns the sandbox clock, which the supervisor knows.
func (b *remoteBox) Now() time.Time {
	b.mirrorMu.Lock()
	defer b.mirrorMu.Unlock()
	return b.now().Add(b.mirror.Offset())
}

// Keys lists the sandbox's keys from the mirror, which every answer of
// the worker has brought up to date: the key inspector costs no round
// trip.
func (b *remoteBox) Keys() ([]playground.KeyInfo, error) {
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	if closed {
		return nil, playground.ErrClosed
	}
	b.mirrorMu.Lock()
	defer b.mirrorMu.Unlock()
	return b.mirror.Keys(b.now()), nil
}

// Snapshot returns the sandbox's state as the supervisor knows it.
func (b *remoteBox) Snapshot() (playground.Snapshot, error) {
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	if closed {
		return playground.Snapshot{}, playground.ErrClosed
	}
	b.mirrorMu.Lock()
	defer b.mirrorMu.Unlock()
	return b.mirror.Snapshot(b.now()), nil
}

// Compact asks the worker to free what the idle sandbox can rebuild.
func (b *remoteBox) Compact() {
	b.mu.Lock()
	p := b.proc
	b.mu.Unlock()
	if p != nil {
		p.send(&call{req: request{Op: opCompact, Box: b.id}})
	}
}

// Close stops the sandbox in its worker and forgets its state.
func (b *remoteBox) Close() {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.closed = true
	p := b.proc
	b.mu.Unlock()
	if p != nil {
		p.send(&call{req: request{Op: opClose, Box: b.id}})
	}
	b.mirrorMu.Lock()
	b.mirror = playground.Mirror{}
	b.mirrorMu.Unlock()
}

// wrapUnavailable gives the errors of the worker layer the sentinel a
// caller can act on.
func wrapUnavailable(err error) error {
	if errors.Is(err, ErrWorkerStopped) || errors.Is(err, ErrUnavailable) {
		return &workerError{kind: ErrUnavailable, msg: "the playground's sandbox worker is restarting; please try again in a moment"}
	}
	return err
}
