package worker

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locklab/locklab/playground"
)

// Errors of the Supervisor. An Exec that fails with one of them also
// returns the message for the learner as an (error) line in Result.Output,
// and the error matches playground.ErrLimit too, so that a caller that
// shows refused lines shows it: the sandbox is as it was before the line.
//
// Each wraps the playground's sentinel for its case, which is what the web
// layer tests for: it does not import this package.
var (
	// ErrWorkerStopped: the worker process running the command stopped
	// (it ran out of memory, crashed or was killed) before answering. It
	// matches playground.ErrStopped.
	ErrWorkerStopped error = &sentinel{"playground: sandbox worker stopped", playground.ErrStopped}
	// ErrUnavailable: no worker could take the command, as the learner's
	// worker is being restarted or keeps crashing. It matches
	// playground.ErrRestarting.
	ErrUnavailable error = &sentinel{"playground: sandbox worker unavailable", playground.ErrRestarting}
)

// A sentinel is an error value of this package that keeps its own text
// and matches the playground's sentinel it is a case of.
type sentinel struct {
	msg  string
	kind error
}

func (e *sentinel) Error() string { return e.msg }
func (e *sentinel) Unwrap() error { return e.kind }

// ChildEnv is set, to 1, in the environment of every worker. A process
// that has it does not start workers of its own, so that a misconfigured
// Command cannot multiply processes.
const ChildEnv = "LOCKLAB_SANDBOX_WORKER"

// Options configure a Supervisor. Zero fields take their defaults.
type Options struct {
	// Workers is how many worker processes run; default 2.
	Workers int
	// Command returns the command that starts one worker, such as the
	// running binary with the sandbox-worker subcommand. Required. The
	// Supervisor sets its stdin, stdout and stderr, and, if Env is nil, an
	// environment of the Go runtime's variables only.
	Command func() *exec.Cmd
	// Playground configures the sessions, as for playground.NewManager;
	// its NewBox is the Supervisor's.
	Playground playground.Options
	// RequestTimeout is how long a sandbox may go without answering while
	// it has commands waiting, before its worker is taken for stuck and
	// restarted; default the script deadline plus 5 seconds.
	RequestTimeout time.Duration
	// MaxRestarts bounds the restarts of one worker in a minute; past it,
	// the worker's learners get ErrUnavailable until the minute is over.
	// Default 10.
	MaxRestarts int
	// LabChecks bounds the lab checks (CheckLab) running at once in all
	// workers; more wait their turn. Each takes a CPU core while it runs,
	// for up to its budget's CPU time. Default Workers.
	LabChecks int
	// Logger gets the workers' stops, restarts and error output; default
	// none.
	Logger *slog.Logger
}

// A Supervisor runs the playground's sandboxes in worker processes and
// restarts a worker that dies, restoring its sandboxes. It has the
// methods of a playground.Manager, runs the lock lab's checks (CheckLab)
// and is safe for concurrent use.
type Supervisor struct {
	opts     Options
	m        *playground.Manager
	slots    []*slot
	nextBox  atomic.Uint64
	restarts atomic.Int64
	timeouts atomic.Int64 // script timeouts reported by workers
	log      *slog.Logger
	wg       sync.WaitGroup // the slots' goroutines
	epoch    time.Time      // for mono
	labs     chan struct{}  // one token per lab check running
	labNext  atomic.Uint32  // where labSlot starts looking
}

// mono returns monotonic nanoseconds since the Supervisor started, for
// timing that a step of the wall clock must not upset.
func (s *Supervisor) mono() int64 { return int64(time.Since(s.epoch)) }

