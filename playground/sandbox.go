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

	"github.com/locklab/locklab/playground/resp"
	"github.com/locklab/locklab/playground/script"
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
}

// SandboxOptions configure a Sandbox.
type SandboxOptions struct {
	// Now is the clock the sandbox clock follows; default time.Now.
	Now    func() time.Time
	Limits Limits
	// Scripts shares compiled scripts between sandboxes; default a cache
	// of the sandbox's own.
	Scripts *script.Cache
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
	engine *script.Engine
	now    func() time.Time
	offset time.Duration // how far Advance moved the clock
	limits Limits
	ctx    context.Context // of the command being run, for scripts
	closed bool

	// Upper bounds of the keys and data bytes in the sandbox, and what the
	// command being run may add to them; see guard.go.
	keysBound, sizeBound     int
	pendingKeys, pendingSize int
}

// conn is one connection: a miniredis peer, which keeps WATCH state, and
// the transaction the playground queues itself, so that EVAL can be part of
// MULTI/EXEC.
type conn struct {
	peer  *server.Peer
	out   *bytes.Buffer
	w     *bufio.Writer
	multi bool
	dirty bool
	queue [][]string
}

func newConn() *conn {
	c := &conn{out: new(bytes.Buffer)}
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
	m := miniredis.NewMiniRedis()
	// Dial starts miniredis without a listener; the pipe is not needed, as
	// commands are dispatched directly to the server.
	pipe, err := m.Dial()
	if err != nil {
		return nil, fmt.Errorf("start sandbox: %w", err)
	}
	pipe.Close()
	s := &Sandbox{
		m:      m,
		srv:    m.Server(),
		inner:  newConn(),
		engine: script.NewEngine(script.Options{
			Limits:         limits.Script,
			MaxScripts:     limits.ScriptCacheLen,
			MaxScriptBytes: limits.ScriptCacheBytes,
			Shared:         opts.Scripts,
		}),
		now:    opts.Now,
		limits: limits,
	}
	s.conns[0], s.conns[1] = newConn(), newConn()
	m.SetTime(s.clock())
	m.ClockTTL(true)
	s.srv.SetPreHook(s.hook)
	return s, nil
}

// hook sends the scripting commands to the playground's engine, so that
// miniredis's own Lua never runs.
func (s *Sandbox) hook(p *server.Peer, cmd string, args ...string) bool {
	switch cmd {
	case "EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO", "SCRIPT":
	default:
		return false
	}
	argv := append([]string{cmd}, args...)
	ctx := s.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	v := s.engine.Do(ctx, scriptCaller{s}, argv)
	p.WriteRaw(string(v.AppendRESP(nil)))
	return true
}

func (s *Sandbox) clock() time.Time { return s.now().Add(s.offset) }

// tick moves miniredis to the sandbox clock, which expires keys whose TTL
// has run out.
func (s *Sandbox) tick() { s.m.SetTime(s.clock()) }

// Now returns the sandbox clock.
func (s *Sandbox) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clock()
}

// Advance moves the sandbox clock forward by d; keys whose TTL runs out in
// that time expire.
func (s *Sandbox) Advance(d time.Duration) (time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return time.Time{}, ErrClosed
	}
	if d <= 0 || d > s.limits.MaxAdvance {
		return time.Time{}, fmt.Errorf("advance sandbox clock by %v: %w", d, ErrBadAdvance)
	}
	s.offset += d
	s.tick()
	return s.clock(), nil
}

