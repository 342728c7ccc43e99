package playground

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/luaredis"
)

// nodeSet is a learner's sandbox as a Manager keeps it: up to MaxNodes
// independent Redis nodes, each a Box of its own (so each runs where the
// Manager's NewBox puts a sandbox: in process or in a worker), and the
// fenced storage service. Node 1 always exists; the others are started
// on first use, so a learner who never uses them costs one Box and this
// struct. A nodeSet is a Box itself: a line carries its target
// (SplitTarget), and the data allowance, sizes, writes and snapshots are
// those of all nodes together, so that a learner's nodes share one data
// limit and follow the learner across replicas as one.
type nodeSet struct {
	cfg     *nodeConfig // shared by all learners' sets
	learner string

	// mu serializes the learner's calls: a line, a clock move, a node
	// restarted. A learner's commands run one at a time anyway.
	mu    sync.Mutex
	nodes [MaxNodes]Box // nil: not used yet
	down  [MaxNodes]bool
	sizes [MaxNodes]int // the data each node last reported
	// conns are the clients' connections to each node, as redis-cli
	// keeps them (connState).
	conns [MaxNodes][2]connState
	// store is the storage service's state; nil until it is written.
	store *StorageState
	// writes counts what the set itself changed (a node stopped, started
	// or replaced, a storage write) and the writes of the nodes it
	// replaced, so that Writes only grows.
	writes uint64
	closed bool
}

// nodeConfig is what every node of every learner starts with; one per
// Manager, so that a learner's set holds a pointer, not a copy.
type nodeConfig struct {
	newBox  func(SandboxOptions) (Box, error)
	now     func() time.Time
	limits  Limits
	scripts *luaredis.Cache
}

// options are the options of a learner's node, starting from snap.
func (c *nodeConfig) options(learner string, snap *Snapshot) SandboxOptions {
	return SandboxOptions{Now: c.now, Limits: c.limits, Scripts: c.scripts, Learner: learner, Restore: snap}
}

// newNodeSet starts a learner's nodes: node 1, and the others that
// snap says they used.
func newNodeSet(cfg *nodeConfig, learner string, snap *Snapshot) (*nodeSet, error) {
	ns := &nodeSet{cfg: cfg, learner: learner}
	ns.conns[0] = [2]connState{connOpen, connOpen} // redis-cli starts connected
	first := cfg.options(learner, nil)
	var others *NodesSnapshot
	if snap != nil {
		s := *snap
		others, s.Nodes = s.Nodes, nil
		first.Restore = &s
		ns.sizes[0] = s.dataSize() + s.scriptSize()
	}
	b, err := cfg.newBox(first)
	if err != nil {
		return nil, err
	}
	ns.nodes[0] = b
	if others == nil {
		return ns, nil
	}
	for _, o := range others.Others {
		if o.Node < 2 || o.Node > MaxNodes || ns.nodes[o.Node-1] != nil {
			continue
		}
		if _, err := ns.start(o.Node, &o.Snapshot); err != nil {
			ns.Close()
			return nil, err
		}
	}
	for i, d := range others.Down {
		if i < MaxNodes {
			ns.down[i] = d
		}
	}
	if others.Storage != (StorageState{}) {
		st := others.Storage
		ns.store = &st
	}
	for i, c := range others.Conns {
		if i < 2*MaxNodes && c <= connClosed {
			ns.conns[i/2][i%2] = c
		}
	}
	return ns, nil
}

// start starts node n, empty or from snap, in place of the one it had.
func (ns *nodeSet) start(n int, snap *Snapshot) (Box, error) {
	b, err := ns.cfg.newBox(ns.cfg.options(ns.learner, snap))
	if err != nil {
		return nil, fmt.Errorf("start node %d: %w", n, err)
	}
	if old := ns.nodes[n-1]; old != nil {
		ns.writes += old.Writes() + 1
		old.Close()
	}
	ns.nodes[n-1] = b
	ns.sizes[n-1] = 0
	if snap != nil {
		ns.sizes[n-1] = snap.dataSize() + snap.scriptSize()
	}
	return b, nil
}