// NewSupervisor starts the workers and returns a Supervisor. It fails if
// any worker fails to start, so that a misconfiguration shows at once.
func NewSupervisor(opts Options) (*Supervisor, error) {
	if opts.Command == nil {
		return nil, errors.New("sandbox workers: no Command")
	}
	if isChild() {
		return nil, fmt.Errorf("sandbox workers: this process is a sandbox worker itself (%s is set)", ChildEnv)
	}
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	if opts.LabChecks <= 0 {
		opts.LabChecks = opts.Workers
	}
	if opts.MaxRestarts <= 0 {
		opts.MaxRestarts = 10
	}
	if opts.RequestTimeout <= 0 {
		deadline := opts.Playground.Limits.Script.Timeout
		if deadline <= 0 {
			deadline = time.Second
		}
		opts.RequestTimeout = deadline + 5*time.Second
	}
	if opts.Playground.Now == nil {
		opts.Playground.Now = time.Now
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Supervisor{opts: opts, log: log, epoch: time.Now(), labs: make(chan struct{}, opts.LabChecks)}
	for i := range opts.Workers {
		sl := &slot{sup: s, index: i, ready: make(chan struct{}), stop: make(chan struct{})}
		p, err := sl.start()
		if err != nil {
			for _, started := range s.slots {
				started.proc.shutdown()
			}
			return nil, fmt.Errorf("sandbox workers: %w", err)
		}
		sl.setProc(p)
		s.slots = append(s.slots, sl)
	}
	for _, sl := range s.slots {
		p := sl.proc
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			sl.supervise(p)
		}()
	}
	popts := opts.Playground
	popts.NewBox = s.newBox
	if popts.Logger == nil {
		popts.Logger = log
	}
	s.m = playground.NewManager(popts)
	return s, nil
}

// newBox places a new sandbox in the worker of its learner. It only
// allocates: the worker starts the sandbox with the first request, from
// o.Restore if that is set.
func (s *Supervisor) newBox(o playground.SandboxOptions) (playground.Box, error) {
	h := fnv.New32a()
	h.Write([]byte(o.Learner))
	b := &remoteBox{
		sup:  s,
		slot: s.slots[int(h.Sum32()%uint32(len(s.slots)))],
		id:   s.nextBox.Add(1),
		now:  s.opts.Playground.Now,
	}
	if snap := o.Restore; snap != nil {
		b.restored = true
		b.mirror.Apply(playground.Changes{
			ClockMS: b.now().Add(snap.Offset).UnixMilli(),
			Offset:  snap.Offset, OffsetChanged: true,
			Reset: true, Keys: snap.Keys,
			ScriptsChanged: true, Scripts: snap.Scripts, Libraries: snap.Libraries,
		})
	}
	return b, nil
}

// Exec runs a line typed by client in the learner's sandbox, as
// playground.Manager.Exec does. If the worker stops while running it, the
// error matches ErrWorkerStopped and Result.Output says so.
func (s *Supervisor) Exec(ctx context.Context, learner string, client playground.Client, line string) (playground.Result, error) {
	return s.m.Exec(ctx, learner, client, line)
}

// Reset gives the learner a fresh sandbox.
func (s *Supervisor) Reset(learner string) error { return s.m.Reset(learner) }

// Advance moves the learner's sandbox clock forward by d and returns the
// clock after it with the keys that expired, in one round trip to the
// learner's worker.
func (s *Supervisor) Advance(learner string, d time.Duration) (playground.Advanced, error) {
	return s.m.Advance(learner, d)
}

// Keys lists the keys of the learner's sandbox, from the copy the
// supervisor keeps of it: no round trip to its worker.
func (s *Supervisor) Keys(learner string) ([]playground.KeyInfo, error) { return s.m.Keys(learner) }

// Clock returns the learner's sandbox clock.
func (s *Supervisor) Clock(learner string) (time.Time, error) { return s.m.Clock(learner) }

// Node acts on one of the learner's nodes, as playground.Manager.Node;
// each node is a sandbox in a worker.
func (s *Supervisor) Node(ctx context.Context, learner string, n int, op playground.NodeOp) (playground.NodeChange, error) {
	return s.m.Node(ctx, learner, n, op)
}

// Nodes describes the learner's nodes, as playground.Manager.Nodes.
func (s *Supervisor) Nodes(learner string) ([]playground.NodeInfo, error) { return s.m.Nodes(learner) }

// Sweep drops and compacts idle sandboxes, as playground.Manager.Sweep.
func (s *Supervisor) Sweep(now time.Time) int { return s.m.Sweep(now) }

// Len returns the number of live sandboxes.
func (s *Supervisor) Len() int { return s.m.Len() }

// DataBytes returns the data of all sandboxes and what the calls in
// flight may add, as playground.Manager.DataBytes.
func (s *Supervisor) DataBytes() (data, reserved int) { return s.m.DataBytes() }

// Restarts returns how many times a worker was restarted after it stopped.
func (s *Supervisor) Restarts() int64 { return s.restarts.Load() }

