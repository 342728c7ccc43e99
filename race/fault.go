package race

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/sim"
)

// FaultKind is what a Fault does.
type FaultKind string

// The fault kinds. What ARG means in the text form
// KIND:TARGET:AT_MS:ARG depends on the kind:
//
//	pause:CLIENT:AT_MS:MS            the client freezes for MS ms (a GC pause);
//	                                 its work resumes where it stopped, its
//	                                 timers fire late, as soon as it runs again
//	crash:NODE:AT_MS:MS              the node crashes and restarts MS ms later,
//	                                 empty (data only in memory)
//	crash:NODE:AT_MS:MS-persist      the same, but it restarts with its data
//	                                 (AOF with fsync always); keys whose TTL ran
//	                                 out meanwhile are gone
//	crash:CLIENT:AT_MS:0             the client's process dies: it never runs
//	                                 again, and releases nothing
//	clock-jump:NODE:AT_MS:MS         the node's clock jumps MS ms ahead
//	clock-back:NODE:AT_MS:MS         the node's clock jumps MS ms back
//	delay:CLIENT:AT_MS:MS            the first Redis reply the client waits for
//	                                 at or after AT_MS arrives MS ms late
//	delay:NODE:AT_MS:MS              the first reply the node sends at or after
//	                                 AT_MS arrives MS ms late
//
// CLIENT is client1, client2 or client3; NODE is redis (the single Redis,
// or whichever node is the primary at AT_MS in the failover scenario) or
// node1..node5. Info.Targets lists the targets a scenario has. MS and AT_MS
// are whole milliseconds, at most MaxDuration.
const (
	FaultPause     FaultKind = "pause"
	FaultCrash     FaultKind = "crash"
	FaultClockJump FaultKind = "clock-jump"
	FaultClockBack FaultKind = "clock-back"
	FaultDelay     FaultKind = "delay"
)

// persistSuffix marks a crash whose node keeps its data.
const persistSuffix = "-persist"

// MaxFaults is how many faults a run accepts.
const MaxFaults = 20

// MaxFaultText is the longest text form ParseFault reads; the longest
// valid fault, "clock-jump:client1:600000:600000-persist", is shorter.
const MaxFaultText = 64

// Fault is a failure added to a scenario at a virtual time. Its text form
// (String, ParseFault) is the fault= parameter of a race URL.
type Fault struct {
	Kind    FaultKind
	Target  string        // client1..client3, redis, node1..node5
	At      time.Duration // when, since the start of the run
	Length  time.Duration // pause length, downtime, clock jump or delay
	Persist bool          // crash only: the node restarts with its data
}

// String returns the fault as KIND:TARGET:AT_MS:ARG.
func (f Fault) String() string {
	arg := strconv.FormatInt(f.Length.Milliseconds(), 10)
	if f.Persist {
		arg += persistSuffix
	}
	return fmt.Sprintf("%s:%s:%d:%s", f.Kind, f.Target, f.At.Milliseconds(), arg)
}

// MarshalText writes the text form, so that JSON shows "pause:client1:0:500".
func (f Fault) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// UnmarshalText reads the text form and validates it.
func (f *Fault) UnmarshalText(b []byte) error {
	g, err := ParseFault(string(b))
	if err != nil {
		return err
	}
	*f = g
	return nil
}

// ParseFault reads KIND:TARGET:AT_MS:ARG (see FaultKind) and validates it.
// Errors wrap ErrBadParams and say what is wrong and what is allowed.
func ParseFault(s string) (Fault, error) {
	if len(s) > MaxFaultText {
		return Fault{}, fmt.Errorf("fault of %d bytes: at most %d: %w", len(s), MaxFaultText, ErrBadParams)
	}
	parts := strings.Split(s, ":")
	if len(parts) != 4 {
		return Fault{}, fmt.Errorf("fault %q: want KIND:TARGET:AT_MS:ARG, such as pause:client1:1000:15000: %w", s, ErrBadParams)
	}
	f := Fault{Kind: FaultKind(parts[0]), Target: parts[1]}
	at, err := faultMS(parts[2])
	if err != nil {
		return Fault{}, fmt.Errorf("fault %q: AT_MS %v: %w", s, err, ErrBadParams)
	}
	f.At = at
	arg := parts[3]
	if f.Kind == FaultCrash {
		arg, f.Persist = strings.CutSuffix(arg, persistSuffix)
	}
	n, err := faultMS(arg)
	if err != nil {
		return Fault{}, fmt.Errorf("fault %q: ARG %v: %w", s, err, ErrBadParams)
	}
	f.Length = n
	if err := f.Validate(); err != nil {
		return Fault{}, fmt.Errorf("fault %q: %w", s, err)
	}
	return f, nil
}

