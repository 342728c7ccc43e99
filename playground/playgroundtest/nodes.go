package playgroundtest

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/fakeclock"
	"github.com/locklab/locklab/playground"
)

// runNodes checks a learner's five nodes and the storage service: lines
// sent to one node, to all of them, nodes stopped, started with and
// without their data, clocks that jump, and the shared data limit.
func runNodes(t *testing.T, start func(*testing.T, playground.Options) (*tester, *fakeclock.Clock)) {
	ctx := context.Background()
	node := func(t *testing.T, p *tester, n int, op playground.NodeOp) playground.NodeChange {
		t.Helper()
		c, err := p.p.Node(ctx, "ada", n, op)
		if err != nil {
			t.Fatalf("Node(%d, %+v): %v", n, op, err)
		}
		return c
	}

	t.Run("OwnKeys", func(t *testing.T) {
		p, _ := start(t, playground.Options{})
		p.steps([]step{
			{"ada", playground.ClientA, "@3 SET k three", "OK"},
			{"ada", playground.ClientA, "GET k", "(nil)"},
			{"ada", playground.ClientB, "@3 GET k", `"three"`},
			{"ada", playground.ClientA, "  @1   SET k one", "OK"},
			{"ada", playground.ClientA, "@3 DBSIZE", "(integer) 1"},
			{"ada", playground.ClientA, "@9 PING", `(the playground's targets are @1 to @5, @all and @storage; "@9" is none of them)`},
		})
		keys, err := p.p.Keys("ada")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, k := range keys {
			got = append(got, k.Key+"@"+string(rune('0'+k.Node))+"="+k.Value)
		}
		if want := `k@1="one" k@3="three"`; strings.Join(got, " ") != want {
			t.Errorf("Keys = %q; want %q", strings.Join(got, " "), want)
		}
		info, err := p.p.Nodes("ada")
		if err != nil || len(info) != playground.MaxNodes || !info[2].Used || info[1].Used || !info[2].Up {
			t.Errorf("Nodes = %+v, %v; want node 3 used and up, node 2 unused", info, err)
		}
	})

	t.Run("StopStart", func(t *testing.T) {
		p, _ := start(t, playground.Options{})
		p.steps([]step{
			{"ada", playground.ClientA, "@2 SET lock tok NX PX 30000", "OK"},
			{"ada", playground.ClientA, "@2 SCRIPT LOAD \"return 1\"", `"e0e1f9fabfc9d4800c877a703b823ac0578ff8db"`},
		})
		node(t, p, 2, playground.NodeOp{Action: playground.NodeStop})
		p.steps([]step{
			// As redis-cli: the connection A had open was closed by the
			// stop, which its next line finds; the one after connects
			// again, and is refused. B never connected to node 2.
			{"ada", playground.ClientA, "@2 GET lock", "Error: Server closed the connection"},
			{"ada", playground.ClientA, "@2 GET lock", "Could not connect to Redis at node 2: Connection refused"},
			{"ada", playground.ClientB, "@2 GET lock", "Could not connect to Redis at node 2: Connection refused"},
			{"ada", playground.ClientA, "GET lock", "(nil)"},
		})
		if info, _ := p.p.Nodes("ada"); info[1].Up {
			t.Errorf("node 2 after stop: %+v; want down", info[1])
		}
		node(t, p, 2, playground.NodeOp{Action: playground.NodeStart, Persist: true})
		p.steps([]step{
			{"ada", playground.ClientA, "@2 GET lock", `"tok"`},
			{"ada", playground.ClientB, "@2 PING", "PONG"},
			{"ada", playground.ClientA, "@2 EVALSHA e0e1f9fabfc9d4800c877a703b823ac0578ff8db 0", "(error) NOSCRIPT No matching script. Please use EVAL."},
		})
		node(t, p, 2, playground.NodeOp{Action: playground.NodeRestart})
		p.steps([]step{
			{"ada", playground.ClientB, "@2 GET lock", "Error: Server closed the connection"},
			{"ada", playground.ClientB, "@2 GET lock", "(nil)"},
			{"ada", playground.ClientB, "@2 SET lock other NX PX 30000", "OK"},
		})
		if _, err := p.p.Node(ctx, "ada", 6, playground.NodeOp{Action: playground.NodeStop}); !errors.Is(err, playground.ErrUnknownNode) {
			t.Errorf("Node(6) error = %v; want ErrUnknownNode", err)
		}
		if _, err := p.p.Node(ctx, "ada", 1, playground.NodeOp{Action: "explode"}); !errors.Is(err, playground.ErrBadNodeAction) {
			t.Errorf("Node(explode) error = %v; want ErrBadNodeAction", err)
		}
	})

	t.Run("ClockJump", func(t *testing.T) {
		p, clock := start(t, playground.Options{})
		p.exec("ada", playground.ClientA, "@all SET lock a NX PX 30000") // checked in All
		c := node(t, p, 3, playground.NodeOp{Action: playground.NodeClock, Jump: 31 * time.Second})
		if len(c.Expired) != 1 || c.Expired[0] != "lock" {
			t.Errorf("jump of node 3 expired %q; want [lock]", c.Expired)
		}
		p.steps([]step{
			{"ada", playground.ClientB, "@3 SET lock b NX PX 30000", "OK"},
			{"ada", playground.ClientB, "@1 SET lock b NX PX 30000", "(nil)"},
			{"ada", playground.ClientA, "@2 PTTL lock", "(integer) 30000"},
		})
		if info, _ := p.p.Nodes("ada"); info[2].SkewMS != 31000 || info[1].SkewMS != 0 {
			t.Errorf("skews after the jump: node 3 %d, node 2 %d; want 31000 and 0", info[2].SkewMS, info[1].SkewMS)
		}
		node(t, p, 2, playground.NodeOp{Action: playground.NodeClock, Jump: -10 * time.Second})
		p.steps([]step{{"ada", playground.ClientA, "@2 PTTL lock", "(integer) 40000"}})
		clock.Add(35 * time.Second)
		p.steps([]step{
			{"ada", playground.ClientA, "@1 EXISTS lock", "(integer) 0"},
			{"ada", playground.ClientA, "@2 PTTL lock", "(integer) 5000"},
		})
		if _, err := p.p.Node(ctx, "ada", 2, playground.NodeOp{Action: playground.NodeClock}); !errors.Is(err, playground.ErrBadAdvance) {
			t.Errorf("a jump of 0 error = %v; want ErrBadAdvance", err)
		}
	})

	t.Run("All", func(t *testing.T) {
		p, _ := start(t, playground.Options{})
		res := p.exec("ada", playground.ClientA, "@all SET lock a NX PX 30000")
		ok := regexp.MustCompile(`^@1 \([0-9.]+ ms\) OK\n@2 \([0-9.]+ ms\) OK\n@3 \([0-9.]+ ms\) OK\n@4 \([0-9.]+ ms\) OK\n@5 \([0-9.]+ ms\) OK\n` +
			`Redlock: 5 of 5 nodes said OK, a majority \(3 needed\): the lock is held for [0-9.]+ ms = TTL 30000 ms − [0-9.]+ ms spent − 302 ms drift allowance, 1% of the TTL plus 2 ms \(drift factor 0\.01\)\.$`)
		if !ok.MatchString(res.Output) {
			t.Errorf("@all acquire =\n%s\nwant it to match %s", res.Output, ok)
		}
		node(t, p, 4, playground.NodeOp{Action: playground.NodeStop})
		node(t, p, 5, playground.NodeOp{Action: playground.NodeStop})
		p.steps([]step{{"ada", playground.ClientA, "@3 DEL lock", "(integer) 1"}})
		res = p.exec("ada", playground.ClientB, "@all SET lock b NX PX 30000")
		lost := regexp.MustCompile(`^@1 \([0-9.]+ ms\) \(nil\)\n@2 \([0-9.]+ ms\) \(nil\)\n@3 \([0-9.]+ ms\) OK\n` +
			`@4 Could not connect to Redis at node 4: Connection refused\n@5 Could not connect to Redis at node 5: Connection refused\n` +
			`Redlock: 1 of 5 nodes said OK, fewer than the majority of 3: the lock is not held; release it on every node and retry later\.$`)
		if !lost.MatchString(res.Output) {
			t.Errorf("@all acquire on a minority =\n%s\nwant it to match %s", res.Output, lost)
		}
		res = p.exec("ada", playground.ClientB, "@all MGET lock x")
		if want := regexp.MustCompile(`^@1 \([0-9.]+ ms\)\n1\) "a"\n2\) \(nil\)\n@2`); !want.MatchString(res.Output) {
			t.Errorf("@all MGET =\n%s\nwant a reply of several lines under its node", res.Output)
		}
	})

	t.Run("AllDeadline", func(t *testing.T) {
		p, _ := start(t, playground.Options{Limits: playground.Limits{Script: scriptLimits()}})
		res, _ := p.p.Exec(ctx, "ada", playground.ClientA, "@all "+spin)
		if strings.Count(res.Output, "stopped the script after 100ms") != 1 || strings.Count(res.Output, "(not sent: this line used up its 100ms)") != 4 {
			t.Errorf("@all spin =\n%s\nwant one stopped script and four nodes not sent", res.Output)
		}
		p.steps([]step{{"ada", playground.ClientB, "@5 PING", "PONG"}})
	})

	t.Run("Storage", func(t *testing.T) {
		p, _ := start(t, playground.Options{})
		p.steps([]step{
			{"ada", playground.ClientA, "@storage READ", "(empty: nothing written yet)"},
			{"ada", playground.ClientA, "@storage WRITE 34 \"invoice v2\"", "accepted"},
			{"ada", playground.ClientB, "@storage WRITE 33 stale", "rejected: token 33 is lower than 34, which it has already seen"},
			{"ada", playground.ClientB, "@storage write 34 again", "accepted"},
			{"ada", playground.ClientA, "@storage READ", `"again" (written with token 34)`},
			{"ada", playground.ClientA, "@storage WRITE x y", `rejected: the token must be a whole number of 0 or more, not "x"`},
		})
		if res := p.exec("ada", playground.ClientA, "@storage DEL x"); !strings.Contains(res.Output, "not Redis") {
			t.Errorf("@storage DEL = %q; want the service's own help, which says it is not Redis", res.Output)
		}
	})

	t.Run("SharedLimit", func(t *testing.T) {
		// The nodes share one sandbox's room: 68 KiB here, of data and
		// scripts together.
		p, _ := start(t, playground.Options{Limits: playground.Limits{MaxDataBytes: 64 << 10, ScriptCacheBytes: 4 << 10}})
		big := strings.Repeat("x", 40<<10)
		p.steps([]step{{"ada", playground.ClientA, "@2 SET big " + big, "OK"}})
		res, err := p.p.Exec(ctx, "ada", playground.ClientA, "@3 SET big "+big)
		if !errors.Is(err, playground.ErrLimit) || !strings.Contains(res.Output, "full") {
			t.Errorf("a second 40 KiB value on another node = %q, %v; want the learner's room shared by their nodes", res.Output, err)
		}
		node(t, p, 2, playground.NodeOp{Action: playground.NodeRestart})
		p.steps([]step{{"ada", playground.ClientA, "@3 SET big " + big, "OK"}})
	})

	t.Run("ResetAll", func(t *testing.T) {
		p, _ := start(t, playground.Options{})
		p.steps([]step{{"ada", playground.ClientA, "@4 SET k v", "OK"}, {"ada", playground.ClientA, "@storage WRITE 1 x", "accepted"}})
		node(t, p, 5, playground.NodeOp{Action: playground.NodeStop})
		if err := p.p.Reset("ada"); err != nil {
			t.Fatal(err)
		}
		p.steps([]step{
			{"ada", playground.ClientA, "@4 GET k", "(nil)"},
			{"ada", playground.ClientA, "@5 PING", "PONG"},
			{"ada", playground.ClientA, "@storage READ", "(empty: nothing written yet)"},
		})
	})
}

