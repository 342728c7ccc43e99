package worker

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/locklab/locklab/playground"
)

const (
	// startTimeout bounds a worker's start, up to its hello.
	startTimeout = 10 * time.Second
	// maxInFlight bounds the requests waiting in one worker; more wait in
	// the supervisor, where they cost less.
	maxInFlight = 1024
	// stderrLines is how many lines of a worker's error output are logged.
	stderrLines = 400
	// lingerFrames bounds how many requests wait for the one that will
	// write them all (see write): a few more per write mean fewer system
	// calls and wake-ups on both sides, which on a busy server is
	// throughput.
	lingerFrames = 16
)

// proc is one worker process and the requests in flight to it.
type proc struct {
	sup    *Supervisor
	slot   *slot
	cmd    *exec.Cmd
	pid    int
	sem    chan struct{} // one token per request in flight
	done   chan struct{} // closed when the process is found dead
	exited chan struct{} // closed when it has exited; then status is set
	status string        // how it exited
	nextID atomic.Uint64
	calls  sync.Pool // of *call, to spare an allocation per request

	// For write: requests in flight, requests added but not written yet,
	// and whether a goroutine that yielded will write them.
	inflight  atomic.Int32
	unflushed atomic.Int32
	lingering atomic.Bool

	stdin io.WriteCloser
	out   *batchWriter // the requests, to stdin

	mu      sync.Mutex
	pending map[uint64]*call
	dead    bool
	why     string // why it was found dead

	timeouts int64 // the worker's last reported count; only the reader uses it
}

// call is one request and, if it has an ID, where its answer goes.
type call struct {
	req  request
	box  *remoteBox // whose Changes the answer carries
	due  int64      // for a job without a box: when it is stuck, in Supervisor.mono time; 0 never
	sent atomic.Bool
	out  chan result // buffered: the answer never waits
}

type result struct {
	resp *response
	err  error
}

// diedError is the answer to a request whose worker died. sent says
// whether the request was written to it, and so may have run.
type diedError struct{ sent bool }

func (e *diedError) Error() string { return "sandbox worker stopped" }
func (e *diedError) Unwrap() error { return ErrWorkerStopped }

// start starts a worker process and waits for its hello.
func (sl *slot) start() (*proc, error) {
	s := sl.sup
	cmd := s.opts.Command()
	if cmd.Env == nil {
		cmd.Env = runtimeEnv()
	}
	cmd.Env = append(cmd.Env, ChildEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &proc{
		sup:     s,
		slot:    sl,
		cmd:     cmd,
		sem:     make(chan struct{}, maxInFlight),
		done:    make(chan struct{}),
		exited:  make(chan struct{}),
		pending: map[uint64]*call{},
		stdin:   stdin,
		out:     &batchWriter{w: stdin, epoch: time.Now()},
	}
	stderr := &lineLogger{sup: s, worker: sl.index}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	p.pid = cmd.Process.Pid
	stderr.pid.Store(int64(p.pid))

	limits := s.opts.Playground.Limits
	in := &frameReader{r: bufio.NewReaderSize(stdout, 64<<10)}
	hello := make(chan error, 1)
	go func() {
		config := &request{Op: opConfig, Limits: &limits}
		if err := p.out.send(config.appendTo); err != nil {
			hello <- err
			return
		}
		frame, err := in.read()
		if err != nil {
			hello <- fmt.Errorf("read hello: %w", err)
			return
		}
		r, err := decodeResponse(frame)
		if err != nil || r.Hello != helloMagic {
			hello <- fmt.Errorf("hello %.40q: not a sandbox worker", frame)
			return
		}
		hello <- nil
	}()
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case err = <-hello:
	case <-timer.C:
		err = fmt.Errorf("no hello in %v", startTimeout)
	}
	if err != nil {
		cmd.Process.Kill()
		stdin.Close()
		cmd.Wait()
		return nil, fmt.Errorf("start %s (pid %d): %w", cmd.Path, p.pid, err)
	}
	go p.read(in)
	go p.watch()
	return p, nil
}

// runtimeEnv is the environment a worker gets by default: the Go runtime's
// settings, and nothing else of the server's (no secrets, no URLs).
func runtimeEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "GOMAXPROCS", "GOGC", "GODEBUG", "GOTRACEBACK", "GORACE", "TMPDIR":
			env = append(env, kv)
		}
	}
	return env
}

