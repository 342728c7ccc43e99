package race

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/alicebob/miniredis/v2/server"
	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/luaredis"
	"github.com/locklab/locklab/resp"
)

// node is one simulated Redis: a miniredis on the virtual clock. The lock
// package reaches it through link, a redis.Scripter that hands each
// command straight to the miniredis server in process: no sockets and no
// goroutine hand-offs, so a whole scenario runs in a few milliseconds.
// Scripts run on the project's own Lua engine (the playground's), shared by
// the nodes of a run so that one Lua state serves them all; each node still
// has its own script cache (known), so a restarted node answers NOSCRIPT.
type node struct {
	id     int
	m      *miniredis.Miniredis
	offset time.Duration // how far its clock is ahead of virtual time
	up     bool

	granted  bool          // a client's lock key has been on it
	downAt   time.Duration // when it last crashed
	lost     string        // the holder whose key it lost in that crash
	restarts int           // crashes so far, to tell a restart from an older one

	mu      sync.Mutex // one command at a time, as on a real server
	peer    *server.Peer
	out     *bytes.Buffer
	w       *bufio.Writer
	scripts *scriptHost
	known   map[string]bool // SHA1s of the scripts this node has seen
}

// scriptHost is the Lua engine the nodes of one run share.
type scriptHost struct {
	mu     sync.Mutex
	engine *luaredis.Engine
}

func newScriptHost() *scriptHost {
	return &scriptHost{engine: luaredis.NewEngine(luaredis.Options{})}
}

// newNode starts a node whose clock reads start. With ClockTTL, keys
// expire as SetTime moves its clock, and only then.
func newNode(id int, start time.Time, scripts *scriptHost) *node {
	m := miniredis.NewMiniRedis()
	// Dial starts miniredis without a listener; commands are dispatched
	// to its server directly.
	if c, err := m.Dial(); err == nil {
		c.Close()
	}
	m.SetTime(start)
	m.ClockTTL(true)
	n := &node{id: id, m: m, up: true, out: new(bytes.Buffer), scripts: scripts, known: map[string]bool{}}
	n.w = bufio.NewWriterSize(n.out, 512)
	n.peer = server.NewPeer(n.w)
	return n
}

func (n *node) close() { n.m.Close() }

// forgetScripts empties the script cache, as a restarted Redis has.
func (n *node) forgetScripts() { clear(n.known) }

// dispatch runs one command on the miniredis server and reads its reply.
// The caller holds n.mu.
func (n *node) dispatch(argv []string) resp.Value {
	n.out.Reset()
	n.m.Server().Dispatch(n.peer, argv)
	_ = n.w.Flush()
	v, _, err := resp.Parse(n.out.Bytes())
	if err != nil {
		return resp.Err(fmt.Sprintf("ERR node %d: unreadable reply: %v", n.id, err))
	}
	return v
}

// do runs a command, sending scripting commands to the Lua engine.
func (n *node) do(ctx context.Context, argv ...string) resp.Value {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch argv[0] {
	case "EVAL", "EVAL_RO":
		n.known[sha1hex(argv[1])] = true
	case "EVALSHA", "EVALSHA_RO":
		if !n.known[strings.ToLower(argv[1])] {
			return resp.Err("NOSCRIPT No matching script. Please use EVAL.")
		}
	case "SCRIPT":
		return n.scriptCommand(argv)
	default:
		return n.dispatch(argv)
	}
	n.scripts.mu.Lock()
	defer n.scripts.mu.Unlock()
	return n.scripts.engine.Do(ctx, caller{n}, argv)
}

