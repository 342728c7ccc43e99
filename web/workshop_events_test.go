package web

import (
	"context"
	"net/http"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/workshop"
)

// countingWorkshops counts the learner state reads of a workshop service.
type countingWorkshops struct {
	*workshop.Service
	reads atomic.Int64
}

func (c *countingWorkshops) Learner(ctx context.Context, code, learner string) (workshop.LearnerState, error) {
	c.reads.Add(1)
	return c.Service.Learner(ctx, code, learner)
}

// TestLearnerStreamReadsOnChange holds a learner's event stream open,
// checking every 10 ms, on a store with workshop versions: while nothing
// changes it does not read the learner's state again, and a poll opened
// on the same Redis (as by another replica) reaches it all the same.
func TestLearnerStreamReadsOnChange(t *testing.T) {
	m := miniredis.RunT(t)
	st, err := store.OpenRedis("redis://" + m.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc := &countingWorkshops{Service: workshop.New(st, workshop.Options{})}
	cfg := testConfig(t)
	cfg.AdminToken = adminToken
	cfg.Workshops = svc
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.sseEvery, s.pollEvery = 20*time.Millisecond, 10*time.Millisecond
	base := newServerFor(t, s)
	teacher := newLearner(t, base)
	wcode := startWorkshop(t, teacher)
	l := newLearner(t, base)
	if code, _ := form(l, "/join", url.Values{"code": {wcode}, "nickname": {"Ada"}}); code != http.StatusOK {
		t.Fatalf("join = %d", code)
	}
	events := learnerStream(t, l)
	if first := <-events; first.Poll != nil {
		t.Fatalf("first state = %+v; want no poll", first)
	}
	before := svc.reads.Load()
	time.Sleep(500 * time.Millisecond) // some fifty checks of the stream
	if n := svc.reads.Load() - before; n > 3 {
		t.Errorf("the stream read the learner's state %d times in 500 ms with nothing changed; want at most 3", n)
	}
	// Another replica's service on the same Redis opens the poll.
	other := workshop.New(st, workshop.Options{})
	opened := make(chan string, 1)
	go func() {
		p, err := other.OpenPoll(context.Background(), wcode, workshop.PollSpec{
			Scenario: "gc-pause", Title: "A GC pause longer than the TTL", Query: "scenario=gc-pause",
			Choices:  []workshop.PollChoice{{ID: "two-holders", Label: "Two holders"}, {ID: "safe", Label: "Safe"}},
			Outcomes: []string{"two-holders"},
		}, time.Now())
		if err != nil {
			t.Errorf("OpenPoll = %v", err)
		}
		opened <- p.ID
	}()
	select {
	case got := <-events:
		if id := <-opened; got.Poll == nil || got.Poll.ID != id {
			t.Errorf("state after the poll opened = %+v; want poll %s", got, id)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the stream never carried the poll")
	}
}
