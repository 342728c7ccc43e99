package store

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/workshop"
)

// TestLearnerViewsReadTogether: a hundred learners' pages ask for their
// views at once, on both replicas; each gets its own nickname, and the
// poll with its own prediction, whichever batch carried its read.
func TestLearnerViewsReadTogether(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s, replica *workshop.Service) {
		ctx := context.Background()
		mustCreate(t, s, workshop.Workshop{Code: "VIEWS7", Title: "Views", StartedAt: t0})
		learners := make([]string, 100)
		for i := range learners {
			learners[i] = fmt.Sprintf("viewer-%03d-0123456789a", i)
			mustJoin(t, s, "VIEWS7", learners[i], fmt.Sprintf("Viewer %d", i), t0)
		}
		p, err := s.OpenPoll(ctx, "VIEWS7", pollSpec(), t0.Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range learners[:50] {
			if err := s.Predict(ctx, "VIEWS7", p.ID, l, []string{[]string{"safe", "two-holders"}[i%2]}, t0.Add(2*time.Minute)); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		for round := range 3 {
			for i, l := range learners {
				if i > 0 && i%50 == 0 {
					wg.Wait()
				}
				wg.Go(func() {
					svc := []*workshop.Service{s, replica}[(i+round)%2]
					st, err := svc.Learner(ctx, "VIEWS7", l)
					if err != nil {
						t.Errorf("learner %d: %v", i, err)
						return
					}
					if want := fmt.Sprintf("Viewer %d", i); st.Nickname != want {
						t.Errorf("learner %d's view has nickname %q; want %q", i, st.Nickname, want)
					}
					if st.Poll == nil || st.Poll.ID != p.ID {
						t.Errorf("learner %d's view has poll %+v; want %s", i, st.Poll, p.ID)
						return
					}
					want := ""
					if i < 50 {
						want = []string{"safe", "two-holders"}[i%2]
					}
					if got := workshop.JoinPrediction(st.Prediction); got != want {
						t.Errorf("learner %d's view has prediction %q; want %q", i, got, want)
					}
				})
			}
			// Fifty reads at a time: they are batched all the same, and
			// each pipeline stays well within the call's timeout on
			// miniredis under the race detector on a busy machine.
			wg.Wait()
		}
		if _, err := s.Learner(ctx, "VIEWS7", "stranger-0123456789abcd"); err == nil {
			t.Error("a learner who never joined got a view; want ErrNotJoined")
		}
	})
}

// pipelineGate holds every pipeline of reads until it is let go, and
// counts them.
type pipelineGate struct {
	mu    sync.Mutex
	sent  int
	gate  chan struct{}
	first chan struct{} // closed when the first pipeline arrives
}

func (g *pipelineGate) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (g *pipelineGate) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (g *pipelineGate) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if cmds[0].Name() != "evalsha" {
			return next(ctx, cmds) // a new connection's greeting
		}
		g.mu.Lock()
		g.sent++
		if g.sent == 1 {
			close(g.first)
		}
		g.mu.Unlock()
		<-g.gate
		return next(ctx, cmds)
	}
}

// TestLearnerReadsBatchWhileOneIsOut: while a read is out, the reads
// asked for meanwhile go together in one pipeline, not one each; and a
// Redis that lost the script is sent it.
func TestLearnerReadsBatchWhileOneIsOut(t *testing.T) {
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { rdb.Close() })
	g := &pipelineGate{gate: make(chan struct{}), first: make(chan struct{})}
	rdb.AddHook(g)
	var q learnerReads
	keys := (&redisBackend{prefix: "locklab:"}).wsKeys("NOSUCH")
	ctx := context.Background()

	var wg sync.WaitGroup
	read := func() {
		vals, err := q.read(ctx, rdb, keys, "somebody-0123456789abcd")
		if err != nil || len(vals) != 1 || fmt.Sprint(vals[0]) != "-1" {
			t.Errorf("read = %v, %v; want [-1] (no such workshop)", vals, err)
		}
	}
	wg.Go(read)
	<-g.first
	for range 50 {
		wg.Go(read)
	}
	// Wait until the 50 are queued behind the first.
	for deadline := time.Now().Add(5 * time.Second); ; {
		q.mu.Lock()
		n := len(q.queue)
		q.mu.Unlock()
		if n == 50 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d reads queued; want 50", n)
		}
		time.Sleep(time.Millisecond)
	}
	close(g.gate)
	wg.Wait()
	if g.sent != 2 {
		t.Errorf("51 reads took %d pipelines; want 2 (the first, then the 50 that waited for it)", g.sent)
	}

	m.FlushAll()
	if err := rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	read()
}
