package playground

import (
	"fmt"
	"time"
)

// NodeAction is what a learner does to one of their nodes, as an
// operator would to a Redis server.
type NodeAction string

// The node actions.
const (
	// NodeStop stops the node: it refuses connections until started.
	NodeStop NodeAction = "stop"
	// NodeStart starts a stopped node.
	NodeStart NodeAction = "start"
	// NodeRestart stops the node and starts it again at once.
	NodeRestart NodeAction = "restart"
	// NodeClock makes the node's clock jump, forward or back, and no
	// other node's.
	NodeClock NodeAction = "clock"
)

// NodeOp is one action on a node.
type NodeOp struct {
	Action NodeAction
	// Persist, for start and restart, says that the node comes back with
	// its data, as Redis with AOF and appendfsync always does after a
	// crash; otherwise it comes back empty, as Redis without persistence
	// (or with fsync once a second, after a power cut) may. Either way it
	// loses its script cache and its clients' connections, as a restarted
	// Redis does; function libraries are data and persist with it.
	Persist bool
	// Jump is how far NodeClock moves the node's clock.
	Jump time.Duration
}

// NodeInfo is one node as the inspector shows it.
type NodeInfo struct {
	Node int  `json:"node"`
	Used bool `json:"used"` // started at least once
	Up   bool `json:"up"`
	// SkewMS is how far the node's clock is ahead of node 1's (behind,
	// if negative), in milliseconds.
	SkewMS int64 `json:"skew_ms"`
}

// State names the node's state as learners read it: "running",
// "stopped" or "not started".
func (n NodeInfo) State() string {
	switch {
	case !n.Up:
		return "stopped"
	case !n.Used:
		return "not started"
	}
	return "running"
}

// NodeChange is what a node action did.
type NodeChange struct {
	// Text says it in a sentence for the transcript.
	Text string
	// Expired names the keys whose TTL ran out in a clock jump.
	Expired []string
	Nodes   []NodeInfo
}

// control applies op to node n.
func (ns *nodeSet) control(n int, op NodeOp) (NodeChange, error) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	return ns.controlLocked(n, op)
}

// controlLocked is control with ns.mu held.
func (ns *nodeSet) controlLocked(n int, op NodeOp) (NodeChange, error) {
	if ns.closed {
		return NodeChange{}, ErrClosed
	}
	if n < 1 || n > MaxNodes {
		return NodeChange{}, fmt.Errorf("node %d: %w", n, ErrUnknownNode)
	}
	var c NodeChange
	var err error
	switch op.Action {
	case NodeStop:
		c.Text = fmt.Sprintf("Node %d is already stopped.", n)
		if !ns.down[n-1] {
			ns.down[n-1] = true
			ns.dropConns(n)
			ns.writes++
			c.Text = fmt.Sprintf("Node %d stopped: it refuses connections until you start it.", n)
		}
	case NodeStart:
		c.Text = fmt.Sprintf("Node %d is already running.", n)
		if ns.down[n-1] {
			c.Text, err = ns.comeBack(n, op.Persist)
		}
	case NodeRestart:
		c.Text, err = ns.comeBack(n, op.Persist)
	case NodeClock:
		c, err = ns.jump(n, op.Jump)
	default:
		return NodeChange{}, fmt.Errorf("node action %q: %w", op.Action, ErrBadNodeAction)
	}
	if err != nil {
		return NodeChange{}, err
	}
	c.Nodes = ns.infoLocked()
	return c, nil
}

// comeBack starts node n after a stop: with its data if persist is set,
// else empty; with no cached scripts and no client state either way. Its
// clock is the machine's and keeps its time.
func (ns *nodeSet) comeBack(n int, persist bool) (string, error) {
	b, err := ns.node(n)
	if err != nil {
		return "", err
	}
	snap, err := b.Snapshot()
	if err != nil {
		return "", err
	}
	snap.Scripts = nil
	text := fmt.Sprintf("Node %d started again from its append-only file: its keys are back, TTLs still running; cached scripts and client connections are gone.", n)
	if !persist {
		snap = Snapshot{Offset: snap.Offset}
		text = fmt.Sprintf("Node %d started again without persistence: it is empty, as if it had never seen a key.", n)
	}
	if _, err := ns.start(n, &snap); err != nil {
		return "", err
	}
	ns.down[n-1] = false
	ns.dropConns(n)
	return text, nil
}

// jump moves node n's clock by d: forward through its Advance, which
// expires the keys whose TTL runs out; back by starting the node again
// from its own state with the clock set back and every TTL longer by as
// much, as a Redis whose clock is set back keeps its keys' expiry times.
func (ns *nodeSet) jump(n int, d time.Duration) (NodeChange, error) {
	if lim := ns.cfg.limits.MaxAdvance; d == 0 || d > lim || -d > lim {
		return NodeChange{}, fmt.Errorf("jump node %d's clock by %v: %w", n, d, ErrBadAdvance)
	}
	b, err := ns.node(n)
	if err != nil {
		return NodeChange{}, err
	}
	c := NodeChange{Expired: []string{}}
	if d > 0 {
		a, err := b.Advance(d)
		if err != nil {
			return NodeChange{}, err
		}
		c.Expired = a.Expired
		c.Text = fmt.Sprintf("Node %d's clock jumped %s ahead; no other node's moved.", n, msText(d))
		return c, nil
	}
	snap, err := b.Snapshot()
	if err != nil {
		return NodeChange{}, err
	}
	snap.Offset += d
	for i := range snap.Keys {
		if snap.Keys[i].PTTLMS > 0 {
			snap.Keys[i].PTTLMS -= d.Milliseconds()
		}
	}
	down := ns.down[n-1]
	if _, err := ns.start(n, &snap); err != nil {
		return NodeChange{}, err
	}
	ns.down[n-1] = down
	c.Text = fmt.Sprintf("Node %d's clock jumped %s back; its keys' TTLs are longer by as much.", n, msText(-d))
	return c, nil
}

// FreshNodes describes the nodes of a learner who has no sandbox yet:
// node 1 running, the others not started.
func FreshNodes() []NodeInfo {
	out := make([]NodeInfo, MaxNodes)
	for i := range out {
		out[i] = NodeInfo{Node: i + 1, Used: i == 0, Up: true}
	}
	return out
}

// infoLocked describes every node.
func (ns *nodeSet) infoLocked() []NodeInfo {
	base := ns.nodes[0].Now()
	out := make([]NodeInfo, MaxNodes)
	for i, b := range ns.nodes {
		out[i] = NodeInfo{Node: i + 1, Used: b != nil, Up: !ns.down[i]}
		if b != nil {
			out[i].SkewMS = b.Now().Sub(base).Milliseconds()
		}
	}
	return out
}

// info describes every node.
func (ns *nodeSet) info() ([]NodeInfo, error) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if ns.closed {
		return nil, ErrClosed
	}
	return ns.infoLocked(), nil
}