// ScriptTimeouts returns how many scripts the workers stopped at their
// deadline. A worker's count since its last answer is lost if it dies.
func (s *Supervisor) ScriptTimeouts() int64 { return s.timeouts.Load() }

// Close drops every sandbox and stops the workers; later calls return
// playground.ErrClosed.
func (s *Supervisor) Close() {
	s.m.Close()
	for _, sl := range s.slots {
		sl.close()
	}
	s.wg.Wait()
}

// pids returns the process ids of the live workers, for tests.
func (s *Supervisor) pids() []int {
	var out []int
	for _, sl := range s.slots {
		sl.mu.Lock()
		if sl.proc != nil {
			out = append(out, sl.proc.pid)
		}
		sl.mu.Unlock()
	}
	return out
}

// slot is one worker's place: the live process, and the goroutine that
// restarts it when it dies.
type slot struct {
	sup   *Supervisor
	index int
	stop  chan struct{} // closed by close
	labs  atomic.Int32  // lab checks sent or about to be sent to it

	mu     sync.Mutex
	proc   *proc         // nil while (re)starting
	ready  chan struct{} // closed when proc is set
	closed bool
}

// waitReady is how long a request waits for its worker to come back.
const waitReady = 5 * time.Second

// current returns the live process, waiting for a restart if need be.
func (sl *slot) current(ctx context.Context) (*proc, error) {
	sl.mu.Lock()
	p := sl.proc
	sl.mu.Unlock()
	if p != nil {
		return p, nil
	}
	timer := time.NewTimer(waitReady)
	defer timer.Stop()
	for {
		sl.mu.Lock()
		p, ready, closed := sl.proc, sl.ready, sl.closed
		sl.mu.Unlock()
		switch {
		case closed:
			return nil, playground.ErrClosed
		case p != nil:
			return p, nil
		}
		select {
		case <-ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timer.C:
			return nil, ErrUnavailable
		}
	}
}

// setProc makes p the live process, unless the slot is closed.
func (sl *slot) setProc(p *proc) bool {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.closed {
		return false
	}
	sl.proc = p
	close(sl.ready)
	return true
}

// died stops handing out p; requests wait for the next process.
func (sl *slot) died(p *proc) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.proc == p {
		sl.proc = nil
		sl.ready = make(chan struct{})
	}
}

// supervise waits for the worker p to exit and starts another, until
// close: at once the first time in a minute, then after a growing pause,
// and not more than MaxRestarts times in a minute.
func (sl *slot) supervise(p *proc) {
	s := sl.sup
	var recent []time.Time // restarts in the last minute
	for {
		select {
		case <-p.exited:
		case <-sl.stop:
			return
		}
		select {
		case <-sl.stop:
			return
		default:
		}
		sl.died(p)
		s.log.Error("sandbox worker stopped", "worker", sl.index, "pid", p.pid, "status", p.status, "reason", p.why)
		for p = nil; p == nil; {
			now := time.Now()
			for len(recent) > 0 && now.Sub(recent[0]) > time.Minute {
				recent = recent[1:]
			}
			var pause time.Duration
			switch {
			case len(recent) >= s.opts.MaxRestarts:
				pause = recent[0].Add(time.Minute).Sub(now)
				s.log.Error("sandbox worker restarts too often; pausing", "worker", sl.index, "pause", pause.Round(time.Second))
			case len(recent) > 0:
				pause = min(100*time.Millisecond<<(len(recent)-1), 5*time.Second)
			}
			if pause > 0 {
				t := time.NewTimer(pause)
				select {
				case <-t.C:
				case <-sl.stop:
					t.Stop()
					return
				}
			}
			recent = append(recent, time.Now())
			var err error
			if p, err = sl.start(); err != nil {
				s.log.Error("start sandbox worker", "worker", sl.index, "error", err)
			}
		}
		s.restarts.Add(1)
		s.log.Info("sandbox worker restarted", "worker", sl.index, "pid", p.pid)
		if !sl.setProc(p) {
			p.shutdown()
			return
		}
	}
}

// close stops the worker and its supervision.
func (sl *slot) close() {
	sl.mu.Lock()
	if sl.closed {
		sl.mu.Unlock()
		return
	}
	sl.closed = true
	p := sl.proc
	close(sl.stop)
	sl.mu.Unlock()
	if p != nil {
		p.shutdown()
	}
}
