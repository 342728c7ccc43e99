package playground

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/alicebob/miniredis/v2/server"

	"github.com/locklab/locklab/luaredis"
	"github.com/locklab/locklab/resp"
)

// Client names one of the two redis-cli connections of a sandbox.
type Client string

// The two clients of every sandbox.
const (
	ClientA Client = "A"
	ClientB Client = "B"
)

// Result is what one typed line produced.
type Result struct {
	Client Client `json:"client"`
	// Output is what redis-cli --no-raw prints in a terminal for the line,
	// without the final newline; empty for a blank line.
	Output string `json:"output"`
	// ClockMS is the sandbox clock after the line, in Unix milliseconds.
	ClockMS int64 `json:"clock_ms"`
	// Notice, when set, tells the learner something about their sandbox,
	// such as that it was reset after being idle. It is given once.
	Notice string `json:"notice,omitempty"`
	// Clear is set for redis-cli's "clear": the terminal should be wiped.
	Clear bool `json:"clear,omitempty"`
	// ScriptTime is how long the line's scripts ran, all of them: a repeat
	// count's, or a transaction's. Callers that meter script time charge
	// this; it is not sent to the learner.
	ScriptTime time.Duration `json:"-"`
	// RunTime is how long the whole line ran in the sandbox, scripts
	// included. Callers charge heavy lines by it; it is not sent to the
	// learner.
	RunTime time.Duration `json:"-"`
	// Stopped says that the playground stopped one of the line's scripts
	// at its deadline or for its memory. Callers that meter script time
	// count such lines apart; it is not sent to the learner, whose reply
	// says so already.
	Stopped bool `json:"-"`
	// Keys, which a Manager sets, lists the sandbox's keys after the line,
	// as Keys does, so that a key inspector is shown with the reply for the
	// cost of one call; nil when the sandbox could not list them, and for
	// a Sandbox's own Exec.
	Keys []KeyInfo `json:"-"`
	// NodesChanged, which a Manager sets, says that the line was sent to
	// a node other than node 1, to all of them, or was a node line: the
	// nodes' states may have changed (a node started by its first line,
	// stopped, restarted). The page then lists them again.
	NodesChanged bool `json:"-"`
}

// SandboxOptions configure a Sandbox.
type SandboxOptions struct {
	// Now is the clock the sandbox clock follows; default time.Now.
	Now    func() time.Time
	Limits Limits
	// Scripts shares compiled scripts between sandboxes; default a cache
	// of the sandbox's own.
	Scripts *luaredis.Cache
	// Learner is the learner a Manager starts the sandbox for. A sandbox
	// does not use it; a Manager's NewBox may, to place the learner's
	// sandboxes in the same worker process.
	Learner string
	// Restore, when set, is the state the sandbox starts with, as
	// RestoreSandbox gives it.
	Restore *Snapshot
}

