package worker

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/playground"
)

// TestSupervisorDataBudget checks the playground's data budget across
// the worker boundary: the allowance goes to the worker with each line
// and the sandbox's size comes back, so that idle sandboxes are dropped
// for room and, when all are active, writes are refused in the worker.
func TestSupervisorDataBudget(t *testing.T) {
	fill := func(key string) string { return "SET " + key + " " + strings.Repeat("x", 4000) } // 4,093 bytes
	limits := playground.Limits{MaxDataBytes: 10_000, MaxValueBytes: 4000}
	exec := func(t *testing.T, sup *Supervisor, learner, line string) (playground.Result, error) {
		t.Helper()
		return sup.Exec(context.Background(), learner, playground.ClientA, line)
	}
	must := func(t *testing.T, sup *Supervisor, learner, line, want string) playground.Result {
		t.Helper()
		res, err := exec(t, sup, learner, line)
		if err != nil || res.Output != want {
			t.Fatalf("%s: %.20s = %q, %v; want %q", learner, line, res.Output, err, want)
		}
		return res
	}

	t.Run("idle dropped", func(t *testing.T) {
		clock := newFakeClock()
		sup := newTestSupervisor(t, Options{Workers: 2, Playground: playground.Options{
			Now: clock.Now, Limits: limits, MaxDataBytes: 25_000, ActiveFor: time.Minute,
		}})
		for _, learner := range []string{"ada", "bob"} {
			must(t, sup, learner, fill("k1"), "OK")
			must(t, sup, learner, fill("k2"), "OK")
			clock.Add(time.Second)
		}
		clock.Add(2 * time.Minute)
		must(t, sup, "cyd", fill("k1"), "OK")
		if res := must(t, sup, "bob", "DBSIZE", "(integer) 2"); res.Notice != "" {
			t.Errorf("bob's DBSIZE notice = %q; want his sandbox kept", res.Notice)
		}
		if res := must(t, sup, "ada", "DBSIZE", "(integer) 0"); !strings.Contains(res.Notice, "full") {
			t.Errorf("ada's DBSIZE notice = %q; want that the playground was full", res.Notice)
		}
	})

	t.Run("all active", func(t *testing.T) {
		clock := newFakeClock()
		sup := newTestSupervisor(t, Options{Workers: 2, Playground: playground.Options{
			Now: clock.Now, Limits: limits, MaxDataBytes: 22_000,
		}})
		for _, learner := range []string{"ada", "bob"} {
			must(t, sup, learner, fill("k1"), "OK")
			must(t, sup, learner, fill("k2"), "OK")
		}
		must(t, sup, "cyd", fill("k1"), "OK")
		res, err := exec(t, sup, "cyd", fill("k2"))
		if !errors.Is(err, playground.ErrLimit) || !strings.HasPrefix(res.Output, "(error) ERR the playground is full right now") {
			t.Errorf("cyd's second SET = %q, %v; want refused as the playground is full", res.Output, err)
		}
		must(t, sup, "cyd", "EXISTS k2", "(integer) 0")
		must(t, sup, "ada", "DBSIZE", "(integer) 2")
		must(t, sup, "cyd", "DEL k1", "(integer) 1")
		must(t, sup, "cyd", fill("k2"), "OK")
	})
}
