package attack

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Scripts of the lua-memory attack: bystanders' scripts that keep
// nothing; attackers' scripts and lab recipes that allocate megabytes,
// dropped at once or kept until they end, under the 16 MiB a script may
// hold (strings allocate the most for the CPU they cost); and a bomb
// that keeps what it allocates.
const (
	quietReturn = `EVAL "return 1" 0`
	quietLoop   = `EVAL "local x = 0 for i = 1, 400000 do x = x + i end return 1" 0`
	bomb        = `EVAL "local t = {} local i = 0 while true do i = i + 1 t[i] = string.rep('x', 250000) end" 0`
	memoryError = "allocated more than 16 MiB"
)

var heavyScripts = []string{
	`EVAL "local n = 0 for i = 1, 300 do n = n + #(string.rep('x', 200000) .. i) end return n" 0`,
	`EVAL "local t = {} for i = 1, 50000 do t[i] = {i} end return #t" 0`,
}

var heavyRecipe = labRecipe{
	Acquire: []string{`EVAL "for i = 1, 50 do local s = string.rep('x', 100000) .. i end if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', 2000) then return 1 end return 0" 1 {key} {token}`},
	Release: []string{`EVAL "local t = {} for i = 1, 2000 do t[i] = { i } end if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0" 1 {key} {token}`},
}

// quietTally counts what bystanders' quiet scripts were answered.
type quietTally struct {
	mu                                        sync.Mutex
	ok, memory, timeout, refused, other, late int
	first                                     string // the first answer stopped for memory, or unexpected
	took                                      []time.Duration
}

func (q *quietTally) note(a answer, out string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case a.err != nil:
		q.late++
	case a.status == http.StatusTooManyRequests:
		q.refused++
	case strings.Contains(out, memoryError):
		q.memory++
		if q.first == "" {
			q.first = out
		}
	case strings.Contains(out, "stopped the script after"):
		q.timeout++
	case a.status == http.StatusOK && strings.TrimSpace(out) == "(integer) 1":
		q.ok++
		q.took = append(q.took, a.took)
	default:
		q.other++
		if q.first == "" {
			q.first = a.String()
		}
	}
}

func (q *quietTally) String() string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return fmt.Sprintf("%d answered 1, %d stopped for memory, %d at the deadline, %d refused by the script budget (429), %d other, %d late; p50 %v, p99 %v",
		q.ok, q.memory, q.timeout, q.refused, q.other, q.late,
		percentile(q.took, 0.5).Round(time.Millisecond), percentile(q.took, 0.99).Round(time.Millisecond))
}

