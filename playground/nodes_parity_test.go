package playground

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/redistest"
	"github.com/locklab/locklab/internal/testenv"
)

// realNodeStart bounds how long a real node may take to answer PING after
// it starts, and to exit after SHUTDOWN.
const realNodeStart = 10 * time.Second

// realNode is one of five real redis-servers playing a learner's nodes:
// loopback, a port it keeps across restarts, and a directory of its own
// with an append-only file synced on every write, so that a node started
// again in the same directory comes back with its data, as
// NodeOp.Persist describes, and one started in a new directory comes back
// empty. internal/redistest starts servers without persistence and picks
// their directory itself, so these are started here.
type realNode struct {
	t      *testing.T
	bin    string
	n      int
	port   int
	dir    string
	exited chan struct{} // closed when the running process exits; nil when stopped
	kill   func()
	out    *testenv.SyncBuffer
}

// startRealNodes starts five real nodes, skipping the test without
// redis-server (failing it under CI=true).
func startRealNodes(t *testing.T) []*realNode {
	t.Helper()
	bin := testenv.LookPath(t, "Debian: apt-get install redis-server redis-tools", "redis-server")
	nodes := make([]*realNode, MaxNodes)
	for i := range nodes {
		r := &realNode{t: t, bin: bin, n: i + 1}
		var err error
		// The port is free when asked for, but another process may take
		// it before redis-server binds it: try a few.
		for range 3 {
			if r.port, err = loopbackPort(); err != nil {
				continue
			}
			r.dir = t.TempDir()
			if err = r.launch(); err == nil {
				break
			}
		}
		if err != nil {
			t.Fatalf("start real node %d: %v", r.n, err)
		}
		t.Cleanup(r.halt)
		nodes[i] = r
	}
	return nodes
}

// loopbackPort asks the kernel for an unused loopback port.
func loopbackPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (r *realNode) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(r.port)) }

