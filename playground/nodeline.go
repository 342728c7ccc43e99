package playground

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// nodeUsage is the help of the terminal's node lines.
const nodeUsage = "(the playground's node lines: node N stop, node N start [persist], node N restart [persist], node N clock +MS or -MS, and nodes; N is 1 to 5)"

// nodeLine answers the terminal's own lines about nodes, which the
// playground answers itself as redis-cli answers help or clear: "node 3
// stop", "node 3 restart persist", "node 3 clock +31000", "nodes". ok is
// false for any other line.
func (ns *nodeSet) nodeLine(client Client, line string) (res Result, ok bool, err error) {
	if s := strings.TrimLeft(line, " \t"); len(s) < 4 || !strings.EqualFold(s[:4], "node") {
		return Result{}, false, nil // most lines: read no further
	}
	argv, terr := Tokenize(line)
	if terr != nil || len(argv) == 0 {
		return Result{}, false, nil
	}
	switch name := strings.ToLower(argv[0]); {
	case name == "nodes" && len(argv) == 1:
		return ns.answer(client, nodesText(ns.infoLocked())), true, nil
	case name != "node":
		return Result{}, false, nil
	}
	op, n, msg := parseNodeLine(argv[1:])
	if msg != "" {
		return ns.answer(client, msg), true, nil
	}
	c, err := ns.controlLocked(n, op)
	if err != nil {
		return ns.answer(client, fmt.Sprintf("(the node line failed: %v)", err)), true, nil
	}
	return ns.answer(client, strings.Join(append([]string{c.Text}, ExpiredLines(c.Expired)...), "\n")), true, nil
}

// parseNodeLine reads "N action [persist | ±MS]"; msg says what is wrong.
func parseNodeLine(args []string) (op NodeOp, n int, msg string) {
	if len(args) < 2 || len(args) > 3 {
		return op, 0, nodeUsage
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 1 || n > MaxNodes {
		return op, 0, nodeUsage
	}
	op.Action = NodeAction(strings.ToLower(args[1]))
	switch op.Action {
	case NodeStop:
		if len(args) == 3 {
			return op, 0, nodeUsage
		}
	case NodeStart, NodeRestart:
		if len(args) == 3 {
			if !strings.EqualFold(args[2], "persist") {
				return op, 0, nodeUsage
			}
			op.Persist = true
		}
	case NodeClock:
		if len(args) != 3 || (args[2][0] != '+' && args[2][0] != '-') {
			return op, 0, nodeUsage
		}
		ms, err := strconv.ParseInt(args[2], 10, 64)
		if err != nil || ms == 0 || ms > int64(maxNodeJump/time.Millisecond) || -ms > int64(maxNodeJump/time.Millisecond) {
			return op, 0, "(a node's clock jumps by 1 to 86400000 ms, forward (+) or back (-))"
		}
		op.Jump = time.Duration(ms) * time.Millisecond
	default:
		return op, 0, nodeUsage
	}
	return op, n, ""
}

// maxNodeJump bounds a clock jump typed in the terminal, as the clock
// buttons' API does: a day.
const maxNodeJump = 24 * time.Hour

// ExpiredLines are the transcript's lines for keys that expired in a
// clock move: "lock:invoice:7 expired" for each of the first ten, then
// how many more, so that a thousand keys with one TTL do not fill the
// transcript.
func ExpiredLines(keys []string) []string {
	const named = 10
	var out []string
	for i, k := range keys {
		if i == named {
			return append(out, fmt.Sprintf("and %d more keys expired", len(keys)-i))
		}
		out = append(out, k+" expired")
	}
	return out
}

// nodesText describes the nodes for the terminal's "nodes" line.
func nodesText(info []NodeInfo) string {
	var b strings.Builder
	for i, n := range info {
		if i > 0 {
			b.WriteByte('\n')
		}
		state := n.State()
		if !n.Used && n.Up {
			state += " yet (it starts when a line uses it)"
		}
		fmt.Fprintf(&b, "node %d: %s", n.Node, state)
		if n.SkewMS != 0 {
			fmt.Fprintf(&b, ", clock %+d ms from node 1's", n.SkewMS)
		}
	}
	return b.String()
}
