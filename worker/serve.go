package worker

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sync"
	"time"

	"github.com/locklab/locklab/lab"
	"github.com/locklab/locklab/luaredis"
	"github.com/locklab/locklab/playground"
)

// Serve is the worker: it reads requests from r and writes responses to w
// until r ends, which is how it learns that the supervisor has gone, or
// ctx ends. Each sandbox's requests run one at a time, in the order they
// arrive. The reading goroutine runs quick commands itself (see quick);
// the others go to a queue that a goroutine of the sandbox's own runs, so
// that a script spinning in one sandbox holds up no other. Problems that
// concern no request go to errlog, which the supervisor copies to its log.
func Serve(ctx context.Context, r io.Reader, w io.Writer, errlog io.Writer) error {
	in := &frameReader{r: bufio.NewReaderSize(r, 64<<10)}
	frame, err := in.read()
	if err != nil {
		return fmt.Errorf("sandbox worker: read config: %w", err)
	}
	first, err := decodeRequest(frame)
	if err != nil || first.Op != opConfig {
		return fmt.Errorf("sandbox worker: first request is not the config (%v)", err)
	}
	s := &server{
		ctx:     ctx,
		limits:  *first.Limits,
		scripts: luaredis.NewCache(0),
		boxes:   map[uint64]*wbox{},
		errlog:  errlog,
		cancels: map[uint64]context.CancelFunc{},
		out:     &batchWriter{w: w, epoch: time.Now()},
		ready:   make(chan *wbox),
		failed:  make(chan error, 1),
		trim:    newTrimmer(),
	}
	s.write(&response{Hello: helloMagic, PID: os.Getpid()})

	// One goroutine reads and queues, so that each sandbox's requests run
	// in the order they arrive. It runs a quick command of an idle sandbox
	// itself: handing it to another goroutine would cost more than
	// running it.
	readErr := make(chan error, 1)
	go func() {
		unwritten := 0
		for {
			frame, err := in.read()
			if err != nil {
				readErr <- err
				return
			}
			req, err := decodeRequest(frame)
			if err != nil {
				readErr <- err
				return
			}
			if s.handle(req) {
				unwritten++
			}
			// Write the responses of quick commands out before waiting
			// for more input, or every so often while it keeps coming.
			if unwritten > 0 && (!in.ready() || unwritten >= 64) {
				s.flush()
				unwritten = 0
			}
		}
	}()
	select {
	case err := <-readErr:
		if errors.Is(err, io.EOF) {
			return nil
		}
		return fmt.Errorf("sandbox worker: read request: %w", err)
	case err := <-s.failed:
		return fmt.Errorf("sandbox worker: write response: %w", err)
	case <-ctx.Done():
		return nil
	}
}

// server is the state of a worker.
type server struct {
	ctx     context.Context
	limits  playground.Limits
	errlog  io.Writer
	scripts *luaredis.Cache  // compiled scripts, shared by the sandboxes
	boxes   map[uint64]*wbox // only the reading goroutine touches it
	ready   chan *wbox       // idle runners take queues to run here

	mu      sync.Mutex // guards cancels
	cancels map[uint64]context.CancelFunc

	// labTurns makes the lab checks running in this worker take turns,
	// schedule by schedule.
	labTurns lab.Turns

	trim *trimmer // returns memory after long lines

	out    *batchWriter // the responses
	failed chan error   // the first write error
}

// wbox is one sandbox in the worker, with its queue of requests.
type wbox struct {
	mu      sync.Mutex
	queue   []*request
	running bool // a goroutine is running the queue

	// Only the goroutine running the queue touches these, or, while no
	// goroutine is, the reading goroutine.
	sb  *playground.Sandbox // nil before open and after close
	now time.Time           // the supervisor's clock as of the latest request
}

func (b *wbox) clock() time.Time { return b.now }