// node returns node n, starting it if it was never used. A node started
// later keeps the time of node 1's clock: the machines of a room agree
// until a learner makes one jump.
func (ns *nodeSet) node(n int) (Box, error) {
	if b := ns.nodes[n-1]; b != nil {
		return b, nil
	}
	snap := Snapshot{Offset: ns.nodes[0].Now().Sub(ns.cfg.now())}
	return ns.start(n, &snap)
}

// total is the data of all nodes and the storage.
func (ns *nodeSet) total() int {
	n := 0
	if ns.store != nil {
		n = len(ns.store.Data)
	}
	for _, s := range ns.sizes {
		n += s
	}
	return n
}

func (ns *nodeSet) ExecWithin(ctx context.Context, client Client, line string, allow int) (Result, int, error) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if ns.closed {
		return Result{}, 0, ErrClosed
	}
	if res, ok, err := ns.nodeLine(client, line); ok {
		res.NodesChanged = true
		return res, ns.total(), err
	}
	t, rest, err := SplitTarget(line)
	switch {
	case err != nil:
		return ns.answer(client, err.Error()), ns.total(), nil
	case t.Storage:
		return ns.storageExec(client, rest, allow)
	case t.All:
		res, size, err := ns.execAll(ctx, client, rest, allow)
		res.NodesChanged = true
		return res, size, err
	case t.Node == 1 && !ns.down[0] && ns.conns[0][clientSlot(client)] == connOpen:
		// The path of every learner who never used the other nodes.
		res, size, err := ns.nodes[0].ExecWithin(ctx, client, rest, allow-(ns.total()-ns.sizes[0]))
		return res, ns.settled(0, size), err
	}
	res, size, err := ns.execNode(ctx, t.Node, client, rest, allow, false)
	if err == nil || res.Output != "" {
		res.ClockMS = ns.nodes[0].Now().UnixMilli()
	}
	res.NodesChanged = true
	return res, size, err
}

// settled notes the size node i reported after a line and returns the
// set's, or -1 if the node could not tell.
func (ns *nodeSet) settled(i, size int) int {
	if size < 0 {
		return -1
	}
	ns.sizes[i] = size
	return ns.total()
}

// execNode runs a line on node n, within what the other nodes leave of
// allow. The client's connection goes as redis-cli's does: a line sent
// on a connection the node closed when it stopped or restarted is not
// run, and says so; the next connects again, which a stopped node
// refuses. With reconnect, as a Redlock client's library does, the closed
// connection is replaced before the line is sent.
func (ns *nodeSet) execNode(ctx context.Context, n int, client Client, line string, allow int, reconnect bool) (Result, int, error) {
	c := &ns.conns[n-1][clientSlot(client)]
	if *c == connClosed {
		*c = connNone
		if !reconnect {
			ns.writes++
			return ns.answer(client, serverClosedText), ns.total(), nil
		}
	}
	if ns.down[n-1] {
		return ns.answer(client, refusedText(n)), ns.total(), nil
	}
	if *c == connNone {
		*c = connOpen
		ns.writes++
	}
	b, err := ns.node(n)
	if err != nil {
		return Result{}, -1, err
	}
	res, size, err := b.ExecWithin(ctx, client, line, max(allow-(ns.total()-ns.sizes[n-1]), 0))
	return res, ns.settled(n-1, size), err
}

// connState is a client's connection to a node.
type connState uint8

const (
	connNone   connState = iota // not connected: the next line connects
	connOpen                    // connected
	connClosed                  // closed by the node, unknown to the client yet
)

// serverClosedText is what redis-cli prints for a line sent on a
// connection the server has closed; it connects again for the next.
const serverClosedText = "Error: Server closed the connection"

// clientSlot is the index of a client's connection, 0 for A and 1 for B;
// the Manager has checked the client.
func clientSlot(client Client) int {
	if client == ClientB || client == "b" {
		return 1
	}
	return 0
}

// dropConns closes node n's open connections, as a node that stops does.
func (ns *nodeSet) dropConns(n int) {
	for i, c := range ns.conns[n-1] {
		if c == connOpen {
			ns.conns[n-1][i] = connClosed
		}
	}
}

// refusedText is what redis-cli prints when node n does not accept its
// connection.
func refusedText(n int) string {
	return fmt.Sprintf("Could not connect to Redis at node %d: Connection refused", n)
}