// read takes the answers off the worker's stdout until it ends, then
// notes the process dead and waits for it to exit.
func (p *proc) read(in *frameReader) {
	for {
		frame, err := in.read()
		var resp *response
		if err == nil {
			resp, err = decodeResponse(frame)
		}
		if err != nil {
			why := "its output ended"
			if !errors.Is(err, io.EOF) {
				why = "unreadable output: " + err.Error()
			}
			p.die(why)
			break
		}
		p.deliver(resp)
	}
	err := p.cmd.Wait()
	p.status = "exit status 0"
	if err != nil {
		p.status = err.Error()
	}
	close(p.exited)
}

// deliver hands an answer to its caller, after applying its changes to
// the sandbox's mirror: the reader does that in the order the worker
// wrote them, which is the order the commands ran.
func (p *proc) deliver(resp *response) {
	if resp.Timeouts > p.timeouts {
		p.sup.timeouts.Add(resp.Timeouts - p.timeouts)
		p.timeouts = resp.Timeouts
	}
	p.mu.Lock()
	c := p.pending[resp.ID]
	delete(p.pending, resp.ID)
	p.mu.Unlock()
	if c == nil {
		return
	}
	if c.box != nil {
		c.box.progress.Store(p.sup.mono())
		if resp.Changes != nil {
			c.box.apply(*resp.Changes)
		}
	}
	c.out <- result{resp: resp}
}

// watch kills the worker if a sandbox with requests in flight makes no
// progress for RequestTimeout, or a write to it blocks that long: the
// worker is stuck. A sandbox makes progress when it answers; one with a
// queue of slow commands answers each in turn.
func (p *proc) watch() {
	timeout := p.sup.opts.RequestTimeout
	tick := time.NewTicker(min(timeout/4, time.Second))
	defer tick.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-tick.C:
		}
		now := p.sup.mono()
		if p.out.writing() > timeout {
			p.stuck(fmt.Sprintf("it read no request for %v", timeout))
			return
		}
		var stuck time.Duration
		p.mu.Lock()
		late := false
		for _, c := range p.pending {
			if c.box == nil {
				if c.due != 0 && now > c.due {
					late = true
				}
				continue
			}
			if idle := time.Duration(now - c.box.progress.Load()); idle > timeout {
				stuck = idle
				break
			}
		}
		p.mu.Unlock()
		if late {
			p.stuck("a lab check ran past its time limit")
			return
		}
		if stuck > 0 {
			p.stuck(fmt.Sprintf("a sandbox made no progress for %v", stuck.Round(time.Millisecond)))
			return
		}
	}
}

// die notes the process dead, kills it if it is not, and fails the
// requests in flight. It may be called more than once.
func (p *proc) die(why string) { p.end(why, false) }

// stuck ends a worker that stopped answering. It asks it for a dump of
// its goroutines first (SIGQUIT), which goes to the log, so that the
// cause can be found; it kills it if it does not exit soon after.
func (p *proc) stuck(why string) { p.end(why, true) }

func (p *proc) end(why string, dump bool) {
	p.mu.Lock()
	if p.dead {
		p.mu.Unlock()
		return
	}
	p.dead, p.why = true, why
	pending := p.pending
	p.pending = nil
	p.mu.Unlock()
	p.slot.died(p)
	close(p.done)
	if dump && p.cmd.Process.Signal(syscall.SIGQUIT) == nil {
		time.AfterFunc(time.Second, func() { p.cmd.Process.Kill() })
	} else {
		p.cmd.Process.Kill()
	}
	p.stdin.Close() // unblocks a write to a worker that stopped reading
	for _, c := range pending {
		c.out <- result{err: &diedError{sent: c.sent.Load()}}
	}
}

// shutdown ends the worker: its stdin is closed, so it exits; if it has
// not after a while, it is killed.
func (p *proc) shutdown() {
	p.out.stop()
	p.stdin.Close()
	t := time.NewTimer(3 * time.Second)
	defer t.Stop()
	select {
	case <-p.exited:
		return
	case <-t.C:
	}
	p.die("it did not exit when asked to")
	<-p.exited
}

