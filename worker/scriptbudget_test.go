package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/locklab/locklab/playground"
)

// script is a lesson-sized script; i makes each one distinct.
func script(i int) string {
	return fmt.Sprintf(`"-- release %d
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0"`, i)
}

// scriptCost is what a sandbox counts for script(0).
func scriptCost(t *testing.T) int {
	t.Helper()
	sb, err := playground.NewSandbox(playground.SandboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	_, size, err := sb.ExecWithin(context.Background(), playground.ClientA, "SCRIPT LOAD "+script(0), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	return size
}

// TestSupervisorBudgetCountsScripts checks the scripts' part of the data
// budget across the worker boundary: the size the worker reports counts
// them, a full budget refuses new ones in the worker, and after the
// worker dies the restored sandbox has its scripts, still counted.
func TestSupervisorBudgetCountsScripts(t *testing.T) {
	cost := scriptCost(t)
	limits := playground.Limits{MaxDataBytes: 10_000}
	fill := func(key string) string { return "SET " + key + " " + strings.Repeat("x", 4000) } // 4,093 bytes
	sup := newTestSupervisor(t, Options{Workers: 1, Command: workerCommand("boom"), Playground: playground.Options{
		Limits: limits, MaxDataBytes: 2*4093 + 3*cost + cost/2,
	}})
	exec := func(learner, line string) playground.Result {
		t.Helper()
		res, err := sup.Exec(context.Background(), learner, playground.ClientA, line)
		if err != nil {
			t.Fatalf("%s: %.20s: %v", learner, line, err)
		}
		return res
	}
	exec("ada", fill("k1"))
	exec("ada", fill("k2"))
	var shas []string
	for i := range 3 {
		res := exec("bob", "SCRIPT LOAD "+script(i))
		if strings.HasPrefix(res.Output, "(error)") {
			t.Fatalf("script %d: %s", i, res.Output)
		}
		shas = append(shas, strings.Trim(res.Output, `"`))
	}
	if data, _ := sup.DataBytes(); data < 2*4093+3*cost-30 || data > 2*4093+3*cost+30 {
		t.Errorf("DataBytes() = %d; want about %d, the data and 3 scripts", data, 2*4093+3*cost)
	}
	const full = "(error) ERR the playground is full right now and cannot take more scripts in your sandbox"
	if res := exec("bob", "SCRIPT LOAD "+script(3)); !strings.HasPrefix(res.Output, full) {
		t.Errorf("a fourth script = %q; want %q...", res.Output, full)
	}

	// The worker dies; bob's sandbox comes back from its mirror, scripts
	// compiled again and counted again.
	if _, err := sup.Exec(context.Background(), "culprit", playground.ClientA, boomLine); !errors.Is(err, ErrWorkerStopped) {
		t.Fatalf("the boom line: %v; want ErrWorkerStopped", err)
	}
	for _, sha := range shas {
		if res := exec("bob", "EVALSHA "+sha+" 1 k v"); res.Output != "(integer) 0" {
			t.Errorf("EVALSHA %s after the restart = %q; want (integer) 0", sha, res.Output)
		}
	}
	if data, _ := sup.DataBytes(); data < 3*cost-30 || data > 2*4093+3*cost+30 {
		t.Errorf("DataBytes() after the restart = %d; want bob's 3 scripts counted", data)
	}
	if res := exec("bob", "SCRIPT LOAD "+script(3)); !strings.HasPrefix(res.Output, full) {
		t.Errorf("a fourth script after the restart = %q; want %q...", res.Output, full)
	}
}

// TestSupervisorRefusesFunctionHeavyScripts sends scripts that compiled
// into over 10 MB each and crashed a worker at the 16th: each is refused
// at compile time and the worker stays up.
func TestSupervisorRefusesFunctionHeavyScripts(t *testing.T) {
	sup := newTestSupervisor(t, Options{Workers: 1})
	for i := range 16 {
		heavy := fmt.Sprintf(`"-- %d\nreturn {%s}"`, i, strings.TrimSuffix(strings.Repeat("function() end,", 60_000/15), ","))
		res, err := sup.Exec(context.Background(), "mallory", playground.ClientA, "SCRIPT LOAD "+heavy)
		if err != nil || !strings.HasPrefix(res.Output, "(error) ERR the playground compiles scripts of at most 100 functions") {
			t.Fatalf("SCRIPT LOAD %d of 4,000 functions = %.100q, %v; want refused", i, res.Output, err)
		}
	}
	if got := sup.Restarts(); got != 0 {
		t.Errorf("Restarts() = %d; want 0", got)
	}
	if data, _ := sup.DataBytes(); data != 0 {
		t.Errorf("DataBytes() = %d; want 0, nothing kept", data)
	}
}
