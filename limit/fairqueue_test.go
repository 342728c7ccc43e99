package limit

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// TestFairQueueRoundRobin: with one slot busy with addr1's request, the
// other address goes first, then addr1's two waiting requests take turns
// with nobody else left.
func TestFairQueueRoundRobin(t *testing.T) {
	q := NewFairQueue(FairQueueOptions{Slots: 1, PerAddress: 2, MaxWait: time.Minute})
	waits := make(chan string, 8)
	q.onWait = func(learner string) { waits <- learner }
	ctx := context.Background()
	release, d, err := q.Enter(ctx, "a", "addr1")
	if err != nil || !d.Allowed() {
		t.Fatalf("Enter(a) = %+v, %v; want a slot", d, err)
	}
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	enter := func(learner, addr string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rel, d, err := q.Enter(ctx, learner, addr)
			if err != nil || !d.Allowed() {
				t.Errorf("Enter(%s) = %+v, %v", learner, d, err)
				return
			}
			mu.Lock()
			order = append(order, learner)
			mu.Unlock()
			rel()
		}()
		if got := <-waits; got != learner {
			t.Fatalf("%s waits; want %s", got, learner)
		}
	}
	enter("b", "addr1")
	enter("c", "addr1")
	enter("d", "addr2")
	if _, d, _ := q.Enter(ctx, "e", "addr1"); d.Limit != "lab_queue_per_address" {
		t.Errorf("a third waiting request from addr1 = %+v; want lab_queue_per_address", d)
	}
	if _, d, _ := q.Enter(ctx, "b", "addr3"); d.Limit != "lab_running" {
		t.Errorf("a second request of learner b = %+v; want lab_running", d)
	}
	release()
	wg.Wait()
	if want := []string{"d", "b", "c"}; len(order) != 3 || order[0] != want[0] || order[1] != want[1] || order[2] != want[2] {
		t.Errorf("order = %v; want %v", order, want)
	}
	if _, d, _ := q.Enter(ctx, "b", "addr1"); !d.Allowed() {
		t.Errorf("after its request, learner b = %+v; want a slot", d)
	}
}

func TestFairQueueGivesUp(t *testing.T) {
	q := NewFairQueue(FairQueueOptions{Slots: 1, MaxWaiting: 1, MaxWait: 20 * time.Millisecond})
	waits := make(chan string, 8)
	q.onWait = func(learner string) { waits <- learner }
	ctx := context.Background()
	release, _, _ := q.Enter(ctx, "a", "addr1")
	defer release()
	start := time.Now()
	if _, d, err := q.Enter(ctx, "b", "addr2"); err != nil || d.Limit != "lab_wait" || time.Since(start) < 20*time.Millisecond {
		t.Errorf("a request that waited MaxWait = %+v, %v after %v; want lab_wait", d, err, time.Since(start))
	}
	<-waits
	q.opts.MaxWait = time.Minute
	cctx, cancel := context.WithCancel(ctx)
	go func() {
		<-waits
		if _, d, _ := q.Enter(ctx, "c", "addr3"); d.Limit != "lab_queue" {
			t.Errorf("a request past MaxWaiting = %+v; want lab_queue", d)
		}
		cancel()
	}()
	if _, _, err := q.Enter(cctx, "b", "addr2"); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled wait = %v; want context.Canceled", err)
	}
	if q.Waiting() != 0 || q.learners["b"] {
		t.Errorf("a cancelled request stays queued")
	}
}

// TestFairQueueNewcomerFirst: an address never served goes before
// addresses already served, whenever it came.
func TestFairQueueNewcomerFirst(t *testing.T) {
	q := NewFairQueue(FairQueueOptions{Slots: 1, PerAddress: 2, MaxWait: time.Minute})
	waits := make(chan string, 8)
	q.onWait = func(learner string) { waits <- learner }
	ctx := context.Background()
	release, _, _ := q.Enter(ctx, "busy-1", "busy")
	got := make(chan string, 4)
	for _, l := range []struct{ learner, addr string }{{"busy-2", "busy"}, {"busy-3", "busy"}, {"new", "newcomer"}} {
		go func() {
			rel, d, err := q.Enter(ctx, l.learner, l.addr)
			if err != nil || !d.Allowed() {
				t.Errorf("Enter(%s) = %+v, %v", l.learner, d, err)
				return
			}
			got <- l.learner
			rel()
		}()
		if w := <-waits; w != l.learner {
			t.Fatalf("%s waits; want %s", w, l.learner)
		}
	}
	release()
	if first := <-got; first != "new" {
		t.Errorf("first served after the busy address: %s; want the newcomer", first)
	}
	<-got
	<-got
}

// TestFairQueueRunningCap: one address runs at most PerAddressRunning
// requests; a free slot goes to another address's request, even one that
// comes after.
func TestFairQueueRunningCap(t *testing.T) {
	q := NewFairQueue(FairQueueOptions{Slots: 2, PerAddressRunning: 1, MaxWait: time.Minute})
	waits := make(chan string, 8)
	q.onWait = func(learner string) { waits <- learner }
	ctx := context.Background()
	release, d, _ := q.Enter(ctx, "a1", "busy")
	if !d.Allowed() {
		t.Fatalf("first request = %+v", d)
	}
	granted := make(chan string, 2)
	go func() {
		rel, d, err := q.Enter(ctx, "a2", "busy")
		if err == nil && d.Allowed() {
			granted <- "a2"
			rel()
		}
	}()
	if w := <-waits; w != "a2" {
		t.Fatalf("%s waits; want a2, whose address is at its cap", w)
	}
	rel, d, err := q.Enter(ctx, "b1", "other")
	if err != nil || !d.Allowed() {
		t.Fatalf("another address's request = %+v, %v; want the free slot", d, err)
	}
	rel()
	release()
	if got := <-granted; got != "a2" {
		t.Errorf("after the first request, %s ran; want a2", got)
	}
}
