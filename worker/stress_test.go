package worker

import (
	"context"
	"fmt"
	"math/rand"
	"sync"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/testenv"

	"github.com/locklab/locklab/playground"
)

// TestMixedLoad sends many learners' commands at once, quick ones that
// the reading goroutine runs and others that go to a sandbox's own
// goroutine, some cancelled by their caller, and checks that every one is
// answered and no worker is taken for stuck.
func TestMixedLoad(t *testing.T) {
	s := newTestSupervisor(t, Options{Workers: 2, RequestTimeout: 3 * time.Second})
	lines := []string{
		"SET k v PX 5000", "GET k", "INCR n", "PING", "RPUSH l a b c", "LRANGE l 0 -1", "KEYS *",
		`EVAL "return redis.call('INCR', KEYS[1])" 1 n`, `EVAL "return 1" 0`, "MULTI", "INCR n", "EXEC",
		"SCRIPT EXISTS 0", "DEL l", "HSET h f v", "HGETALL h", "2 INCR n", `EVAL "local x = 0 for i = 1, 1e4 do x = x + i end return x" 0`,
	}
	n := 1500
	if !testenv.SlowTier() {
		n = 200
	}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewSource(int64(g)))
			learner := fmt.Sprintf("mixed-%d", g%12)
			for i := range n {
				ctx := context.Background()
				var cancel context.CancelFunc = func() {}
				if i%97 == 0 {
					ctx, cancel = context.WithTimeout(ctx, time.Duration(r.Intn(200))*time.Microsecond)
				}
				line := lines[r.Intn(len(lines))]
				res, err := s.Exec(ctx, learner, []playground.Client{playground.ClientA, playground.ClientB}[i%2], line)
				cancel()
				if err != nil && ctx.Err() == nil && res.Output == "" {
					t.Errorf("%s: %q = %v", learner, line, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if got := s.Restarts(); got != 0 {
		t.Errorf("Restarts() = %d; want 0", got)
	}
}