// faultMS reads whole milliseconds in [0, MaxDuration].
func faultMS(s string) (time.Duration, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a whole number of milliseconds", s)
	}
	if n > MaxDuration.Milliseconds() {
		return 0, fmt.Errorf("%d is over the maximum of %d ms", n, MaxDuration.Milliseconds())
	}
	return time.Duration(n) * time.Millisecond, nil
}

// Validate checks the kind, the target for that kind and the durations.
// Whether the target exists in a given scenario (node5 in a one-node run)
// is checked by Run.
func (f Fault) Validate() error {
	client := isClientTarget(f.Target)
	node := isNodeTarget(f.Target)
	switch f.Kind {
	case FaultPause:
		if !client {
			return fmt.Errorf("pause target %q: must be client1, client2 or client3: %w", f.Target, ErrBadParams)
		}
	case FaultCrash:
		if !client && !node {
			return fmt.Errorf("crash target %q: must be client1..client3, redis or node1..node5: %w", f.Target, ErrBadParams)
		}
		if client && f.Persist {
			return fmt.Errorf("crash of %s: a client has no data to keep; %s is for a node: %w", f.Target, persistSuffix, ErrBadParams)
		}
	case FaultClockJump, FaultClockBack:
		if !node {
			return fmt.Errorf("%s target %q: must be redis or node1..node5: %w", f.Kind, f.Target, ErrBadParams)
		}
	case FaultDelay:
		if !client && !node {
			return fmt.Errorf("delay target %q: must be client1..client3, redis or node1..node5: %w", f.Target, ErrBadParams)
		}
	default:
		return fmt.Errorf("kind %q: must be pause, crash, clock-jump, clock-back or delay: %w", f.Kind, ErrBadParams)
	}
	if f.Persist && f.Kind != FaultCrash {
		return fmt.Errorf("%s: only a crash takes %s: %w", f.Kind, persistSuffix, ErrBadParams)
	}
	for _, d := range []time.Duration{f.At, f.Length} {
		if d < 0 || d > MaxDuration || d%time.Millisecond != 0 {
			return fmt.Errorf("%v: must be whole milliseconds between 0 and %d: %w", d, MaxDuration.Milliseconds(), ErrBadParams)
		}
	}
	if f.Length == 0 && f.Kind != FaultCrash {
		return fmt.Errorf("%s of 0 ms does nothing; give ARG in milliseconds: %w", f.Kind, ErrBadParams)
	}
	return nil
}

func isClientTarget(t string) bool {
	return t == "client1" || t == "client2" || t == "client3"
}

func isNodeTarget(t string) bool {
	return t == "redis" || (len(t) == 5 && strings.HasPrefix(t, "node") && t[4] >= '1' && t[4] <= '5')
}

// nodeIndex is the 0-based node a target names: redis is the first.
func nodeIndex(t string) int {
	if t == "redis" {
		return 0
	}
	return int(t[4] - '1')
}

// clientIndex is the 0-based client a target names.
func clientIndex(t string) int { return int(t[6] - '1') }

