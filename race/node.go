package race

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/playground"
	"github.com/locklab/locklab/resp"
	"github.com/locklab/locklab/sim"
)

// node is one simulated Redis: a kernel node (a playground sandbox on the
// run's clock, plus its own clock offset), which answers as the
// playground does, scripts included, and what the narration needs to know
// of its past. The lock package reaches it through link, a
// redis.Scripter that hands each command straight to the sandbox: no
// sockets and no goroutine hand-offs, so a whole scenario runs in a few
// milliseconds. A restarted node has forgotten its scripts (EVALSHA
// answers NOSCRIPT), as Redis does.
type node struct {
	id int
	sn *sim.Node
	m  nodeData // the node's data, read and written without the lock package
	up bool

	granted  bool          // a client's lock key has been on it
	downAt   time.Duration // when it last crashed
	lost     string        // the holder whose key it lost in that crash
	restarts int           // crashes so far, to tell a restart from an older one

	mu sync.Mutex // one command at a time, as on a real server
}

// newNode starts a node on the run's clock.
func newNode(id int, now func() time.Time) (*node, error) {
	sn, err := sim.NewNode(id, playground.SandboxOptions{Now: now})
	if err != nil {
		return nil, err
	}
	return &node{id: id, sn: sn, m: nodeData{sn}, up: true}, nil
}

func (n *node) close() { n.sn.Close() }

// offset is how far the node's clock is ahead of true time.
func (n *node) offset() time.Duration { return n.sn.Offset() }

// do runs a command as a client would send it and returns the reply.
func (n *node) do(ctx context.Context, argv ...string) resp.Value {
	n.mu.Lock()
	defer n.mu.Unlock()
	v, err := n.sn.Do(ctx, argv)
	if err != nil && !v.IsError() {
		return resp.Err("ERR " + err.Error())
	}
	return v
}

// nodeData reads and writes a node's keys directly, as the simulation
// itself does: the replica's copies, the preset fencing counter, the
// narration's look at who holds the key.
type nodeData struct{ n *sim.Node }

// errNoKey is Get's error for a key that is not there.
var errNoKey = fmt.Errorf("no such key")

func (d nodeData) Get(k string) (string, error) {
	v, _, ok := d.n.Peek(k)
	if !ok {
		return "", errNoKey
	}
	return v, nil
}

func (d nodeData) Exists(k string) bool {
	_, _, ok := d.n.Peek(k)
	return ok
}

// TTL is k's time to live; 0 for none, or no key.
func (d nodeData) TTL(k string) time.Duration {
	_, ms, ok := d.n.Peek(k)
	if !ok || ms < 0 {
		return 0
	}
	return time.Duration(ms) * time.Millisecond
}

func (d nodeData) Set(k, v string) error {
	r, err := d.n.Do(context.Background(), []string{"SET", k, v})
	if err == nil && r.IsError() {
		err = fmt.Errorf("%s", r.Str)
	}
	return err
}

func (d nodeData) Del(k string) { _, _ = d.n.Do(context.Background(), []string{"DEL", k}) }

// SetTTL gives k a TTL, in whole milliseconds.
func (d nodeData) SetTTL(k string, ttl time.Duration) {
	_, _ = d.n.Do(context.Background(), []string{"PEXPIRE", k, strconv.FormatInt(max(ttl.Milliseconds(), 1), 10)})
}

func (d nodeData) FlushAll() { _, _ = d.n.Do(context.Background(), []string{"FLUSHALL"}) }

// link is one client's way to a node: it fails when the node is down or cut
// off from that client by the network. In the failover scenario a
// client's one link follows the current primary. s and c are nil in tests
// of the node alone.
type link struct {
	n       *node
	cut     bool
	s       *runner
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
			val, err = nil, fmt.Errorf("node %d: i/o timeout: no reply within %s", n.id, sim.Dur(l.c.timeout))
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