// scriptCommand answers SCRIPT LOAD and EXISTS from the node's own cache.
func (n *node) scriptCommand(argv []string) resp.Value {
	sub := ""
	if len(argv) > 1 {
		sub = strings.ToUpper(argv[1])
	}
	switch {
	case sub == "LOAD" && len(argv) == 3:
		n.scripts.mu.Lock()
		sha, err := n.scripts.engine.Load(argv[2])
		n.scripts.mu.Unlock()
		if err != nil {
			return resp.Err("ERR Error compiling script (new function): " + err.Error())
		}
		n.known[sha] = true
		return resp.Str(sha)
	case sub == "EXISTS":
		out := make([]resp.Value, 0, len(argv)-2)
		for _, sha := range argv[2:] {
			out = append(out, resp.Int(boolInt(n.known[strings.ToLower(sha)])))
		}
		return resp.Arr(out...)
	case sub == "FLUSH":
		clear(n.known)
		return resp.OK()
	}
	return resp.Err("ERR unknown subcommand or wrong number of arguments for 'script' command")
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func sha1hex(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// caller runs a script's redis.call commands on the node.
type caller struct{ n *node }

func (c caller) Call(argv []string, _ bool) resp.Value { return c.n.dispatch(argv) }

// link is one client's way to a node: it fails when the node is down or cut
// off from that client by the network. In the failover scenario a
// client's one link follows the current primary. s and c are nil in tests
// of the node alone.
type link struct {
	n       *node
	cut     bool
	s       *sim
	c       *client
	primary bool // follow s's current primary rather than n
}

// errDown is the error of a call to a crashed node.
type errDown struct{ id int }

func (e errDown) Error() string { return fmt.Sprintf("node %d: connection refused (crashed)", e.id) }

// node returns the node the link reaches now.
func (l link) node() *node {
	if l.primary && l.s != nil && l.s.failover != nil {
		return l.s.failover.primary
	}
	return l.n
}

// check returns why the node cannot be reached, or nil.
func (l link) check() error {
	n := l.node()
	switch {
	case l.cut:
		return fmt.Errorf("node %d: unreachable from this client", n.id)
	case !n.up:
		return errDown{n.id}
	}
	return nil
}

func (l link) eval(ctx context.Context, name, scriptOrSHA string, keys []string, args []any) *redis.Cmd {
	cmd := redis.NewCmd(ctx)
	if err := l.check(); err != nil {
		cmd.SetErr(err)
		return cmd
	}
	n := l.node()
	argv := append([]string{name, scriptOrSHA, strconv.Itoa(len(keys))}, keys...)
	for _, a := range args {
		argv = append(argv, fmt.Sprint(a))
	}
	if l.s != nil && len(args) > 0 {
		// The lock package's scripts all take the lock token first:
		// knowing whose it is names the holder even of a key whose
		// reply was lost.
		l.s.nameToken(argv[3+len(keys)], l.c.name)
	}
	val, err := goValue(n.do(ctx, argv...))
	if l.s != nil {
		primary := n == l.s.nodes[0]
		if l.s.failover != nil {
			primary = n == l.s.failover.primary
		}
		if d := l.s.delays.take(l.c, n, primary); d > 0 && d >= l.c.timeout {
			// The command ran, but its reply came too late.
			val, err = nil, fmt.Errorf("node %d: i/o timeout: no reply within %s", n.id, dur(l.c.timeout))
		}
	}
	cmd.SetVal(val)
	cmd.SetErr(err)
	return cmd
}

func (l link) Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	return l.eval(ctx, "EVAL", script, keys, args)
}

func (l link) EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	return l.eval(ctx, "EVALSHA", sha1, keys, args)
}

func (l link) EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	return l.eval(ctx, "EVAL_RO", script, keys, args)
}

func (l link) EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	return l.eval(ctx, "EVALSHA_RO", sha1, keys, args)
}

func (l link) ScriptExists(ctx context.Context, hashes ...string) *redis.BoolSliceCmd {
	cmd := redis.NewBoolSliceCmd(ctx)
	if err := l.check(); err != nil {
		cmd.SetErr(err)
		return cmd
	}
	v := l.node().do(ctx, append([]string{"SCRIPT", "EXISTS"}, hashes...)...)
	if v.IsError() {
		cmd.SetErr(replyError(v.Str))
		return cmd
	}
	out := make([]bool, len(v.Elems))
	for i, e := range v.Elems {
		out[i] = e.Int == 1
	}
	cmd.SetVal(out)
	return cmd
}

func (l link) ScriptLoad(ctx context.Context, src string) *redis.StringCmd {
	cmd := redis.NewStringCmd(ctx)
	if err := l.check(); err != nil {
		cmd.SetErr(err)
		return cmd
	}
	v := l.node().do(ctx, "SCRIPT", "LOAD", src)
	if v.IsError() {
		cmd.SetErr(replyError(v.Str))
		return cmd
	}
	cmd.SetVal(v.Str)
	return cmd
}

// replyError is an error reply from a node, recognised by go-redis as a
// Redis error (so "NOSCRIPT" makes a script fall back to EVAL).
type replyError string

func (e replyError) Error() string { return string(e) }

// RedisError marks replyError as a redis.Error.
func (replyError) RedisError() {}

// goValue converts a reply into what go-redis's Cmd would hold.
func goValue(v resp.Value) (any, error) {
	switch v.Kind {
	case resp.Error:
		return nil, replyError(v.Str)
	case resp.Nil:
		return nil, redis.Nil
	case resp.Integer, resp.Bool:
		return v.Int, nil
	case resp.Status, resp.Bulk, resp.Double:
		return v.Str, nil
	default:
		out := make([]any, len(v.Elems))
		for i, e := range v.Elems {
			x, err := goValue(e)
			if err != nil && err != redis.Nil {
				x = err
			}
			out[i] = x
		}
		return out, nil
	}
}
