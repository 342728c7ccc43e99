package attack

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"testing"
)

// labRecipe is a recipe as POST /api/lab/check takes it.
type labRecipe struct {
	Acquire []string `json:"acquire"`
	Release []string `json:"release"`
}

// attackLabQueue: four addresses with eight learners each keep sending
// checks that spend a check's whole CPU budget, while a learner at
// another address checks the textbook lock. The fair queue gives that
// learner a turn among the addresses, so its check answers 200 within 6 s
// of what it takes on an idle server;
// the attackers are refused with 429 and Retry-After rather than queued
// without end, and their waits are not charged to them.
func attackLabQueue(t *testing.T, tg *target) {
	s := tg.limited
	hostile := labRecipe{
		Acquire: []string{`EVAL "for i = 1, 300000 do end if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', 2000) then return 1 end return 0" 1 {key} {token}`},
		Release: []string{`EVAL "for i = 1, 300000 do end return redis.call('DEL', KEYS[1])" 1 {key}`},
	}
	textbook := labRecipe{
		Acquire: []string{"SET {key} {token} NX PX {ttl}"},
		Release: []string{`EVAL "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end" 1 {key} {token}`},
	}
	stop := make(chan struct{})
	var sent, refused, other atomic.Int64
	var wg sync.WaitGroup
	for a := range 4 {
		for l := range 8 {
			b := newBrowser(s)
			b.xff = fmt.Sprintf("198.51.100.%d", 10+a)
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					ans := b.postJSON(mark("/api/lab/check", fmt.Sprintf("hostile-%d-%d", a, l)), map[string]any{"recipe": hostile}, 30*time.Second)
					sent.Add(1)
					switch {
					case ans.status == http.StatusTooManyRequests && ans.header.Get("Retry-After") != "":
						refused.Add(1)
						time.Sleep(200 * time.Millisecond) // a client that backs off a little, no more
					case ans.status == http.StatusOK || ans.status == http.StatusBadRequest:
					default:
						other.Add(1)
					}
				}
			})
		}
	}
	// Let the queue fill, then check as a learner at another address, a
	// few times.
	time.Sleep(3 * time.Second)
	me := newBrowser(s)
	me.xff = "203.0.113.7"
	var worst time.Duration
	for i := range 3 {
		ans := me.postJSON(mark("/api/lab/check", fmt.Sprintf("bystander-%d", i)), map[string]any{"recipe": textbook}, 30*time.Second)
		if ans.status != http.StatusOK {
			t.Errorf("the bystander's check %d = %s; want 200", i, ans)
		}
		worst = max(worst, ans.took)
		time.Sleep(time.Second)
	}
	close(stop)
	wg.Wait()
	ctl := newBrowser(tg.control)
	base := ctl.postJSON("/api/lab/check", map[string]any{"recipe": textbook}, 30*time.Second)
	t.Logf("32 hostile learners at 4 addresses sent %d checks (%d refused with Retry-After, %d other); the bystander's slowest check took %v (on the idle control server: %v)",
		sent.Load(), refused.Load(), other.Load(), worst.Round(time.Millisecond), base.took.Round(time.Millisecond))
	// As the suite's other targets, against the idle control server's
	// time for the same check: 6 s more at most.
	if limit := 6*time.Second + base.took; worst > limit {
		t.Errorf("the bystander's check took %v; want it within %v (6 s over the idle control server's %v)", worst, limit, base.took)
	}
	if other.Load() > 0 {
		t.Errorf("%d hostile checks got neither a report, a 400 nor a 429 with Retry-After", other.Load())
	}
}