// Sandbox is one learner's in-process Redis: a miniredis server without a
// listener, driven by the two clients A and B, with the playground's own
// scripting engine and a clock that the learner can move forward. Its
// methods are safe for concurrent use; commands run one at a time.
type Sandbox struct {
	mu     sync.Mutex
	m      *miniredis.Miniredis
	srv    *server.Server
	conns  [2]*conn
	inner  *conn // runs the commands of scripts
	engine *luaredis.Engine
	now    func() time.Time
	// runNow is the clock that times lines against their deadline;
	// time.Now, tests set their own.
	runNow func() time.Time
	offset time.Duration // how far Advance moved the clock
	limits Limits
	ctx    context.Context // of the command being run, for scripts
	// lineDeadline is when the scripts of the line being run must be done.
	lineDeadline time.Time
	// scriptTime adds up how long the line's scripts have run so far.
	scriptTime time.Duration
	// replyLeft is how many bytes of replies the command being run (a
	// repeat's one, or a whole transaction) may still build, and
	// replyOver is set when one went past that.
	replyLeft int
	replyOver bool
	closed    bool
	// broken says why miniredis cannot be used any more, after a panic in
	// a script's command left its lock held; runSafely replaces it.
	broken string

	// Upper bounds of the keys and data bytes in the sandbox, and what the
	// command being run may add to them; see guard.go.
	keysBound, sizeBound     int
	pendingKeys, pendingSize int
	// sizeMeasured is the data's size when it was last measured.
	sizeMeasured int
	// allow is the data the line being run may leave in the sandbox, as
	// ExecWithin was given it.
	allow int

	// track notes what commands changed, for TakeChanges; see changes.go.
	track tracker
	// ticked is the clock miniredis was last moved to.
	ticked time.Time
	// frozen is set while a command runs: the clock stands at ticked.
	frozen bool
	// far holds the expiries too far ahead for miniredis, and farBase is
	// when their stand-ins were last renewed; see expire.go.
	far map[string]farExpiry
	// rawStrings are the string keys changed in place (APPEND, SETRANGE,
	// SETBIT), which Redis keeps raw: OBJECT ENCODING says so.
	rawStrings map[string]struct{}
	// hashOrders are the field orders of small hashes, and orderBytes
	// what they hold (hashorder.go).
	hashOrders map[string]*hashOrder
	orderBytes int
	farBase    time.Time
	// writes counts what may have changed the state; see Writes.
	writes uint64
	// previews are the key inspector's values of the keys not written
	// since they were rendered: rendering a large key sorts all of it.
	previews map[string]string
}

// conn is one connection: a miniredis peer, which keeps WATCH state, and
// the transaction the playground queues itself, so that EVAL can be part of
// MULTI/EXEC.
type conn struct {
	peer   *server.Peer
	out    *replyBuffer
	w      *bufio.Writer
	multi  bool
	dirty  bool
	queue  [][]string
	queued int    // bytes of queue, as argvBytes counts them
	name   string // CLIENT SETNAME's
}

func newConn() *conn {
	c := &conn{out: new(replyBuffer)}
	c.w = bufio.NewWriterSize(c.out, 256)
	c.peer = server.NewPeer(c.w)
	return c
}

// NewSandbox starts an empty sandbox.
func NewSandbox(opts SandboxOptions) (*Sandbox, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	limits := opts.Limits.withDefaults()
	s := &Sandbox{
		now:    opts.Now,
		runNow: time.Now,
		limits: limits,
		allow:  limits.footprint(),
	}
	s.engine = luaredis.NewEngine(luaredis.Options{
		Limits:         limits.Script,
		MaxScripts:     limits.ScriptCacheLen,
		MaxScriptBytes: limits.ScriptCacheBytes,
		Shared:         opts.Scripts,
		Room:           s.scriptRoom,
	})
	if err := s.startServer(); err != nil {
		return nil, fmt.Errorf("start sandbox: %w", err)
	}
	if opts.Restore != nil {
		if err := s.restore(*opts.Restore); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// scriptRoom is how many script bytes the sandbox may hold within the
// allowance of the line being run, besides its data and queued commands.
// The data bound is measured first if it leaves too little.
func (s *Sandbox) scriptRoom() int {
	room := s.allow - s.sizeBound - s.queuedBytes()
	if room < s.limits.ScriptCacheBytes && s.sizeBound > s.sizeMeasured {
		s.measure()
		room = s.allow - s.sizeBound - s.queuedBytes()
	}
	return room
}

// engineCommands are the commands the playground's engine runs instead
// of miniredis, which has no functions and whose own Lua never runs.
var engineCommands = map[string]bool{
	"EVAL": true, "EVALSHA": true, "EVAL_RO": true, "EVALSHA_RO": true, "SCRIPT": true,
	"FCALL": true, "FCALL_RO": true, "FUNCTION": true,
}

// hook sends the scripting commands to the playground's engine.
func (s *Sandbox) hook(p *server.Peer, cmd string, args ...string) bool {
	if !engineCommands[cmd] {
		return false
	}
	argv := append([]string{cmd}, args...)
	ctx := s.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	if !s.lineDeadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, s.lineDeadline)
		defer cancel()
	}
	start := s.runNow()
	v := s.engine.Do(ctx, scriptCaller{s}, argv)
	s.scriptTime += s.runNow().Sub(start)
	p.WriteRaw(string(v.AppendRESP(nil)))
	return true
}

