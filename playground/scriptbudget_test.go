package playground

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/locklab/locklab/luaredis"
)

// releaseScript is a lesson-sized script; i makes each one distinct.
func releaseScript(i int) string {
	return fmt.Sprintf(`"-- release %d
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0"`, i)
}

// scriptCost is what a sandbox counts for releaseScript(0): what its size
// grows by when it loads it.
func scriptCost(t *testing.T) int {
	t.Helper()
	s, err := NewSandbox(SandboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, size, err := s.ExecWithin(context.Background(), ClientA, "SCRIPT LOAD "+releaseScript(0), 1<<20)
	if err != nil || strings.HasPrefix(res.Output, "(error)") {
		t.Fatalf("SCRIPT LOAD = %q, %v", res.Output, err)
	}
	return size
}

// TestManagerBudgetCountsScripts checks that scripts count in the data
// budget: loading one adds its source and compiled code to DataBytes,
// SCRIPT FLUSH takes them off, and when the budget is full a new script is
// refused and takes the room of data.
func TestManagerBudgetCountsScripts(t *testing.T) {
	cost := scriptCost(t)
	if min := len(releaseScript(0)) + 500; cost < min {
		t.Fatalf("a script counts %d bytes; want at least %d, source and compiled code", cost, min)
	}

	t.Run("counted", func(t *testing.T) {
		m, _ := newTestManager(t, Options{Limits: budgetLimits, MaxDataBytes: 100_000})
		for i := range 3 {
			mustExec(t, m, "ada", ClientA, "SCRIPT LOAD "+releaseScript(i))
		}
		if data, _ := m.DataBytes(); data < 3*cost-30 || data > 3*cost+30 {
			t.Errorf("DataBytes() after 3 scripts = %d; want about %d", data, 3*cost)
		}
		mustExec(t, m, "ada", ClientB, "SCRIPT FLUSH")
		if data, _ := m.DataBytes(); data != 0 {
			t.Errorf("DataBytes() after SCRIPT FLUSH = %d; want 0", data)
		}
	})

	t.Run("refused when full", func(t *testing.T) {
		// ada and bob, active, hold 2 × 8,186 bytes; cyd has room for two
		// scripts and a half.
		m, _ := newTestManager(t, Options{Limits: budgetLimits, MaxDataBytes: 2*2*4093 + 2*cost + cost/2})
		for _, learner := range []string{"ada", "bob"} {
			mustExec(t, m, learner, ClientA, fillLine("k1"))
			mustExec(t, m, learner, ClientA, fillLine("k2"))
		}
		for i := range 2 {
			if res := mustExec(t, m, "cyd", ClientA, "SCRIPT LOAD "+releaseScript(i)); strings.HasPrefix(res.Output, "(error)") {
				t.Fatalf("script %d: %s; want it loaded", i, res.Output)
			}
		}
		const full = "(error) ERR the playground is full right now and cannot take more scripts in your sandbox; try again in a few minutes, or make room in it (SCRIPT FLUSH, DEL, FLUSHDB)"
		for _, line := range []string{"SCRIPT LOAD " + releaseScript(2), "EVAL " + releaseScript(3) + " 1 k v"} {
			if res := mustExec(t, m, "cyd", ClientA, line); res.Output != full {
				t.Errorf("%.11s = %q; want %q", line, res.Output, full)
			}
		}
		// The scripts take the room a write of data would need.
		if res, _ := m.Exec(context.Background(), "cyd", ClientA, "SET k "+strings.Repeat("x", cost)); !strings.HasPrefix(res.Output, "(error) ERR the playground is full right now") {
			t.Errorf("SET with scripts in the room = %q; want refused as full", res.Output)
		}
		if data, reserved := m.DataBytes(); data > m.opts.MaxDataBytes || reserved != 0 {
			t.Errorf("DataBytes() = %d, %d; want within %d", data, reserved, m.opts.MaxDataBytes)
		}
		mustExec(t, m, "cyd", ClientA, "SCRIPT FLUSH")
		if res := mustExec(t, m, "cyd", ClientA, "SCRIPT LOAD "+releaseScript(2)); strings.HasPrefix(res.Output, "(error)") {
			t.Errorf("SCRIPT LOAD after SCRIPT FLUSH = %q; want it loaded", res.Output)
		}
	})
}

// TestSandboxScriptCacheBytes checks the per-sandbox bound on scripts:
// the oldest are forgotten to stay within it, and the size reported stays
// within data and ScriptCacheBytes.
func TestSandboxScriptCacheBytes(t *testing.T) {
	cost := scriptCost(t)
	limits := Limits{ScriptCacheBytes: 3*cost + cost/2}
	s, err := NewSandbox(SandboxOptions{Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var size int
	for i := range 10 {
		_, size, err = s.ExecWithin(context.Background(), ClientA, "SCRIPT LOAD "+releaseScript(i), 1<<20)
		if err != nil {
			t.Fatal(err)
		}
	}
	if size > limits.ScriptCacheBytes || size < 3*cost-30 {
		t.Errorf("size after 10 scripts = %d; want 3 scripts' worth, within %d", size, limits.ScriptCacheBytes)
	}
	res, _ := s.Exec(context.Background(), ClientA, "SCRIPT EXISTS "+sha1Of(t, s, releaseScript(0))+" "+sha1Of(t, s, releaseScript(9)))
	if want := "1) (integer) 0\n2) (integer) 1"; res.Output != want {
		t.Errorf("SCRIPT EXISTS first, last = %q; want %q", res.Output, want)
	}
}

// sha1Of returns the SHA1 SCRIPT LOAD gives the quoted script.
func sha1Of(t *testing.T, s *Sandbox, quoted string) string {
	t.Helper()
	argv, err := Tokenize("X " + quoted)
	if err != nil {
		t.Fatal(err)
	}
	sha, err := luaredis.NewEngine(luaredis.Options{}).Load(argv[1])
	if err != nil {
		t.Fatal(err)
	}
	return sha
}

// TestRestoreSkipsScriptsPastTheCaps checks that a copy saved with larger
// limits restores, without the scripts that the caps on compiled scripts
// refuse now: restoring costs no more than loading would.
func TestRestoreSkipsScriptsPastTheCaps(t *testing.T) {
	big := "return {" + strings.TrimSuffix(strings.Repeat("function() end,", 200), ",") + "}"
	snap := Snapshot{Scripts: []string{big, "return 'ok'"}}
	s, err := RestoreSandbox(snap, SandboxOptions{})
	if err != nil {
		t.Fatalf("RestoreSandbox: %v", err)
	}
	defer s.Close()
	sum := func(src string) string {
		sha, _ := luaredis.NewEngine(luaredis.Options{Limits: luaredis.Limits{MaxFunctions: 1000}}).Load(src)
		return sha
	}
	res, _ := s.Exec(context.Background(), ClientA, "SCRIPT EXISTS "+sum(big)+" "+sum("return 'ok'"))
	if want := "1) (integer) 0\n2) (integer) 1"; res.Output != want {
		t.Errorf("SCRIPT EXISTS big, small = %q; want %q", res.Output, want)
	}
	res, _ = s.Exec(context.Background(), ClientA, "SCRIPT LOAD \""+big+"\"")
	if !strings.HasPrefix(res.Output, "(error) ERR the playground compiles scripts of at most 100 functions") {
		t.Errorf("SCRIPT LOAD of 201 functions = %q; want refused", res.Output)
	}
}
