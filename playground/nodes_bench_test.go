package playground

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/locklab/locklab/luaredis"
)

// idleLearners is how many learners BenchmarkIdleLearnerMemory gives a
// sandbox in each way: enough that the heap per learner does not depend
// on what else the heap holds.
const idleLearners = 2000

// BenchmarkIdleLearnerMemory measures what a learner who never used nodes
// 2 to 5 costs, beside what one cost before a Manager gave each learner
// five nodes. Each learner types the lesson's acquire once. Three ways are
// measured in the same run, so that the machine and the heap are the
// same for all:
//
//   - sandbox: bare sandboxes, built as a Manager builds one (its shared
//     script cache), plus nothing: a learner before the nodes came, less
//     the Manager's own bookkeeping;
//   - nodeset: each such sandbox as node 1 of the node set that a Manager
//     now keeps per learner, the other nodes not started: the wrapper's
//     cost;
//   - manager: learners of a Manager, the whole cost of one today
//     (sandbox, node set and the Manager's session).
//
// It reports the heap per learner after a GC (B/sandbox, B/nodeset,
// B/manager) and the ratios of nodeset and manager to sandbox.
func BenchmarkIdleLearnerMemory(b *testing.B) {
	var sandbox, nodeset, manager float64
	runs := 0
	for b.Loop() {
		sandbox += learnerBytes(b, idleLearners, sandboxLearners)
		nodeset += learnerBytes(b, idleLearners, nodeSetLearners)
		manager += learnerBytes(b, idleLearners, managerLearners)
		runs++
	}
	r := float64(runs)
	b.ReportMetric(sandbox/r, "B/sandbox")
	b.ReportMetric(nodeset/r, "B/nodeset")
	b.ReportMetric(manager/r, "B/manager")
	b.ReportMetric(nodeset/sandbox, "nodeset/sandbox")
	b.ReportMetric(manager/sandbox, "manager/sandbox")
}

// learnerKind gives n learners a sandbox in one way, has each run line,
// and returns a function that frees them all.
type learnerKind func(tb testing.TB, n int, line string) (free func())

// learnerBytes returns the heap that each of n learners of kind holds
// after running the lesson's acquire.
func learnerBytes(tb testing.TB, n int, kind learnerKind) float64 {
	tb.Helper()
	base := heapAfterGC()
	free := kind(tb, n, acquireLine)
	per := float64(heapAfterGC()-base) / float64(n)
	free()
	return per
}

// heapAfterGC returns the live heap. Two collections: gopher-lua returns
// call-stack segments to a sync.Pool, which lets go of them only at the
// second.
func heapAfterGC() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// sandboxLearners are bare sandboxes sharing one script cache, as a
// Manager's sandboxes do.
func sandboxLearners(tb testing.TB, n int, line string) (free func()) {
	tb.Helper()
	ctx := context.Background()
	scripts := luaredis.NewCache(0)
	boxes := make([]*Sandbox, n)
	for i := range boxes {
		s, err := NewSandbox(SandboxOptions{Scripts: scripts})
		if err != nil {
			tb.Fatal(err)
		}
		if r, err := s.Exec(ctx, ClientA, line); err != nil || r.Output != "OK" {
			tb.Fatalf("sandbox %d: %s = %q, %v; want OK", i, line, r.Output, err)
		}
		boxes[i] = s
	}
	return func() {
		for _, s := range boxes {
			s.Close()
		}
	}
}

// nodeSetLearners are the same sandboxes, each as node 1 of a node set.
func nodeSetLearners(tb testing.TB, n int, line string) (free func()) {
	tb.Helper()
	ctx := context.Background()
	scripts := luaredis.NewCache(0)
	cfg := &nodeConfig{newBox: func(o SandboxOptions) (Box, error) { return NewSandbox(o) }, now: time.Now, limits: Limits{}.withDefaults(), scripts: scripts}
	sets := make([]*nodeSet, n)
	for i := range sets {
		ns, err := newNodeSet(cfg, "learner", nil)
		if err != nil {
			tb.Fatal(err)
		}
		if r, _, err := ns.ExecWithin(ctx, ClientA, line, ns.cfg.limits.MaxDataBytes); err != nil || r.Output != "OK" {
			tb.Fatalf("node set %d: %s = %q, %v; want OK", i, line, r.Output, err)
		}
		sets[i] = ns
	}
	return func() {
		for _, ns := range sets {
			ns.Close()
		}
	}
}