// launch runs redis-server in r.dir and waits until it answers PING.
func (r *realNode) launch() error {
	cmd := exec.Command(r.bin,
		"--port", strconv.Itoa(r.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "yes", "--appendfsync", "always",
		"--dir", r.dir,
	)
	r.out = &testenv.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = r.out, r.out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", r.bin, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	r.exited = exited
	r.kill = func() { _ = cmd.Process.Kill() }
	deadline := time.After(realNodeStart)
	for {
		if err := redistest.Ping(r.addr()); err == nil {
			return nil
		}
		select {
		case <-exited:
			r.exited = nil
			return fmt.Errorf("redis-server on %s exited: %s", r.addr(), r.out.String())
		case <-deadline:
			r.halt()
			return fmt.Errorf("redis-server on %s: no PONG after %v: %s", r.addr(), realNodeStart, r.out.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// halt kills the process, if one runs, and waits for it to exit.
func (r *realNode) halt() {
	if r.exited != nil {
		r.kill()
		<-r.exited
		r.exited = nil
	}
}

// stop shuts the server down as an operator would (SHUTDOWN NOSAVE: the
// append-only file is synced on every write anyway) and waits for the
// process to exit.
func (r *realNode) stop() {
	r.t.Helper()
	c, err := net.DialTimeout("tcp", r.addr(), time.Second)
	if err != nil {
		r.t.Fatalf("stop real node %d: %v", r.n, err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("SHUTDOWN NOSAVE\r\n")); err != nil {
		r.t.Fatalf("stop real node %d: %v", r.n, err)
	}
	select {
	case <-r.exited:
		r.exited = nil
	case <-time.After(realNodeStart):
		r.t.Fatalf("real node %d did not exit after SHUTDOWN: %s", r.n, r.out.String())
	}
}

// start starts the server again on its port: in its own directory, where
// its append-only file is, if persist; else in an empty one.
func (r *realNode) start(persist bool) {
	r.t.Helper()
	if !persist {
		r.dir = r.t.TempDir()
	}
	if err := r.launch(); err != nil {
		r.t.Fatalf("start real node %d again: %v", r.n, err)
	}
}

// serverClosed is what redis-cli prints for the first line it sends on a
// connection that the server closed when it stopped; it connects again
// for the next line.
const serverClosed = "Error: Server closed the connection"

// nodeCase is one step of the session: a line typed by a client (with
// its target, as the playground's terminal takes it), or a node action
// done on both sides.
type nodeCase struct {
	client Client
	line   string

	// act, when set, is a node action instead of a line.
	act  NodeAction
	node int
	keep bool // Persist

	// mark names the time just before this line, for a later PTTL.
	mark string
	// pttl, when set, compares a PTTL reply by range instead of by text:
	// both must be within (0, pttl] and at most the time passed since
	// mark below it.
	pttl  int64
	since string

	// closed says that the line goes on a connection the server closed
	// when it stopped or restarted: both sides print serverClosed and
	// run nothing, and the client connects again for its next line.
	closed bool
}

// TestNodesMatchRealRedis types one session into a learner's five nodes,
// through a Manager, and into five real redis-servers, through redis-cli
// --no-raw (one per client and node, as a learner's terminals would be),
// and compares every reply: locks taken node by node and on all nodes,
// WATCH across clients, scripts and functions, nodes stopped, started
// empty and started from their append-only file. Two differences are the
// playground's on purpose and taken out before comparing: @all's output
// (each node's reply is compared with that node's redis-cli; the times
// and the Redlock verdict are the playground's own, and the verdict's
// count of OKs is checked against the real replies), and the refused
// message, which names the node where redis-cli names its address. PTTLs
// are compared by range, as time passes between the two sides.
func TestNodesMatchRealRedis(t *testing.T) {
	servers := startRealNodes(t)
	m := NewManager(Options{})
	defer m.Close()
	ctx := context.Background()
	const learner = "ada"

	line := func(c Client, l string) nodeCase { return nodeCase{client: c, line: l} }
	a := func(l string) nodeCase { return line(ClientA, l) }
	b := func(l string) nodeCase { return line(ClientB, l) }
	marked := func(c nodeCase, mark string) nodeCase { c.mark = mark; return c }
	pttl := func(l string, ttl int64, since string) nodeCase {
		return nodeCase{client: ClientA, line: l, pttl: ttl, since: since}
	}
	closed := func(c nodeCase) nodeCase { c.closed = true; return c }
	act := func(n int, action NodeAction, persist bool) nodeCase {
		return nodeCase{act: action, node: n, keep: persist}
	}

	const (
		acquireA = "SET lock:invoice:7 3f9a1c NX PX 30000"
		acquireB = "SET lock:invoice:7 9b2e77 NX PX 30000"
		getSrc   = `"return redis.call('GET', KEYS[1])"`
		getSHA   = "d3c21d0c2b9ca22f82737626a27bcaf5d288f99f"
		library  = `"#!lua name=locks\nredis.register_function('release', function(keys, args) if redis.call('GET', keys[1]) == args[1] then return redis.call('DEL', keys[1]) end return 0 end)"`
		release  = `EVAL "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end" 1`
	)
	cases := []nodeCase{
		// A Redlock client takes the lesson's lock node by node; the other
		// client finds it taken on every node.
		marked(a("@1 "+acquireA), "r"),
		a("@2 " + acquireA),
		a("@3 " + acquireA),
		a("@4 " + acquireA),
		a("@5 " + acquireA),
		b("@1 " + acquireB),
		b("@3 " + acquireB),
		b("@2 GET lock:invoice:7"),
		pttl("@3 PTTL lock:invoice:7", 30000, "r"),
		pttl("@5 PTTL lock:invoice:7", 30000, "r"),
		a("@4 TTL nokey"),
		a("@5 EXISTS lock:invoice:7 nokey"),
		a("@2 DBSIZE"),
		a("SET visited yes"),
		a("@1 GET visited"),
		a("@2 GET visited"),

		// The same on all nodes at once; the second client is refused
		// everywhere; a lock held on two nodes already leaves three.
		marked(a("@all SET lock:report 3f9a1c NX PX 30000"), "report"),
		b("@all SET lock:report 9b2e77 NX PX 30000"),
		a("@all GET lock:report"),
		b("@1 SET lock:batch 9b2e77 NX PX 30000"),
		b("@2 SET lock:batch 9b2e77 NX PX 30000"),
		a("@all SET lock:batch 3f9a1c NX PX 30000"),
		a("@all " + release + " lock:batch 3f9a1c"),
		a("@all EXISTS lock:batch"),
		a("@all MGET lock:report lock:batch"),
		a("@all SET lock:bad 3f9a1c NX PX x"),

		// WATCH is per node: a write on node 2 fails the transaction
		// watched there, not the one watched on node 3.
		a("@2 SET lock:w x"),
		a("@2 WATCH lock:w"),
		b("@2 SET lock:w y"),
		a("@2 MULTI"),
		a("@2 SET lock:w z"),
		a("@2 EXEC"),
		a("@2 GET lock:w"),
		a("@3 WATCH lock:w"),
		b("@2 SET lock:w q"),
		a("@3 MULTI"),
		a("@3 SET lock:w z"),
		a("@3 EXEC"),
		b("@3 GET lock:w"),

		// Scripts and a function library.
		a("@3 SCRIPT LOAD " + getSrc),
		a("@3 EVALSHA " + getSHA + " 1 lock:invoice:7"),
		a("@4 SCRIPT LOAD " + getSrc),
		a("@5 EVALSHA " + getSHA + " 1 lock:invoice:7"),
		a("@4 FUNCTION LOAD " + library),
		a("@2 FUNCTION LOAD " + library),
		a("@4 FCALL release 1 lock:invoice:7 9b2e77"),
		a("@4 FUNCTION LIST"),
		b("@2 FCALL release 1 lock:w q"),
		b("@2 EXISTS lock:w"),

		// Node 3 stops: it refuses every connection; a lock on all nodes
		// still gets a majority. It starts again without persistence,
		// empty: the other client takes the lesson's lock there too.
		act(3, NodeStop, false),
		closed(a("@3 GET lock:invoice:7")),
		a("@3 GET lock:invoice:7"),
		closed(b("@3 PING")),
		b("@3 PING"),
		a("@all SET lock:mail 3f9a1c NX PX 30000"),
		a("GET lock:invoice:7"),
		act(3, NodeStart, false),
		a("@3 EXISTS lock:invoice:7"),
		a("@3 DBSIZE"),
		a("@3 EVALSHA " + getSHA + " 1 lock:invoice:7"),
		b("@3 " + acquireB),
		b("@3 GET lock:invoice:7"),
		a("@all GET lock:invoice:7"),

		// Node 4 restarts from its append-only file: its keys are back
		// with their TTLs still running and its function library with
		// them; its script cache is empty.
		act(4, NodeRestart, true),
		closed(a("@4 GET lock:invoice:7")),
		a("@4 GET lock:invoice:7"),
		pttl("@4 PTTL lock:invoice:7", 30000, "r"),
		pttl("@4 PTTL lock:report", 30000, "report"),
		a("@4 EVALSHA " + getSHA + " 1 lock:invoice:7"),
		a("@4 FUNCTION LIST"),
		a("@4 FCALL release 1 lock:invoice:7 9b2e77"),
		a("@4 FCALL release 1 lock:mail 3f9a1c"),
		a("@4 EXISTS lock:mail"),

		// Node 5 stops in the middle of a transaction and starts from its
		// append-only file: the transaction and the client's name went
		// with the connection.
		a("@5 CLIENT SETNAME worker-a"),
		a("@5 MULTI"),
		a("@5 SET lock:tx 1"),
		act(5, NodeStop, false),
		closed(a("@5 EXISTS lock:invoice:7")),
		a("@5 EXISTS lock:invoice:7"),
		act(5, NodeStart, true),
		a("@5 EXEC"),
		a("@5 CLIENT GETNAME"),
		a("@5 EXISTS lock:tx"),
		pttl("@5 PTTL lock:invoice:7", 30000, "r"),
		a("@5 GET lock:report"),
		a("@5 EVALSHA " + getSHA + " 1 lock:invoice:7"),

		// Node 2 restarts without persistence: its keys and its function
		// library are gone.
		act(2, NodeRestart, false),
		closed(b("@2 FUNCTION LIST")),
		b("@2 FUNCTION LIST"),
		closed(a("@2 FCALL release 1 lock:w q")),
		a("@2 FCALL release 1 lock:w q"),
		a("@2 DBSIZE"),

		// Node 1 stops: a line without a target goes to it. The lesson's
		// lock is free on node 2 alone, which is no majority; a new lock
		// gets nodes 2 to 5.
		act(1, NodeStop, false),
		closed(a("GET lock:invoice:7")),
		a("GET lock:invoice:7"),
		a("@all SET lock:invoice:7 3f9a1c NX PX 30000"),
		a("@all SET lock:final 3f9a1c NX PX 30000"),
		act(1, NodeStart, true),
		a("GET lock:invoice:7"),
		a("@1 GET visited"),
		a("@all " + release + " lock:report 3f9a1c"),
		a("@all DBSIZE"),
	}

	clis := map[string]*redisCLI{}
	stale := map[string]bool{} // connections the real server closed
	cli := func(c Client, n int) (*redisCLI, string) {
		k := fmt.Sprintf("%s%d", c, n)
		if clis[k] == nil {
			clis[k] = startCLI(t, servers[n-1].addr())
		}
		return clis[k], k
	}
	marks := map[string]time.Time{}
	compared := 0

	for i, c := range cases {
		if c.act != "" {
			op := NodeOp{Action: c.act, Persist: c.keep}
			r := servers[c.node-1]
			if c.act != NodeStart {
				r.stop()
			}
			if c.act != NodeStop {
				r.start(c.keep)
			}
			// A stop closes every connection to the node; a start finds
			// none open.
			for k := range clis {
				if c.act != NodeStart && strings.HasSuffix(k, strconv.Itoa(c.node)) {
					stale[k] = true
				}
			}
			if _, err := m.Node(ctx, learner, c.node, op); err != nil {
				t.Fatalf("#%d node %d %s: %v", i, c.node, c.act, err)
			}
			continue
		}
		if c.mark != "" {
			marks[c.mark] = time.Now()
		}
		tgt, rest, err := SplitTarget(c.line)
		if err != nil || tgt.Storage {
			t.Fatalf("#%d %q: not a line for a node", i, c.line)
		}
		nodes := []int{tgt.Node}
		if tgt.All {
			nodes = []int{1, 2, 3, 4, 5}
		}
		// The real side first, node by node, as @all runs them.
		want := make([]string, len(nodes))
		for j, n := range nodes {
			rc, k := cli(c.client, n)
			if stale[k] != c.closed {
				t.Fatalf("#%d %s> %s: client %s's connection to node %d closed: %v; the case says %v", i, c.client, c.line, c.client, n, stale[k], c.closed)
			}
			delete(stale, k)
			want[j] = sameAddress(rc.exec(rest), servers[n-1], n)
		}
		res, err := m.Exec(ctx, learner, c.client, c.line)
		if err != nil {
			t.Fatalf("#%d %s> %s: %v", i, c.client, c.line, err)
		}
		got := []string{res.Output}
		if tgt.All {
			var verdict string
			got, verdict = splitAll(t, res.Output)
			checkVerdict(t, i, c.line, rest, want, verdict)
		}
		for j, n := range nodes {
			label := fmt.Sprintf("#%d %s> %s (node %d)", i, c.client, c.line, n)
			switch {
			case c.closed:
				compared++
				if want[j] != serverClosed || got[j] != serverClosed {
					t.Errorf("%s: redis-cli printed %q and the playground %q; want both %q", label, want[j], got[j], serverClosed)
				}
			case c.pttl > 0:
				compared++
				bound := time.Since(marks[c.since]).Milliseconds() + 1
				for _, side := range []struct{ name, out string }{{"redis-cli", want[j]}, {"playground", got[j]}} {
					v, err := strconv.ParseInt(strings.TrimPrefix(side.out, "(integer) "), 10, 64)
					if err != nil || !strings.HasPrefix(side.out, "(integer) ") || v <= 0 || v > c.pttl || c.pttl-v > bound {
						t.Errorf("%s: %s printed %q; want (integer) in [%d, %d]", label, side.name, side.out, c.pttl-bound, c.pttl)
					}
				}
			default:
				compared++
				if got[j] != want[j] {
					t.Errorf("%s\n got %q\nwant %q", label, got[j], want[j])
				}
			}
		}
	}
	t.Logf("%d replies compared line for line with five real redis-servers", compared)
}

// sameAddress writes the address in redis-cli's refused message as the
// playground does: "node N" for "127.0.0.1:PORT". The playground's
// learner has no addresses, only node numbers; the rest of the message is
// redis-cli's.
func sameAddress(out string, r *realNode, n int) string {
	return strings.ReplaceAll(out, "Could not connect to Redis at "+r.addr()+":", fmt.Sprintf("Could not connect to Redis at node %d:", n))
}

// allHeader is the start of a node's reply in @all's output: "@N (1.23
// ms) " before a reply, "@N (1.23 ms)" before a reply of several lines,
// "@N " before a stopped node's refusal.
var allHeader = regexp.MustCompile(`^@([1-5])(?: \([0-9.]+ ms\))?(?: |$)`)

// splitAll takes @all's output apart: the reply of each node, in order,
// and the Redlock verdict line, if any. @all adds the node and the time
// each took, and the verdict, to what redis-cli would print for each
// node: those are the playground's own and are taken out before the
// replies are compared.
func splitAll(t *testing.T, out string) (replies []string, verdict string) {
	t.Helper()
	lines := strings.Split(out, "\n")
	if last := lines[len(lines)-1]; strings.HasPrefix(last, "Redlock: ") {
		verdict, lines = last, lines[:len(lines)-1]
	}
	for _, l := range lines {
		next := len(replies) + 1
		if h := allHeader.FindString(l); h != "" && h[1] == byte('0'+next) {
			replies = append(replies, strings.TrimPrefix(l, h))
			continue
		}
		if len(replies) == 0 {
			t.Fatalf("@all output %q: %q comes before node 1's reply", out, l)
		}
		if replies[len(replies)-1] != "" {
			replies[len(replies)-1] += "\n"
		}
		replies[len(replies)-1] += l
	}
	if len(replies) != MaxNodes {
		t.Fatalf("@all output %q has %d node replies; want %d", out, len(replies), MaxNodes)
	}
	return replies, verdict
}

// checkVerdict checks that @all gives a Redlock verdict for a lock
// acquire, and only then, counting the OKs that the real nodes gave.
func checkVerdict(t *testing.T, i int, line, rest string, want []string, verdict string) {
	t.Helper()
	_, acquire := acquireTTL(rest)
	if !acquire {
		if verdict != "" {
			t.Errorf("#%d %s: verdict %q for a line that takes no lock", i, line, verdict)
		}
		return
	}
	oks := 0
	for _, w := range want {
		if w == "OK" {
			oks++
		}
	}
	if prefix := fmt.Sprintf("Redlock: %d of %d nodes said OK", oks, MaxNodes); !strings.HasPrefix(verdict, prefix) {
		t.Errorf("#%d %s: verdict %q; want it to start %q, as the real nodes' replies count", i, line, verdict, prefix)
	}
}