// Compact drops memory an idle sandbox does not need: the Lua state and
// large reply buffers. The next command rebuilds what it needs.
func (s *Sandbox) Compact() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.engine.Release()
	for _, c := range []*conn{s.conns[0], s.conns[1], s.inner} {
		if c.out.Cap() > 4<<10 {
			*c.out = bytes.Buffer{}
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

// Exec runs one line typed by client, as redis-cli would send it, and
// returns what redis-cli would print. When the playground refuses the line
// (ErrNotAllowed, ErrLimit), the error is a *RefusedError and Result.Output
// still holds the (error) line to show. ErrUnknownClient and ErrClosed
// come with an empty Result.
func (s *Sandbox) Exec(ctx context.Context, client Client, line string) (res Result, err error) {
	c, err := s.connOf(client)
	if err != nil {
		return Result{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return Result{}, ErrClosed
	}
	res.Client = client
	defer func() { res.ClockMS = s.clock().UnixMilli() }()
	if len(line) > s.limits.MaxLineBytes {
		ref := overLimit("ERR the playground takes lines of at most %d bytes", s.limits.MaxLineBytes)
		res.Output = "(error) " + ref.Msg
		return res, ref
	}
	argv, err := Tokenize(line)
	if err != nil {
		res.Output = "Invalid argument(s)"
		return res, nil
	}
	if len(argv) == 0 {
		return res, nil
	}
	repeat, argv, ok := splitRepeat(argv)
	if !ok {
		res.Output = "Invalid redis-cli repeat command option value."
		return res, nil
	}
	if out, clear, local := s.cliLocal(argv); local {
		res.Output, res.Clear = out, clear
		return res, nil
	}
	if repeat > s.limits.MaxRepeat {
		ref := overLimit("ERR the playground repeats a command at most %d times", s.limits.MaxRepeat)
		res.Output = "(error) " + ref.Msg
		return res, ref
	}
	s.ctx = ctx
	defer func() { s.ctx = nil }()
	var out strings.Builder
	for range repeat {
		v, ref := s.runSafely(c, argv)
		out.WriteString(Format(v))
		if ref != nil {
			err = ref
			break
		}
	}
	res.Output = strings.TrimSuffix(truncateOutput(out.String(), s.limits.MaxReplyLines, s.limits.MaxReplyBytes), "\n")
	return res, err
}

func (s *Sandbox) connOf(client Client) (*conn, error) {
	i, err := clientIndex(client)
	if err != nil {
		return nil, err
	}
	return s.conns[i], nil
}

// clientIndex maps "A" and "B", in either case, to 0 and 1.
func clientIndex(client Client) (int, error) {
	switch Client(strings.ToUpper(string(client))) {
	case ClientA:
		return 0, nil
	case ClientB:
		return 1, nil
	}
	return 0, fmt.Errorf("sandbox exec as %q: %w", client, ErrUnknownClient)
}

// splitRepeat handles redis-cli's repeat prefix: "3 INCR n" runs INCR n three
// times. Like redis-cli, a first argument that is wholly a number (strtol)
// is a repeat count when more arguments follow, and one below 1 is refused.
func splitRepeat(argv []string) (int, []string, bool) {
	if len(argv) < 2 {
		return 1, argv, true
	}
	n, isNum := strtol(argv[0])
	if !isNum {
		return 1, argv, true
	}
	if n <= 0 {
		return 0, nil, false
	}
	return int(min(n, 1<<30)), argv[1:], true
}

// cliLocal answers the lines redis-cli handles itself instead of sending
// them to Redis.
func (s *Sandbox) cliLocal(argv []string) (out string, clear, local bool) {
	name := strings.ToLower(argv[0])
	switch {
	case name == "help" || name == "?":
		return helpText, false, true
	case name == "quit" || name == "exit":
		return "(the playground keeps your session: there is nothing to quit)", false, true
	case name == "clear" && len(argv) == 1:
		return "", true, true
	case strings.HasPrefix(name, ":"), name == "restart", name == "connect" && len(argv) == 3:
		return "(redis-cli's " + argv[0] + " is not available in the playground)", false, true
	}
	return "", false, false
}

// runSafely runs one command for client c and turns a panic into an error
// reply, so that no input can take the process down.
func (s *Sandbox) runSafely(c *conn, argv []string) (v resp.Value, ref *RefusedError) {
	defer func() {
		if r := recover(); r != nil {
			v = resp.Err(fmt.Sprintf("ERR the playground failed to run %s (internal error: %v)", strings.ToUpper(argv[0]), r))
			ref = nil
		}
	}()
	return s.run(c, argv)
}

// dispatch hands argv to miniredis on connection c and reads the reply.
func (s *Sandbox) dispatch(c *conn, argv ...string) resp.Value {
	s.tick()
	c.out.Reset()
	s.srv.Dispatch(c.peer, argv)
	c.w.Flush()
	v, _, err := resp.Parse(c.out.Bytes())
	if err != nil {
		return resp.Err(fmt.Sprintf("ERR the playground could not read the reply of %s: %v", strings.ToUpper(argv[0]), err))
	}
	if c.out.Cap() > 64<<10 {
		*c.out = bytes.Buffer{}
	}
	return v
}