func (s *Sandbox) clock() time.Time { return s.now().Add(s.offset) }

// tick moves miniredis to the sandbox clock, which expires keys whose TTL
// has run out; while a command runs, it leaves the clock where it stood
// when the command began (see runFrozen).
func (s *Sandbox) tick() {
	if !s.frozen {
		s.moveTo(s.clock())
	}
}

// moveTo moves miniredis's clock to now.
func (s *Sandbox) moveTo(now time.Time) {
	if len(s.far) > 0 && now.Sub(s.farBase) > farTTL/2 {
		s.renewFar(now)
	}
	s.ticked = now
	s.m.SetTime(now)
}

// runFrozen runs f, one command, on one reading of the clock, taken when
// it begins. Redis too decides what has expired from one reading per
// command (and per script), and a command's steps here take microseconds,
// far below the milliseconds expiries count in. It matters for cost:
// miniredis walks every key of the sandbox each time its clock has moved,
// so a full sandbox's SET, several steps here, pays for one walk, not one
// per step.
func (s *Sandbox) runFrozen(f func() (resp.Value, *RefusedError)) (resp.Value, *RefusedError) {
	if s.frozen {
		return f() // a queued command of EXEC, or a script's call
	}
	s.tick()
	s.frozen = true
	defer func() { s.frozen = false }()
	return f()
}

// Now returns the sandbox clock.
func (s *Sandbox) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clock()
}

// Advance moves the sandbox clock forward by d; keys whose TTL runs out in
// that time expire.
func (s *Sandbox) Advance(d time.Duration) (Advanced, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return Advanced{}, ErrClosed
	}
	if d <= 0 || d > s.limits.MaxAdvance {
		return Advanced{}, fmt.Errorf("advance sandbox clock by %v: %w", d, ErrBadAdvance)
	}
	// What real time ran out goes first, so that only the advance's own
	// expiries are named; then the keys due within the advance (and the
	// microseconds it takes) are the ones to look for after it.
	s.tick()
	var due []string
	until := s.nowMS() + d.Milliseconds() + 1
	for _, k := range s.m.Keys() {
		if when := s.expireAt(k); when >= 0 && when <= until {
			due = append(due, k)
		}
	}
	s.offset += d
	s.writes++
	s.tick()
	a := Advanced{Now: s.clock(), Expired: []string{}}
	for _, k := range due {
		if !s.m.Exists(k) {
			a.Expired = append(a.Expired, shorten(k, keyWidth))
		}
	}
	return a, nil
}

// Advanced is what a clock advance did: the sandbox clock after it, and
// the keys whose TTL ran out in it, sorted, their names shortened as the
// key inspector shows them.
type Advanced struct {
	Now     time.Time
	Expired []string
}

// KeysAtMost returns an upper bound of the keys the sandbox holds, which
// is their count once it is more than a few (exactKeysAbove). A command
// costs time in proportion to them, whatever it is: miniredis walks every
// key each time the sandbox clock has moved.
func (s *Sandbox) KeysAtMost() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keysBound
}

// Writes returns a count that grows with every command and clock move
// that may have changed the sandbox's keys, scripts or clock. A caller
// that keeps a copy of the sandbox compares it with the count of its copy
// to tell whether there is anything new to save.
func (s *Sandbox) Writes() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes
}