// handle runs or queues a request. It reports whether it ran it and
// added a response that is not written yet.
func (s *server) handle(req *request) bool {
	switch req.Op {
	case opCancel:
		s.mu.Lock()
		cancel := s.cancels[req.Target]
		s.mu.Unlock()
		if cancel != nil {
			cancel()
		}
		return false
	case opLab:
		ctx, cancel := context.WithCancel(s.ctx)
		s.mu.Lock()
		s.cancels[req.ID] = cancel
		s.mu.Unlock()
		go s.runLab(ctx, req)
		return false
	case opOpen:
		b := &wbox{now: time.Unix(0, req.Now)}
		if old := s.boxes[req.Box]; old != nil {
			s.enqueue(old, &request{Op: opClose, Box: req.Box})
		}
		s.boxes[req.Box] = b
		if req.Snap == nil {
			s.run(b, req) // a new sandbox: quick
		} else {
			s.enqueue(b, req) // restoring takes longer
		}
		return false
	}
	b := s.boxes[req.Box]
	if req.Op == opClose {
		delete(s.boxes, req.Box)
	}
	if b == nil {
		if req.ID != 0 {
			s.write(&response{ID: req.ID, ErrKind: errClosed, ErrMsg: playground.ErrClosed.Error(), Timeouts: s.scripts.Timeouts()})
		}
		return false
	}
	if quick(req) {
		b.mu.Lock()
		idle := !b.running // then no other goroutine touches b's sandbox
		b.mu.Unlock()
		if idle && few(b) {
			if resp := s.run(b, req); resp != nil {
				s.add(req, resp)
				return true
			}
			return false
		}
	}
	if req.Op == opExec {
		ctx, cancel := context.WithCancel(s.ctx)
		s.mu.Lock()
		s.cancels[req.ID] = cancel
		s.mu.Unlock()
		req.ctx = ctx
	}
	s.enqueue(b, req)
	return false
}

// enqueue adds req to b's queue and, if no goroutine is running it, hands
// b to an idle runner or starts one.
func (s *server) enqueue(b *wbox, req *request) {
	b.mu.Lock()
	b.queue = append(b.queue, req)
	start := !b.running
	b.running = true
	b.mu.Unlock()
	if start {
		select {
		case s.ready <- b:
		default:
			go s.runner(b)
		}
	}
}

// runnerIdle is how long a runner waits for another queue before it ends.
const runnerIdle = 10 * time.Second

// runner runs b's queue, then the queues handed to it, until it has been
// idle for runnerIdle. Runners live on, rather than a goroutine per queue,
// because a fresh goroutine's stack must grow to run a command, which
// cost a tenth of the worker's time.
func (s *server) runner(b *wbox) {
	t := time.NewTimer(runnerIdle)
	defer t.Stop()
	for {
		s.runQueue(b)
		t.Reset(runnerIdle)
		select {
		case b = <-s.ready:
		case <-t.C:
			return
		}
	}
}

// runQueue runs b's requests in order until the queue is empty. It adds
// each response before running the next request, so the responses of one
// sandbox leave in the order its commands ran. It writes them out when the
// queue is empty or before a request that may take long, so that a burst
// of quick commands is answered with one write.
func (s *server) runQueue(b *wbox) {
	unwritten := 0
	for {
		b.mu.Lock()
		if len(b.queue) == 0 {
			b.queue = nil
			b.running = false
			b.mu.Unlock()
			if unwritten > 0 {
				s.flush()
			}
			return
		}
		req := b.queue[0]
		b.queue[0] = nil
		b.queue = b.queue[1:]
		var next *request
		if len(b.queue) > 0 {
			next = b.queue[0]
		}
		b.mu.Unlock()
		if resp := s.run(b, req); resp != nil {
			s.add(req, resp)
			unwritten++
			s.trim.after(resp.Result.RunTime)
		}
		if unwritten > 0 && (next == nil || unwritten >= 64 || !quick(next)) {
			s.flush()
			unwritten = 0
		}
	}
}

// quick reports whether a request surely runs in microseconds in a
// sandbox of few keys (see few): a clock move, a close or a compact, or a
// line that playground.ReadLine finds quick (a command the command table
// declares quick, with few and short arguments). The reading goroutine
// runs those itself; scripts, transactions, repeated commands, commands
// whose cost grows with the data (LRANGE, KEYS, SUNION, ...) and
// restores go to a goroutine of the sandbox's own, so that they hold up
// no other sandbox.
func quick(req *request) bool {
	switch req.Op {
	case opAdvance, opClose, opCompact:
		return true
	case opExec:
		return playground.ReadLine(req.Line).Quick
	}
	return false
}