// managerLearners are learners of one Manager.
func managerLearners(tb testing.TB, n int, line string) (free func()) {
	tb.Helper()
	ctx := context.Background()
	m := NewManager(Options{})
	for i := range n {
		learner := fmt.Sprintf("learner-%d", i)
		if r, err := m.Exec(ctx, learner, ClientA, line); err != nil || r.Output != "OK" {
			tb.Fatalf("%s: %s = %q, %v; want OK", learner, line, r.Output, err)
		}
	}
	if m.Len() != n {
		tb.Fatalf("Manager.Len() = %d; want %d", m.Len(), n)
	}
	return m.Close
}

// BenchmarkExecThroughNodes measures a line for node 1 run four ways: by a
// bare Sandbox.ExecWithin, by a node set's ExecWithin (the wrapper alone),
// and by a Manager, without and with the "@1" target (the whole path: the
// Manager's session and accounting, the node set, and the key list a
// Manager adds to every reply). The lines alternate between the lesson's
// acquire and DEL of the lock, so every line does its work. Each way is a
// sub-benchmark, for its ns/op and allocs/op; "interleaved" runs a line
// each way in every iteration, so that all four see the same load on the
// machine, and reports their ns per line and the ratios to the bare
// sandbox's.
func BenchmarkExecThroughNodes(b *testing.B) {
	ctx := context.Background()
	lines := [2]struct{ line, want string }{{acquireLine, "OK"}, {"DEL lock:invoice:7", "(integer) 1"}}
	type way struct {
		name, prefix string
		exec         func(line string) (Result, error)
	}
	// ways starts each way afresh, closed when the benchmark ends.
	ways := func(b *testing.B) []way {
		s, err := NewSandbox(SandboxOptions{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(s.Close)
		cfg := &nodeConfig{newBox: func(o SandboxOptions) (Box, error) { return NewSandbox(o) }, now: time.Now, limits: Limits{}.withDefaults(), scripts: luaredis.NewCache(0)}
		ns, err := newNodeSet(cfg, "learner", nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(ns.Close)
		m := NewManager(Options{})
		b.Cleanup(m.Close)
		return []way{
			{"sandbox", "", func(line string) (Result, error) {
				r, _, err := s.ExecWithin(ctx, ClientA, line, s.limits.MaxDataBytes)
				return r, err
			}},
			{"nodeset", "", func(line string) (Result, error) {
				r, _, err := ns.ExecWithin(ctx, ClientA, line, ns.cfg.limits.MaxDataBytes)
				return r, err
			}},
			{"manager", "", func(line string) (Result, error) { return m.Exec(ctx, "ada", ClientA, line) }},
			{"manager-@1", "@1 ", func(line string) (Result, error) { return m.Exec(ctx, "bob", ClientA, line) }},
		}
	}
	// typed are the lines as each way types them, built before the loop
	// so that their concatenation is not measured.
	typed := map[string][2]string{}
	for _, prefix := range []string{"", "@1 "} {
		typed[prefix] = [2]string{prefix + lines[0].line, prefix + lines[1].line}
	}
	// line runs the i-th line of the alternation one way.
	line := func(b *testing.B, w way, i int) {
		l := typed[w.prefix][i%2]
		r, err := w.exec(l)
		if err != nil || r.Output != lines[i%2].want {
			b.Fatalf("%s: %s = %q, %v; want %q", w.name, l, r.Output, err, lines[i%2].want)
		}
	}
	for _, name := range []string{"sandbox", "nodeset", "manager", "manager-@1"} {
		b.Run(name, func(b *testing.B) {
			var w way
			for _, x := range ways(b) {
				if x.name == name {
					w = x
				}
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				line(b, w, i)
				i++
			}
		})
	}
	b.Run("interleaved", func(b *testing.B) {
		ws := ways(b)
		spent := make([]time.Duration, len(ws))
		i := 0
		for b.Loop() {
			for j, w := range ws {
				start := time.Now()
				line(b, w, i)
				spent[j] += time.Since(start)
			}
			i++
		}
		for j, w := range ws {
			b.ReportMetric(float64(spent[j].Nanoseconds())/float64(i), w.name+"-ns/line")
			if j > 0 {
				b.ReportMetric(float64(spent[j])/float64(spent[0]), w.name+"/sandbox")
			}
		}
	})
}