// attackLuaMemory has learners at two addresses run scripts and lab
// checks that allocate hundreds of megabytes a second in the limited
// server's workers, while four bystanders, each at an address of its own,
// run scripts that keep nothing (EVAL "return 1" and a loop of
// arithmetic). A script is judged by what it holds, not by what the
// process allocated meanwhile: no bystander's script may be stopped for
// memory, as none is on the idle control server where the same
// bystanders run at the same time. A bomb that keeps what it allocates is
// still stopped with the memory error, on both servers.
func attackLuaMemory(t *testing.T, tg *target) {
	s := tg.limited
	const length = 12 * time.Second
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var heavy, heavyRefused, checks, checksRefused atomic.Int64
	var mu sync.Mutex
	checkStatus := map[int]int{}

	// Attackers: one address with two learners running heavy scripts,
	// another with two learners sending lab checks (one of the heavy
	// recipe, one of the textbook lock); the script budget gives each
	// address half a second of script time a second.
	textbook := labRecipe{
		Acquire: []string{"SET {key} {token} NX PX {ttl}"},
		Release: []string{`EVAL "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end" 1 {key} {token}`},
	}
	for l, recipe := range []labRecipe{heavyRecipe, textbook} {
		scripter, checker := newBrowser(s), newBrowser(s)
		scripter.xff, checker.xff = "192.0.2.10", "192.0.2.20"
		wg.Go(func() {
			for i := l; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				ans, _ := scripter.exec(fmt.Sprintf("luamem-heavy-%d", l), heavyScripts[i%len(heavyScripts)], scriptTimeout)
				heavy.Add(1)
				if ans.status == http.StatusTooManyRequests {
					heavyRefused.Add(1)
					time.Sleep(100 * time.Millisecond) // a client that backs off a little
				}
			}
		})
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				ans := checker.postJSON(mark("/api/lab/check", fmt.Sprintf("luamem-check-%d", l)), map[string]any{"recipe": recipe}, 30*time.Second)
				checks.Add(1)
				mu.Lock()
				checkStatus[ans.status]++
				mu.Unlock()
				if ans.status == http.StatusTooManyRequests {
					checksRefused.Add(1)
					time.Sleep(200 * time.Millisecond)
				}
			}
		})
	}

	// Bystanders, on the attacked server and on the control server.
	quiet := map[*server]*quietTally{s: {}, tg.control: {}}
	cpu0 := tg.mon.cpu()[s.name]
	var bwg sync.WaitGroup
	from := time.Now()
	for srv, tally := range quiet {
		for i := range 4 {
			b := newBrowser(srv)
			b.xff = fmt.Sprintf("203.0.113.%d", 50+i)
			bwg.Go(func() {
				// A learner typing, under the 2 script lines a second a
				// learner may send; not a wait.
				pace := time.NewTicker(600 * time.Millisecond)
				defer pace.Stop()
				for n := 0; time.Since(from) < length; n++ {
					line := quietReturn
					if n%2 == 1 {
						line = quietLoop
					}
					a, out := b.exec(fmt.Sprintf("luamem-quiet-%d", i), line, scriptTimeout)
					tally.note(a, out)
					<-pace.C
				}
			})
		}
	}

	// Bombs, at the start, in the middle and at the end of the attack,
	// each from a new learner, on both servers.
	bombs := map[*server][]string{}
	for range 3 {
		for _, srv := range []*server{s, tg.control} {
			bomber := newBrowser(srv)
			bomber.xff = "192.0.2.99"
			_, out := bomber.exec("luamem-bomb", bomb, scriptTimeout)
			bombs[srv] = append(bombs[srv], out)
		}
		time.Sleep(length / 3)
	}

	bwg.Wait()
	close(stop)
	wg.Wait()
	to := time.Now()

	t.Logf("attackers ran %d heavy scripts (%d refused by the script budget) and %d lab checks (%d refused; statuses %v) in %v; the attacked server used %v of CPU",
		heavy.Load(), heavyRefused.Load(), checks.Load(), checksRefused.Load(), checkStatus, to.Sub(from).Round(time.Millisecond), tg.mon.cpu()[s.name]-cpu0)
	t.Logf("bystanders' quiet scripts on the attacked server: %v", quiet[s])
	t.Logf("bystanders' quiet scripts on the idle control server: %v", quiet[tg.control])
	t.Logf("bombs on the attacked server: %q; on the control server: %q", bombs[s], bombs[tg.control])
	for srv, tally := range quiet {
		if tally.memory > 0 {
			t.Errorf("%s server: %d bystanders' scripts that keep nothing were stopped for memory; want 0 (first: %s)", srv.name, tally.memory, tally.first)
		}
		if tally.other+tally.late > 0 {
			t.Errorf("%s server: %d bystanders' scripts got an unexpected answer or none; first: %s", srv.name, tally.other+tally.late, tally.first)
		}
		if tally.ok < 20 {
			t.Errorf("%s server: only %d bystanders' scripts answered 1; the attack measured too little", srv.name, tally.ok)
		}
	}
	// A bomb is stopped for its memory, or at the deadline when the
	// machine is too busy for it to reach the limit within a second (it
	// takes some 10 ms alone); once at least on each server, it must be
	// the memory.
	for srv, outs := range bombs {
		memory := 0
		for _, out := range outs {
			switch {
			case strings.Contains(out, memoryError):
				memory++
			case !strings.Contains(out, "stopped the script after"):
				t.Errorf("%s server: a memory bomb was answered %q; want it stopped", srv.name, out)
			}
		}
		if memory == 0 {
			t.Errorf("%s server: no memory bomb of %d was stopped with %q", srv.name, len(outs), memoryError)
		}
	}
	tg.mon.checkPings(t, s, from, to, "while learners allocate in the workers")
}