// runNodeLines checks the terminal's own node lines.
func runNodeLines(t *testing.T, start func(*testing.T, playground.Options) (*tester, *fakeclock.Clock)) {
	p, _ := start(t, playground.Options{})
	p.steps([]step{
		{"ada", playground.ClientA, "@2 SET lock a NX PX 30000", "OK"},
		{"ada", playground.ClientA, "node 2 stop", "Node 2 stopped: it refuses connections until you start it."},
		{"ada", playground.ClientA, "@2 GET lock", "Error: Server closed the connection"},
		{"ada", playground.ClientA, "@2 GET lock", "Could not connect to Redis at node 2: Connection refused"},
		{"ada", playground.ClientA, "NODE 2 start persist", "Node 2 started again from its append-only file: its keys are back, TTLs still running; cached scripts and client connections are gone."},
		{"ada", playground.ClientA, "node 2 clock +31000", "Node 2's clock jumped 31000 ms ahead; no other node's moved.\nlock expired"},
		{"ada", playground.ClientA, "nodes", "node 1: running\nnode 2: running, clock +31000 ms from node 1's\nnode 3: not started yet (it starts when a line uses it)\nnode 4: not started yet (it starts when a line uses it)\nnode 5: not started yet (it starts when a line uses it)"},
		{"ada", playground.ClientA, "node 6 stop", "(the playground's node lines: node N stop, node N start [persist], node N restart [persist], node N clock +MS or -MS, and nodes; N is 1 to 5)"},
		{"ada", playground.ClientA, "node 2 clock 5", "(the playground's node lines: node N stop, node N start [persist], node N restart [persist], node N clock +MS or -MS, and nodes; N is 1 to 5)"},
		{"ada", playground.ClientA, "node 2 clock +99999999999", "(a node's clock jumps by 1 to 86400000 ms, forward (+) or back (-))"},
		{"ada", playground.ClientA, "nodex", "(error) ERR unknown command 'nodex', with args beginning with: "},
	})
}

// runPersistKeepsTheVote checks the lesson's claim: node 3 restarted from
// its append-only file keeps A's key, so B gets two votes, not three.
func runPersistKeepsTheVote(t *testing.T, start func(*testing.T, playground.Options) (*tester, *fakeclock.Clock)) {
	p, _ := start(t, playground.Options{})
	for _, line := range []string{"node 4 stop", "node 5 stop", "@all SET lock:backup a71c NX PX 60000", "node 3 restart persist", "node 4 start", "node 5 start"} {
		p.exec("ada", playground.ClientA, line)
	}
	res := p.exec("ada", playground.ClientB, "@all SET lock:backup 4be0 NX PX 60000")
	if !strings.Contains(res.Output, "Redlock: 2 of 5 nodes said OK, fewer than the majority of 3") {
		t.Errorf("B after node 3 restarted with its data =\n%s\nwant 2 votes of 5", res.Output)
	}
}