// few reports whether b's sandbox holds few enough keys for a quick
// request to stay quick. Every command, and every clock advance, walks all
// of a sandbox's keys once its clock has moved (miniredis's expiry): some
// 0.15 ms at a thousand keys, which the reading goroutine must not spend
// while other sandboxes' requests wait. It is called while b is idle.
func few(b *wbox) bool { return b.sb == nil || b.sb.KeysAtMost() <= maxQuickKeys }

// maxQuickKeys is the most keys of a sandbox whose quick requests the
// reading goroutine runs: a lesson's few, and then a walk of them costs
// about what the command does.
const maxQuickKeys = 64

// run runs one request on b's sandbox and returns its response, nil for
// requests without one.
func (s *server) run(b *wbox, req *request) *response {
	if t := time.Unix(0, req.Now); t.After(b.now) {
		b.now = t // never backwards
	}
	switch req.Op {
	case opOpen:
		s.open(b, req)
		return nil
	case opClose:
		if b.sb != nil {
			b.sb.Close()
			b.sb = nil
		}
		return nil
	case opCompact:
		if b.sb != nil {
			b.sb.Compact()
		}
		return nil
	}
	resp := &response{}
	if req.ctx != nil {
		defer func() {
			s.mu.Lock()
			cancel := s.cancels[req.ID]
			delete(s.cancels, req.ID)
			s.mu.Unlock()
			cancel()
		}()
	}
	if b.sb == nil {
		resp.ErrKind, resp.ErrMsg = encodeErr(playground.ErrClosed)
		return resp
	}
	var err error
	switch req.Op {
	case opExec:
		ctx := req.ctx
		if ctx == nil {
			ctx = s.ctx // a quick command, run without a way to cancel it
		}
		var size int
		resp.Result, size, err = b.sb.ExecWithin(ctx, req.Client, req.Line, int(min(req.Allow, math.MaxInt32)))
		resp.Size = int64(size)
	case opAdvance:
		var a playground.Advanced
		a, err = b.sb.Advance(time.Duration(req.D))
		resp.Clock, resp.Expired = a.Now.UnixNano(), a.Expired
	default:
		err = fmt.Errorf("sandbox worker: unknown request %d", req.Op)
	}
	resp.ErrKind, resp.ErrMsg = encodeErr(err)
	if c, err := b.sb.TakeChanges(); err == nil && c.Changed() {
		resp.Changes = &c
	}
	return resp
}

// open starts the sandbox of b, from the request's snapshot if it has one.
// A snapshot that cannot be restored gives an empty sandbox, whose first
// Changes then tell the supervisor so.
func (s *server) open(b *wbox, req *request) {
	opts := playground.SandboxOptions{Now: b.clock, Limits: s.limits, Scripts: s.scripts}
	if req.Snap != nil {
		sb, err := playground.RestoreSandbox(*req.Snap, opts)
		if err == nil {
			b.sb = sb
			return
		}
		fmt.Fprintf(s.errlog, "sandbox worker: restore sandbox %d: %v\n", req.Box, err)
	}
	sb, err := playground.NewSandbox(opts)
	if err != nil {
		fmt.Fprintf(s.errlog, "sandbox worker: start sandbox %d: %v\n", req.Box, err)
		return
	}
	b.sb = sb
}

// add adds the response to req, to be written by the next flush.
func (s *server) add(req *request, resp *response) {
	resp.ID = req.ID
	resp.Timeouts = s.scripts.Timeouts()
	if err := s.out.add(resp.appendTo); err != nil {
		s.fail(err)
	}
}

// write sends a response.
func (s *server) write(resp *response) {
	if err := s.out.send(resp.appendTo); err != nil {
		s.fail(err)
	}
}

func (s *server) flush() {
	if err := s.out.flush(); err != nil {
		s.fail(err)
	}
}

// fail ends Serve with the first write error.
func (s *server) fail(err error) {
	select {
	case s.failed <- err:
	default:
	}
}