// send writes a request. One with an ID is answered on c.out, also when
// the worker dies; one without is lost if the worker is dead.
func (p *proc) send(c *call) error {
	if c.req.ID != 0 {
		p.mu.Lock()
		if p.dead {
			p.mu.Unlock()
			return &diedError{}
		}
		p.pending[c.req.ID] = c
		p.mu.Unlock()
	}
	c.sent.Store(true)
	err := p.write(c)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errStopped):
		return playground.ErrClosed
	}
	// The stream is broken: the worker must go.
	p.die("write: " + err.Error())
	if c.req.ID != 0 {
		return nil // die answered it
	}
	return &diedError{sent: true}
}

// write writes a request, or, when others are waiting for answers and so
// more requests are about to come, lets the goroutines that are ready to
// run go first, so that the requests they send join it and one write and
// one wake-up of the worker serve several. Yielding costs nothing when no
// one else is ready, and unlike a timer it never leaves a request waiting
// while the server is idle. The first to yield writes for all that join
// it meanwhile; one that joins returns at once, and its answer comes as
// usual (or, if the write fails, from die).
func (p *proc) write(c *call) error {
	if p.inflight.Load() <= 1 {
		return p.out.send(c.req.appendTo)
	}
	if err := p.out.add(c.req.appendTo); err != nil {
		return err
	}
	if p.unflushed.Add(1) >= lingerFrames {
		p.unflushed.Store(0)
		return p.out.flush()
	}
	if p.lingering.CompareAndSwap(false, true) {
		runtime.Gosched()
		p.lingering.Store(false)
		p.unflushed.Store(0)
		return p.out.flush()
	}
	return nil
}

// call sends req for box b and waits for the answer. A caller that gives
// up (ctx) cancels the request in the worker and still waits for the
// answer, which comes quickly, so that the sandbox's changes are kept in
// order; the watchdog ends the wait if the worker is stuck.
func (p *proc) call(ctx context.Context, b *remoteBox, req request) (*response, error) {
	return p.roundTrip(ctx, req, b, 0)
}

// roundTrip sends req and waits for the answer, as call does. The
// request is for box b, whose progress the watchdog follows, or, with b
// nil, a job of its own (a lab check), which the watchdog ends as stuck
// if it is not answered within limit.
func (p *proc) roundTrip(ctx context.Context, req request, b *remoteBox, limit time.Duration) (*response, error) {
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-p.done:
		return nil, &diedError{}
	}
	defer func() { <-p.sem }()
	req.ID = p.nextID.Add(1)
	p.inflight.Add(1)
	defer p.inflight.Add(-1)
	c, _ := p.calls.Get().(*call)
	if c == nil {
		c = &call{out: make(chan result, 1)}
	}
	c.req, c.box, c.due = req, b, 0
	c.sent.Store(false)
	if b != nil {
		if b.inflight.Add(1) == 1 {
			b.progress.Store(p.sup.mono())
		}
		defer b.inflight.Add(-1)
	} else if limit > 0 {
		c.due = p.sup.mono() + int64(limit)
	}
	if err := p.send(c); err != nil {
		p.mu.Lock()
		if p.pending != nil {
			delete(p.pending, req.ID)
		}
		p.mu.Unlock()
		return nil, err // c is not reused: die may still answer it
	}
	var r result
	select {
	case r = <-c.out:
	case <-ctx.Done():
		p.send(&call{req: request{Op: opCancel, Target: req.ID}})
		r = <-c.out
	}
	c.req, c.box = request{}, nil
	p.calls.Put(c) // answered once, and no longer pending
	return r.resp, r.err
}

// lineLogger logs the first lines a worker writes to stderr, such as the
// Go runtime's report of a fatal error.
type lineLogger struct {
	sup    *Supervisor
	worker int
	pid    atomic.Int64
	buf    bytes.Buffer
	lines  int
}

func (l *lineLogger) Write(b []byte) (int, error) {
	if l.lines >= stderrLines {
		return len(b), nil
	}
	l.buf.Write(b)
	for l.lines < stderrLines {
		line, err := l.buf.ReadString('\n')
		if err != nil {
			l.buf.Reset()
			l.buf.WriteString(line)
			break
		}
		l.lines++
		l.sup.log.Warn("sandbox worker stderr", "worker", l.worker, "pid", l.pid.Load(), "line", strings.TrimRight(line, "\n"))
	}
	if l.buf.Len() > 4096 { // a line that never ends
		l.buf.Reset()
	}
	return len(b), nil
}