// addFaults checks that each fault's target exists in the run and
// schedules it.
func (s *runner) addFaults(id string, faults []Fault) error {
	for _, f := range faults {
		switch {
		case isClientTarget(f.Target) && clientIndex(f.Target) >= len(s.clients):
			return fmt.Errorf("fault %q: scenario %q has %d clients: %w", f, id, len(s.clients), ErrBadParams)
		case f.Target == "redis" && s.redlock:
			return fmt.Errorf("fault %q: scenario %q has %d Redis nodes: name one, node1..node%d: %w", f, id, len(s.nodes), len(s.nodes), ErrBadParams)
		case isNodeTarget(f.Target) && nodeIndex(f.Target) >= len(s.nodes):
			return fmt.Errorf("fault %q: scenario %q has only %s: %w", f, id, nodeCount(len(s.nodes)), ErrBadParams)
		}
		// A fault comes before the scenario's own steps at the same
		// time, in the order given: a pause at 0 catches a client
		// before its first attempt.
		s.q.First(f.At, func() { s.applyFault(f) })
	}
	return nil
}

func nodeCount(n int) string {
	if n == 1 {
		return "one Redis node: use redis or node1"
	}
	return fmt.Sprintf("%d Redis nodes", n)
}

// applyFault makes f happen now.
func (s *runner) applyFault(f Fault) {
	switch f.Kind {
	case FaultPause:
		c := s.clients[clientIndex(f.Target)]
		s.pauseClient(c, f.Length)
	case FaultCrash:
		if isClientTarget(f.Target) {
			s.crashClient(s.clients[clientIndex(f.Target)])
			return
		}
		n := s.faultNode(f.Target)
		if !n.up {
			s.emit(Event{Actor: s.nodeActor(n), Kind: KindCrash, Text: fmt.Sprintf("%s is already down; this crash changes nothing.", sim.Capital(s.nodeName(n)))})
			return
		}
		s.crash(n, f.Persist)
		id := n.restarts
		s.at(s.now+f.Length, func() {
			if n.restarts == id && !n.up {
				s.restart(n, f.Persist)
			}
		})
	case FaultClockJump:
		s.clockJump(s.faultNode(f.Target), f.Length)
	case FaultClockBack:
		s.clockJump(s.faultNode(f.Target), -f.Length)
	case FaultDelay:
		s.delays.arm(f.Target, f.Length)
	}
}

// faultNode is the node a fault's target names; redis is the single node,
// or the current primary.
func (s *runner) faultNode(target string) *node {
	if target == "redis" && s.failover != nil {
		return s.failover.primary
	}
	return s.nodes[nodeIndex(target)]
}

// delays are the delay faults that have come due and not yet hit a reply,
// and the delay of the call in progress. The lock package may call the
// nodes of a Redlock from several goroutines, hence the lock.
type delays struct {
	mu    sync.Mutex
	armed []armedDelay
	got   time.Duration // the longest delay the call in progress waits for
	nodes []int         // the nodes whose replies were late in it
}

type armedDelay struct {
	target string
	d      time.Duration
	used   bool // a client's delay hits every reply of one call
}

func (d *delays) arm(target string, length time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.armed = append(d.armed, armedDelay{target: target, d: length})
}

// take returns the delay of a reply from n to c, or 0: the first armed
// delay for n, used up at once, or the first for c, which holds for every
// reply of the call in progress (on all nodes of a Redlock, so that it
// does not depend on which reply comes first) and is used up by end. The
// caller's wait is capped by its timeout.
func (d *delays) take(c *client, n *node, primary bool) time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, a := range d.armed {
		node := a.target == fmt.Sprintf("node%d", n.id) || (a.target == "redis" && primary)
		switch {
		case node:
			d.armed = slices.Delete(d.armed, i, i+1)
		case a.target == c.target():
			d.armed[i].used = true
		default:
			continue
		}
		d.got = max(d.got, min(a.d, c.timeout))
		if !slices.Contains(d.nodes, n.id) {
			d.nodes = append(d.nodes, n.id)
		}
		return a.d
	}
	return 0
}

// extra is how long the call in progress has waited for replies.
func (d *delays) extra() time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.got
}

// end returns the call's wait and the late nodes, and resets them.
func (d *delays) end() (time.Duration, []int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	got, nodes := d.got, d.nodes
	d.got, d.nodes = 0, nil
	d.armed = slices.DeleteFunc(d.armed, func(a armedDelay) bool { return a.used })
	slices.Sort(nodes)
	return got, nodes
}