// Compact drops memory an idle sandbox does not need: the Lua state and
// large reply buffers. The next command rebuilds what it needs.
func (s *Sandbox) Compact() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.engine.Release()
	for _, c := range []*conn{s.conns[0], s.conns[1], s.inner} {
		if c.out.Cap() > 4<<10 {
			c.out.Buffer = bytes.Buffer{}
		}
	}
}

// Close stops the sandbox. Later calls return ErrClosed.
func (s *Sandbox) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	s.engine.Release()
	s.m.Close()
}

// replaceServer gives the sandbox a fresh miniredis, abandoning a broken
// one, and new connections. Scripts and the clock are kept.
func (s *Sandbox) replaceServer() {
	_ = s.startServer() // Dial of a fresh miniredis does not fail
}

// startServer starts an empty miniredis for the sandbox, with its clock,
// the scripting hook and new connections.
func (s *Sandbox) startServer() error {
	m := miniredis.NewMiniRedis()
	// Dial starts miniredis without a listener; the pipe is not needed, as
	// commands are dispatched directly to the server.
	pipe, err := m.Dial()
	if err != nil {
		return err
	}
	pipe.Close()
	s.m, s.srv = m, m.Server()
	s.conns[0], s.conns[1], s.inner = newConn(), newConn(), newConn()
	s.far = map[string]farExpiry{}
	// A server replaced during a command keeps that command's clock.
	now := s.ticked
	if !s.frozen {
		now = s.clock()
	}
	s.moveTo(now)
	m.ClockTTL(true)
	s.srv.SetPreHook(s.hook)
	s.keysBound, s.sizeBound, s.sizeMeasured = 0, 0, 0
	s.previews = nil
	s.track.all = true // every key of the old server is gone
	s.writes++
	return nil
}

// dispatch hands argv to miniredis on connection c and reads the reply.
// The reply is kept only up to the line's reply budget (see replyLeft): a
// larger one is dropped as miniredis writes it, and answered with an error
// that sets s.replyOver.
func (s *Sandbox) dispatch(c *conn, argv ...string) resp.Value {
	s.tick()
	c.out.Reset()
	c.out.over = 0
	c.out.limit = s.limits.MaxReplyBuildBytes
	if c != s.inner {
		// Small replies always fit, so that the playground's own MULTI,
		// EXEC and UNWATCH are answered whatever the line used.
		c.out.limit = max(s.replyLeft, minReplyRoom)
	}
	s.srv.Dispatch(c.peer, argv)
	c.w.Flush()
	defer func() {
		if c.out.Cap() > 64<<10 {
			c.out.Buffer = bytes.Buffer{}
		}
	}()
	if c.out.over > 0 {
		s.replyOver = c != s.inner
		return resp.Err(s.replyLimitText())
	}
	if c != s.inner {
		s.replyLeft -= c.out.Len()
	}
	v, _, err := resp.Parse(c.out.Bytes())
	if err != nil {
		return resp.Err(fmt.Sprintf("ERR the playground could not read the reply of %s: %v", strings.ToUpper(argv[0]), err))
	}
	return v
}

// minReplyRoom is the room a reply has even when the line's replies have
// used up their budget.
const minReplyRoom = 64

// replyLimitText is the error for a reply past Limits.MaxReplyBuildBytes.
func (s *Sandbox) replyLimitText() string {
	return fmt.Sprintf("ERR the playground's replies stop at %s; ask for fewer elements (LRANGE 0 99, SCAN)", sizeText(s.limits.MaxReplyBuildBytes))
}

// replyBuffer takes a reply as miniredis writes it, keeping at most limit
// bytes and counting the rest in over, so that no reply, however large
// the command makes it, takes more memory than the limit.
type replyBuffer struct {
	bytes.Buffer
	limit int
	over  int
}

func (b *replyBuffer) Write(p []byte) (int, error) {
	if room := b.limit - b.Len(); len(p) > room {
		room = max(room, 0)
		b.over += len(p) - room
		b.Buffer.Write(p[:room])
		return len(p), nil
	}
	return b.Buffer.Write(p)
}
