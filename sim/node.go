package sim

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/locklab/locklab/playground"
	"github.com/locklab/locklab/resp"
)

// ErrDown is the error of a command sent to a node that is down.
var ErrDown = errors.New("sim: the Redis node is down")

// DownReply is what redis-cli prints when Redis does not answer.
const DownReply = "Could not connect to Redis at 127.0.0.1:6379: Connection refused"

// Node is one Redis of a simulation: a playground sandbox, so that it
// answers exactly as the playground does, on the simulation's clock plus
// the node's own offset (a clock that jumped). It may crash and restart,
// with its data (an append-only file with fsync always) or without.
// Restarts and copies reuse the node's sandboxes: a simulation crashes
// nodes thousands of times, and starting a sandbox (miniredis and a Lua
// VM) costs more than its commands.
type Node struct {
	ID     int
	opts   playground.SandboxOptions
	box    *playground.Sandbox
	copy   *playground.Sandbox // the sandbox of the last Copy, for the next
	offset time.Duration
	saved  *playground.Snapshot // what a node with persistence comes back with
	down   bool
	copied bool // a Copy: its sandbox is its node's
}

// NewNode starts an empty node. opts.Now is the simulation's clock.
func NewNode(id int, opts playground.SandboxOptions) (*Node, error) {
	box, err := playground.NewSandbox(opts)
	if err != nil {
		return nil, fmt.Errorf("sim: start node %d: %w", id, err)
	}
	return &Node{ID: id, opts: opts, box: box}, nil
}

// Up reports whether the node is running.
func (n *Node) Up() bool { return !n.down }

// Offset is how far the node's clock is ahead of true time (negative:
// behind).
func (n *Node) Offset() time.Duration { return n.offset }

// Exec runs one command, given as its arguments, and returns what
// redis-cli would print; ErrDown when the node is down.
func (n *Node) Exec(ctx context.Context, argv []string) (playground.Result, error) {
	if n.down {
		return playground.Result{Output: DownReply}, ErrDown
	}
	return n.box.ExecArgs(ctx, playground.ClientA, argv)
}

// Do runs one command and returns Redis's reply itself, as a client
// library reads it; ErrDown when the node is down.
func (n *Node) Do(ctx context.Context, argv []string) (resp.Value, error) {
	if n.down {
		return resp.Value{}, ErrDown
	}
	return n.box.Do(ctx, playground.ClientA, argv)
}

// Key describes one key as the key inspector does; false when there is
// no such key or the node is down.
func (n *Node) Key(name string) (playground.KeyInfo, bool) {
	if n.down {
		return playground.KeyInfo{}, false
	}
	ki, ok, err := n.box.Key(name)
	return ki, ok && err == nil
}

// Peek reads key k without running a command: its value if it is a
// string, its TTL in milliseconds (-1: none), and whether it exists (never
// while the node is down).
func (n *Node) Peek(k string) (value string, pttlMS int64, ok bool) {
	if n.down {
		return "", 0, false
	}
	return n.box.Peek(k)
}

// Jump moves the node's clock d ahead (or back, for a negative d). Redis
// keeps expiries as Unix times: ahead, keys expire early by true time;
// back, they live longer.
func (n *Node) Jump(d time.Duration) error {
	if !n.down {
		if err := shiftClock(n.box, d); err != nil {
			return err
		}
	}
	n.offset += d
	return nil
}

// shiftClock moves a sandbox's clock by d, forward or back.
func shiftClock(box *playground.Sandbox, d time.Duration) error {
	var err error
	switch {
	case d > 0:
		_, err = box.Advance(d)
	case d < 0:
		err = box.JumpBack(-d)
	}
	if err != nil {
		return fmt.Errorf("sim: set node clock: %w", err)
	}
	return nil
}

// Crash stops the node. With persist it keeps its data (its scripts are
// forgotten, as a restarted Redis's are); without, everything is lost.
func (n *Node) Crash(persist bool) error {
	if n.down {
		return nil
	}
	n.saved = nil
	if persist {
		snap, err := n.box.Snapshot()
		if err != nil {
			return fmt.Errorf("sim: node %d: save data: %w", n.ID, err)
		}
		snap.Scripts = nil
		n.saved = &snap
	}
	n.down = true
	return nil
}

// Restart brings a crashed node back after it was down for down: empty,
// or with the data it saved, less what expired while it was down. Its
// clock is as wrong as it was.
func (n *Node) Restart(down time.Duration) error {
	if !n.down {
		return nil
	}
	var err error
	if n.saved != nil {
		snap := *n.saved
		snap.Offset = 0
		snap.Keys = nil
		for _, k := range n.saved.Keys {
			if k.PTTLMS > 0 {
				if k.PTTLMS -= down.Milliseconds(); k.PTTLMS <= 0 {
					continue
				}
			}
			snap.Keys = append(snap.Keys, k)
		}
		err = n.box.Load(snap)
	} else {
		err = n.box.Empty()
	}
	if err == nil {
		err = shiftClock(n.box, n.offset)
	}
	if err != nil {
		return fmt.Errorf("sim: restart node %d: %w", n.ID, err)
	}
	n.down, n.saved = false, nil
	return nil
}

// Copy returns a running copy of the node's data and clock, for an
// observer's trial that must not change the node. The copy lives until
// the next Copy or Close; its Close does nothing.
func (n *Node) Copy() (*Node, error) {
	if n.down {
		return nil, ErrDown
	}
	snap, err := n.box.Snapshot()
	if err != nil {
		return nil, fmt.Errorf("sim: copy node %d: %w", n.ID, err)
	}
	if n.copy == nil {
		n.copy, err = playground.RestoreSandbox(snap, n.opts)
	} else {
		err = n.copy.Load(snap)
	}
	if err != nil {
		return nil, fmt.Errorf("sim: copy node %d: %w", n.ID, err)
	}
	return &Node{ID: n.ID, opts: n.opts, box: n.copy, offset: n.offset, copied: true}, nil
}

// Reset empties a running node for another simulation on the same clock
// function: no data, no scripts, its clock true.
func (n *Node) Reset() error {
	if n.down {
		n.down, n.saved = false, nil
	}
	if err := n.box.Empty(); err != nil {
		return fmt.Errorf("sim: reset node %d: %w", n.ID, err)
	}
	n.offset = 0
	return nil
}

// Close stops the node for good; a copy's Close leaves its sandbox to the
// node it came from.
func (n *Node) Close() {
	if !n.copied {
		for _, b := range []*playground.Sandbox{n.box, n.copy} {
			if b != nil {
				b.Close()
			}
		}
	}
	n.box, n.copy, n.down = nil, nil, true
}