// answer is a reply the set gives itself, on node 1's clock.
func (ns *nodeSet) answer(client Client, out string) Result {
	return Result{Client: Client(strings.ToUpper(string(client))), Output: out, ClockMS: ns.nodes[0].Now().UnixMilli()}
}

func (ns *nodeSet) Advance(d time.Duration) (Advanced, error) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if ns.closed {
		return Advanced{}, ErrClosed
	}
	var a Advanced
	var errs []error
	for i, b := range ns.nodes {
		if b == nil {
			continue
		}
		na, err := b.Advance(d)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if i == 0 {
			a.Now = na.Now
			a.Expired = na.Expired
			continue
		}
		for _, k := range na.Expired {
			a.Expired = append(a.Expired, fmt.Sprintf("%s on node %d", k, i+1))
		}
	}
	if a.Expired == nil {
		a.Expired = []string{}
	}
	return a, errors.Join(errs...)
}

func (ns *nodeSet) Now() time.Time { return ns.nodes[0].Now() }

// Keys lists the keys of the nodes that run, node by node, each with its
// node.
func (ns *nodeSet) Keys() ([]KeyInfo, error) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if ns.closed {
		return nil, ErrClosed
	}
	var all []KeyInfo
	for i, b := range ns.nodes {
		if b == nil || ns.down[i] {
			continue
		}
		keys, err := b.Keys()
		if err != nil {
			return nil, err
		}
		if i == 0 && all == nil {
			all = keys
		} else {
			all = append(all, keys...)
		}
		for j := len(all) - len(keys); j < len(all); j++ {
			all[j].Node = i + 1
		}
	}
	if all == nil {
		all = []KeyInfo{}
	}
	return all, nil
}

func (ns *nodeSet) Snapshot() (Snapshot, error) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if ns.closed {
		return Snapshot{}, ErrClosed
	}
	snap, err := ns.nodes[0].Snapshot()
	if err != nil {
		return Snapshot{}, err
	}
	used := ns.store != nil || ns.conns[0] != [2]connState{connOpen, connOpen}
	for i := range ns.nodes {
		used = used || ns.down[i] || (i > 0 && ns.nodes[i] != nil)
	}
	if !used {
		return snap, nil
	}
	others := &NodesSnapshot{Down: append([]bool(nil), ns.down[:]...), Conns: make([]connState, 0, 2*MaxNodes)}
	for _, c := range ns.conns {
		others.Conns = append(others.Conns, c[0], c[1])
	}
	if ns.store != nil {
		others.Storage = *ns.store
	}
	for i, b := range ns.nodes[1:] {
		if b == nil {
			continue
		}
		s, err := b.Snapshot()
		if err != nil {
			return Snapshot{}, fmt.Errorf("snapshot node %d: %w", i+2, err)
		}
		others.Others = append(others.Others, NodeSnapshot{Node: i + 2, Snapshot: s})
	}
	snap.Nodes = others
	return snap, nil
}

func (ns *nodeSet) Writes() uint64 {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	w := ns.writes
	for _, b := range ns.nodes {
		if b != nil {
			w += b.Writes()
		}
	}
	return w
}

func (ns *nodeSet) Compact() {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	for _, b := range ns.nodes {
		if b != nil {
			b.Compact()
		}
	}
}

func (ns *nodeSet) Close() {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	ns.closed = true
	for _, b := range ns.nodes {
		if b != nil {
			b.Close()
		}
	}
}

// NodesSnapshot is the part of a learner's Snapshot beyond node 1: the
// other nodes they used, which nodes are stopped, and the storage.
type NodesSnapshot struct {
	// Others are the nodes from 2 to MaxNodes that were used, in order.
	Others []NodeSnapshot `json:"others"`
	// Down says which nodes are stopped, node 1 first.
	Down    []bool       `json:"down"`
	Storage StorageState `json:"storage"`
	// Conns are the clients' connections, A's and B's for each node in
	// turn, as a nodeSet keeps them.
	Conns []connState `json:"conns"`
}

// size is the data of all nodes and the storage, as last reported.
func (ns *nodeSet) size() int {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	return ns.total()
}

// NodeSnapshot is one node of NodesSnapshot.
type NodeSnapshot struct {
	Node     int      `json:"node"`
	Snapshot Snapshot `json:"snapshot"`
}
