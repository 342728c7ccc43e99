// Package playgroundtest is the conformance suite of the playground's
// API: the behaviour that the in-process playground.Manager and package
// worker's Supervisor must share, run by the tests of both. Only tests
// import it.
package playgroundtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/fakeclock"
	"github.com/locklab/locklab/luaredis"
	"github.com/locklab/locklab/playground"
)

// Playground is the API under test: what the web layer uses of a
// playground, with the live count, the idle sweep and the shutdown the
// server needs.
type Playground interface {
	Exec(ctx context.Context, learner string, client playground.Client, line string) (playground.Result, error)
	Reset(learner string) error
	Advance(learner string, d time.Duration) (playground.Advanced, error)
	Keys(learner string) ([]playground.KeyInfo, error)
	Clock(learner string) (time.Time, error)
	Node(ctx context.Context, learner string, n int, op playground.NodeOp) (playground.NodeChange, error)
	Nodes(learner string) ([]playground.NodeInfo, error)
	Len() int
	Sweep(now time.Time) int
	Close()
}

// The lesson's lines: client A takes the lock and releases it by
// compare-and-delete with its own token.
const (
	acquireA = "SET lock:invoice:7 3f9a1c NX PX 30000"
	acquireB = "SET lock:invoice:7 9d8e7f NX PX 30000"
	releaseA = `EVAL "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end" 1 lock:invoice:7 3f9a1c`
	releaseB = `EVAL "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end" 1 lock:invoice:7 9d8e7f`
	// spin is a script that runs until its deadline.
	spin = `EVAL "while true do end" 0`
)

// scriptDeadline is the script deadline of the subtests that hit it: short,
// since they wait for it in real time.
const scriptDeadline = 100 * time.Millisecond

// Run runs the suite against playgrounds made by newPlayground, which
// must start one with opts (opts.Now is the suite's fake clock) and close
// it when the test ends; Close may then be called a second time.
func Run(t *testing.T, newPlayground func(t *testing.T, opts playground.Options) Playground) {
	start := func(t *testing.T, opts playground.Options) (*tester, *fakeclock.Clock) {
		t.Helper()
		clock := fakeclock.New(time.Time{})
		opts.Now = clock.Now
		return &tester{t: t, p: newPlayground(t, opts)}, clock
	}

	t.Run("LockCycle", func(t *testing.T) {
		p, _ := start(t, playground.Options{})
		p.steps([]step{
			{"ada", playground.ClientA, acquireA, "OK"},
			{"ada", playground.ClientB, acquireB, "(nil)"},
			{"ada", playground.ClientB, releaseB, "(integer) 0"},
			{"ada", playground.ClientA, "GET lock:invoice:7", `"3f9a1c"`},
			{"ada", playground.ClientA, releaseA, "(integer) 1"},
			{"ada", playground.ClientA, releaseA, "(integer) 0"},
			{"ada", playground.ClientB, acquireB, "OK"},
			{"ada", playground.ClientA, "PTTL lock:invoice:7", "(integer) 30000"},
		})
		if _, err := p.p.Exec(context.Background(), "ada", "Z", "PING"); !errors.Is(err, playground.ErrUnknownClient) {
			t.Errorf("Exec as client Z error = %v; want ErrUnknownClient", err)
		}
	})

	t.Run("Transactions", func(t *testing.T) {
		p, _ := start(t, playground.Options{})
		p.steps([]step{
			// Each client has its own transaction.
			{"ada", playground.ClientA, "MULTI", "OK"},
			{"ada", playground.ClientA, "INCR n", "QUEUED"},
			{"ada", playground.ClientB, "INCR n", "(integer) 1"},
			{"ada", playground.ClientA, "EXEC", "1) (integer) 2"},
			// A WATCH is invalidated by the other client's write.
			{"ada", playground.ClientA, "WATCH n", "OK"},
			{"ada", playground.ClientB, "SET n 10", "OK"},
			{"ada", playground.ClientA, "MULTI", "OK"},
			{"ada", playground.ClientA, "INCR n", "QUEUED"},
			{"ada", playground.ClientA, "EXEC", "(nil)"},
			{"ada", playground.ClientA, "GET n", `"10"`},
			// Unwatched, it goes through.
			{"ada", playground.ClientA, "WATCH n", "OK"},
			{"ada", playground.ClientA, "MULTI", "OK"},
			{"ada", playground.ClientA, "INCR n", "QUEUED"},
			{"ada", playground.ClientA, "EXEC", "1) (integer) 11"},
		})
	})

	t.Run("LearnersIsolated", func(t *testing.T) {
		p, _ := start(t, playground.Options{})
		p.steps([]step{
			{"ada", playground.ClientA, "SET k ada", "OK"},
			{"bob", playground.ClientA, "SET k bob", "OK"},
			{"ada", playground.ClientB, "GET k", `"ada"`},
			{"bob", playground.ClientB, "GET k", `"bob"`},
			{"cyd", playground.ClientA, acquireA, "OK"},
			{"dan", playground.ClientA, acquireA, "OK"},
		})
		if keys, err := p.p.Keys("nobody"); err != nil || keys == nil || len(keys) != 0 {
			t.Errorf("Keys(nobody) = %#v, %v; want an empty list", keys, err)
		}
		if n := p.p.Len(); n != 4 {
			t.Errorf("Len() = %d; want 4 (Keys must not create a sandbox)", n)
		}
	})

	t.Run("Reset", func(t *testing.T) {
		p, clock := start(t, playground.Options{})
		p.steps([]step{{"ada", playground.ClientA, "SET k v", "OK"}, {"bob", playground.ClientA, "SET k v", "OK"}})
		if _, err := p.p.Advance("ada", time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := p.p.Reset("ada"); err != nil {
			t.Fatal(err)
		}
		if res := p.exec("ada", playground.ClientA, "DBSIZE"); res.Output != "(integer) 0" || res.Notice != "" {
			t.Errorf("DBSIZE after Reset = %+v; want 0 and no notice", res)
		}
		if c, err := p.p.Clock("ada"); err != nil || !c.Equal(clock.Now()) {
			t.Errorf("Clock(ada) after Reset = %v, %v; want the real clock %v", c, err, clock.Now())
		}
		p.steps([]step{{"bob", playground.ClientA, "DBSIZE", "(integer) 1"}})
	})

	t.Run("AdvanceAndClock", func(t *testing.T) {
		p, clock := start(t, playground.Options{})
		if c, err := p.p.Clock("nobody"); err != nil || !c.Equal(clock.Now()) {
			t.Errorf("Clock(nobody) = %v, %v; want the real clock %v", c, err, clock.Now())
		}
		p.steps([]step{{"ada", playground.ClientA, acquireA, "OK"}})
		a, err := p.p.Advance("ada", 10*time.Second)
		now := a.Now
		if want := clock.Now().Add(10 * time.Second); err != nil || !now.Equal(want) || a.Expired == nil || len(a.Expired) != 0 {
			t.Errorf("Advance(10s) = %v, %v; want %v and no key expired", a, err, want)
		}
		if c, _ := p.p.Clock("ada"); !c.Equal(now) {
			t.Errorf("Clock(ada) = %v; want %v", c, now)
		}
		if res := p.exec("ada", playground.ClientA, "PTTL lock:invoice:7"); res.Output != "(integer) 20000" || res.ClockMS != now.UnixMilli() {
			t.Errorf("PTTL after Advance(10s) = %+v; want 20000 at %d", res, now.UnixMilli())
		}
		// The real clock moves the sandbox clock too.
		clock.Add(15 * time.Second)
		p.steps([]step{
			{"ada", playground.ClientA, "PTTL lock:invoice:7", "(integer) 5000"},
			{"ada", playground.ClientA, "SET later v PX 5001", "OK"},
			{"ada", playground.ClientA, "SET gone v PX 100", "OK"},
		})
		// A key the real clock ran out before the advance is not the
		// advance's; one due a millisecond after it is still there.
		clock.Add(time.Second)
		if a, err := p.p.Advance("ada", 4*time.Second); err != nil || fmt.Sprint(a.Expired) != "[lock:invoice:7]" {
			t.Errorf("Advance(4s) = %v, %v; want lock:invoice:7 expired", a, err)
		}
		p.steps([]step{
			{"ada", playground.ClientA, "GET lock:invoice:7", "(nil)"},
			{"ada", playground.ClientB, acquireB, "OK"},
		})
		for _, d := range []time.Duration{0, -time.Second, 25 * time.Hour} {
			if _, err := p.p.Advance("ada", d); !errors.Is(err, playground.ErrBadAdvance) {
				t.Errorf("Advance(%v) error = %v; want ErrBadAdvance", d, err)
			}
		}
		// Another learner's clock did not move.
		if c, _ := p.p.Clock("bob"); !c.Equal(clock.Now()) {
			t.Errorf("Clock(bob) = %v; want the real clock %v", c, clock.Now())
		}
	})

	t.Run("Keys", func(t *testing.T) {
		p, _ := start(t, playground.Options{})
		p.steps([]step{
			{"ada", playground.ClientA, acquireA, "OK"},
			{"ada", playground.ClientA, "HSET h f v", "(integer) 1"},
			{"ada", playground.ClientA, "RPUSH l a b", "(integer) 2"},
			{"ada", playground.ClientA, "SET long " + strings.Repeat("x", 100), "OK"},
		})
		if _, err := p.p.Advance("ada", time.Second); err != nil {
			t.Fatal(err)
		}
		keys, err := p.p.Keys("ada")
		if err != nil || len(keys) != 4 {
			t.Fatalf("Keys(ada) = %v, %v; want 4 keys", keys, err)
		}
		got := fmt.Sprint(keys)
		want := fmt.Sprint([]playground.KeyInfo{
			{Key: "h", Type: "hash", Value: `{"f": "v"}`, PTTLMS: -1, Node: 1},
			{Key: "l", Type: "list", Value: `["a", "b"]`, PTTLMS: -1, Node: 1},
			{Key: "lock:invoice:7", Type: "string", Value: `"3f9a1c"`, PTTLMS: 29000, Node: 1},
			{Key: "long", Type: "string", Value: keys[len(keys)-1].Value, PTTLMS: -1, Node: 1},
		})
		if got != want {
			t.Errorf("Keys(ada) =\n%s\nwant\n%s", got, want)
		}
		if v := keys[len(keys)-1].Value; len(v) > 70 || !strings.HasPrefix(v, `"xxx`) {
			t.Errorf("preview of a 100-byte value = %q; want it cut to about 60 characters", v)
		}
		// A line comes with the listing after it.
		res := p.exec("ada", playground.ClientA, "DEL h l long")
		if res.Output != "(integer) 3" || fmt.Sprint(res.Keys) != fmt.Sprint(keys[2:3]) {
			t.Errorf("DEL h l long = %q with keys %v; want 3 and only %v left", res.Output, res.Keys, keys[2:3])
		}
		if res := p.exec("bob", playground.ClientA, "PING"); res.Keys == nil || len(res.Keys) != 0 {
			t.Errorf("PING in a new sandbox came with keys %v; want an empty listing, not none", res.Keys)
		}
	})

	t.Run("IdleNotice", func(t *testing.T) {
		p, clock := start(t, playground.Options{IdleTimeout: 30 * time.Minute})
		p.steps([]step{{"ada", playground.ClientA, "SET k v", "OK"}, {"bob", playground.ClientA, "SET k v", "OK"}})
		clock.Add(29 * time.Minute)
		if n := p.p.Sweep(clock.Now()); n != 0 {
			t.Errorf("Sweep after 29 minutes = %d; want nothing dropped", n)
		}
		p.steps([]step{{"bob", playground.ClientA, "GET k", `"v"`}})
		clock.Add(2 * time.Minute)
		if n := p.p.Sweep(clock.Now()); n != 1 {
			t.Errorf("Sweep after 31 minutes = %d; want ada's sandbox dropped", n)
		}
		if n := p.p.Len(); n != 1 {
			t.Errorf("Len() after Sweep = %d; want 1", n)
		}
		const notice = "Your sandbox was idle for 30 minutes and was reset."
		if res := p.exec("ada", playground.ClientA, "GET k"); res.Output != "(nil)" || res.Notice != notice {
			t.Errorf("ada's GET k after Sweep = %+v; want (nil) and the notice %q", res, notice)
		}
		if res := p.exec("ada", playground.ClientA, "PING"); res.Notice != "" {
			t.Errorf("second command after the reset has notice %q; want it only once", res.Notice)
		}
		if res := p.exec("bob", playground.ClientA, "GET k"); res.Output != `"v"` || res.Notice != "" {
			t.Errorf("bob's GET k = %+v; want his sandbox kept", res)
		}
		// Without a Sweep, the next command finds the sandbox too old.
		clock.Add(31 * time.Minute)
		if res := p.exec("bob", playground.ClientB, "GET k"); res.Output != "(nil)" || res.Notice != notice {
			t.Errorf("bob's GET k after 31 idle minutes = %+v; want (nil) and the notice %q", res, notice)
		}
	})

	t.Run("DataBudgetDropsIdle", func(t *testing.T) {
		fill := func(key string) string { return "SET " + key + " " + strings.Repeat("x", 4000) }
		p, clock := start(t, playground.Options{
			Limits:       playground.Limits{MaxDataBytes: 10_000, MaxValueBytes: 4000},
			MaxDataBytes: 25_000,
			ActiveFor:    time.Minute,
		})
		for _, learner := range []string{"ada", "bob"} {
			p.steps([]step{{learner, playground.ClientA, fill("k1"), "OK"}, {learner, playground.ClientA, fill("k2"), "OK"}})
			clock.Add(time.Second)
		}
		p.steps([]step{{"eve", playground.ClientA, "PING", "PONG"}}) // idle later, but holds no data
		clock.Add(2 * time.Minute)
		// cyd needs room for a full sandbox: ada's, the least recently
		// used idle one with data, makes it.
		p.steps([]step{{"cyd", playground.ClientA, fill("k1"), "OK"}})
		for _, learner := range []string{"bob", "eve"} {
			if res := p.exec(learner, playground.ClientA, "DBSIZE"); res.Notice != "" {
				t.Errorf("%s's DBSIZE = %+v; want the sandbox kept", learner, res)
			}
		}
		const notice = "The playground was full, so your sandbox, idle for a while, was reset to make room for other learners' data."
		if res := p.exec("ada", playground.ClientA, "DBSIZE"); res.Output != "(integer) 0" || res.Notice != notice {
			t.Errorf("ada's DBSIZE = %+v; want a fresh sandbox with the notice %q", res, notice)
		}
	})

	t.Run("Refusals", func(t *testing.T) {
		p, _ := start(t, playground.Options{Limits: playground.Limits{MaxValueBytes: 100, MaxRepeat: 5}})
		for _, tt := range []struct {
			line, want string
			err        error
		}{
			{"SUBSCRIBE news", "(error) ERR the playground does not support SUBSCRIBE", playground.ErrNotAllowed},
			{"CONFIG SET maxmemory 1", "(error) ERR the playground does not support CONFIG", playground.ErrNotAllowed},
			{"SET k " + strings.Repeat("v", 101), "(error) ERR ", playground.ErrLimit},
			{"6 PING", "(error) ERR the playground repeats a command at most 5 times", playground.ErrLimit},
		} {
			res, err := p.p.Exec(context.Background(), "ada", playground.ClientA, tt.line)
			if !errors.Is(err, tt.err) || !strings.HasPrefix(res.Output, tt.want) {
				t.Errorf("%.30s = %q, %v; want %q..., %v", tt.line, res.Output, err, tt.want, tt.err)
			}
		}
		p.steps([]step{{"ada", playground.ClientA, "DBSIZE", "(integer) 0"}, {"ada", playground.ClientA, "5 PING", "PONG\nPONG\nPONG\nPONG\nPONG"}})
	})

	t.Run("DataBudget", func(t *testing.T) {
		fill := func(key string) string { return "SET " + key + " " + strings.Repeat("x", 4000) } // 4,093 bytes
		p, _ := start(t, playground.Options{
			Limits:       playground.Limits{MaxDataBytes: 10_000, MaxValueBytes: 4000},
			MaxDataBytes: 22_000,
		})
		for _, learner := range []string{"ada", "bob"} {
			p.steps([]step{{learner, playground.ClientA, fill("k1"), "OK"}, {learner, playground.ClientA, fill("k2"), "OK"}})
		}
		p.steps([]step{{"cyd", playground.ClientA, fill("k1"), "OK"}})
		res, err := p.p.Exec(context.Background(), "cyd", playground.ClientA, fill("k2"))
		const want = "(error) ERR the playground is full right now"
		if !errors.Is(err, playground.ErrLimit) || !strings.HasPrefix(res.Output, want) {
			t.Errorf("cyd's second SET = %q, %v; want %q..., ErrLimit", res.Output, err, want)
		}
		p.steps([]step{
			{"cyd", playground.ClientA, "EXISTS k2", "(integer) 0"},
			{"ada", playground.ClientA, "DBSIZE", "(integer) 2"},
			{"bob", playground.ClientA, "DBSIZE", "(integer) 2"},
			{"cyd", playground.ClientA, "DEL k1", "(integer) 1"},
			{"cyd", playground.ClientA, fill("k2"), "OK"},
		})
	})

	t.Run("PerAddressCap", func(t *testing.T) {
		p, clock := start(t, playground.Options{MaxPerAddress: 2})
		from := func(learner, addr, line string) playground.Result {
			t.Helper()
			res, err := p.p.Exec(playground.WithAddress(context.Background(), addr), learner, playground.ClientA, line)
			if err != nil {
				t.Fatalf("%s from %s: %s: %v", learner, addr, line, err)
			}
			return res
		}
		for _, learner := range []string{"ada", "bob"} {
			from(learner, "10.0.0.1", "SET k "+learner)
			clock.Add(time.Second)
		}
		from("ada", "10.0.0.1", "PING") // bob is now the least recently used
		from("dan", "10.0.0.2", "SET k dan")
		from("cyd", "10.0.0.1", "SET k cyd")
		if n := p.p.Len(); n != 3 {
			t.Errorf("Len() = %d; want 3 (ada, cyd, dan)", n)
		}
		for _, learner := range []string{"ada", "cyd", "dan"} {
			p.steps([]step{{learner, playground.ClientA, "GET k", `"` + learner + `"`}})
		}
		if res := from("bob", "10.0.0.2", "GET k"); res.Output != "(nil)" || !strings.Contains(res.Notice, "network address") {
			t.Errorf("bob's GET k = %+v; want a fresh sandbox with the notice about his address", res)
		}
	})

	t.Run("RepeatDeadline", func(t *testing.T) {
		p, _ := start(t, playground.Options{Limits: playground.Limits{Script: scriptLimits()}})
		res, _ := p.p.Exec(context.Background(), "ada", playground.ClientA, "5 "+spin)
		const note = "(the playground did not run the other 4: this line's scripts used up its 100ms)"
		if !strings.HasSuffix(res.Output, note) || strings.Count(res.Output, "stopped the script after 100ms") != 1 {
			t.Errorf("5 spins = %q; want one stopped script and the note %q", res.Output, note)
		}
		// Measured apart from the deadline's own timer, it can fall a
		// little short of it.
		if res.ScriptTime < scriptDeadline/2 {
			t.Errorf("ScriptTime of 5 spins = %v; want about the %v deadline", res.ScriptTime, scriptDeadline)
		}
		p.steps([]step{{"ada", playground.ClientB, "PING", "PONG"}})
	})

	t.Run("ScriptTime", func(t *testing.T) {
		p, _ := start(t, playground.Options{})
		if res := p.exec("ada", playground.ClientA, acquireA); res.ScriptTime != 0 {
			t.Errorf("ScriptTime of SET = %v; want 0", res.ScriptTime)
		}
		if res := p.exec("ada", playground.ClientA, `EVAL "for i = 1, 10000 do end return 1" 0`); res.Output != "(integer) 1" || res.ScriptTime <= 0 {
			t.Errorf("EVAL = %q with ScriptTime %v; want (integer) 1 and a ScriptTime above 0", res.Output, res.ScriptTime)
		}
	})

	// Stopped tells the lines the playground had to stop a script of
	// (at its deadline, for its memory, in a repeat count or a
	// transaction) from those that ended by themselves, errors included.
	t.Run("Stopped", func(t *testing.T) {
		limits := scriptLimits()
		limits.MaxAllocBytes = 4 << 20
		p, _ := start(t, playground.Options{Limits: playground.Limits{Script: limits}})
		for _, tt := range []struct {
			lines []string
			want  bool
		}{
			{[]string{spin}, true},
			{[]string{`EVAL "local t = {} for i = 1, 1e8 do t[i] = i end" 0`}, true},
			{[]string{"2 " + spin}, true},
			{[]string{"MULTI", spin, "EXEC"}, true},
			{[]string{`EVAL "return 1" 0`}, false},
			{[]string{`EVAL "return redis.call('NOSUCH')" 0`}, false},
			{[]string{`EVAL "error('mine')" 0`}, false},
			{[]string{"SET k v"}, false},
		} {
			var res playground.Result
			for _, line := range tt.lines {
				res, _ = p.p.Exec(context.Background(), "ada", playground.ClientA, line)
			}
			if res.Stopped != tt.want {
				t.Errorf("%q: Stopped = %v (output %.80q); want %v", tt.lines, res.Stopped, res.Output, tt.want)
			}
		}
	})

	t.Run("Concurrent", func(t *testing.T) {
		p, clock := start(t, playground.Options{IdleTimeout: time.Minute})
		var wg sync.WaitGroup
		for g := range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				learner := fmt.Sprintf("learner-%d", g)
				for i := range 20 {
					for _, st := range []step{
						{learner, playground.ClientA, acquireA, "OK"},
						{learner, playground.ClientB, acquireB, "(nil)"},
						{learner, playground.ClientA, releaseA, "(integer) 1"},
						{learner, playground.ClientB, "INCR n", fmt.Sprintf("(integer) %d", i+1)},
					} {
						res, err := p.p.Exec(context.Background(), st.learner, st.client, st.line)
						if err != nil || res.Output != st.want {
							t.Errorf("%s %s> %.30s = %q, %v; want %q", st.learner, st.client, st.line, res.Output, err, st.want)
						}
					}
					if keys, err := p.p.Keys(learner); err != nil || len(keys) != 1 {
						t.Errorf("Keys(%s) = %v, %v; want n only", learner, keys, err)
					}
					p.p.Sweep(clock.Now()) // drops nobody: the clock does not move
				}
			}()
		}
		wg.Wait()
		if n := p.p.Len(); n != 6 {
			t.Errorf("Len() = %d; want 6", n)
		}
	})

	t.Run("Nodes", func(t *testing.T) { runNodes(t, start) })
	t.Run("NodeLines", func(t *testing.T) { runNodeLines(t, start) })
	t.Run("PersistKeepsTheVote", func(t *testing.T) { runPersistKeepsTheVote(t, start) })

	t.Run("Closed", func(t *testing.T) {
		p, _ := start(t, playground.Options{})
		p.steps([]step{{"ada", playground.ClientA, "PING", "PONG"}})
		p.p.Close()
		if _, err := p.p.Exec(context.Background(), "ada", playground.ClientA, "PING"); !errors.Is(err, playground.ErrClosed) {
			t.Errorf("Exec after Close error = %v; want ErrClosed", err)
		}
		if _, err := p.p.Exec(context.Background(), "bob", playground.ClientA, "PING"); !errors.Is(err, playground.ErrClosed) {
			t.Errorf("Exec of a new learner after Close error = %v; want ErrClosed", err)
		}
	})
}

// scriptLimits are the script limits of the subtests that wait for the
// deadline.
func scriptLimits() luaredis.Limits { return luaredis.Limits{Timeout: scriptDeadline} }

// tester runs lines and reports what differs.
type tester struct {
	t *testing.T
	p Playground
}

type step struct {
	learner string
	client  playground.Client
	line    string
	want    string
}

func (p *tester) steps(steps []step) {
	p.t.Helper()
	for _, st := range steps {
		res, err := p.p.Exec(context.Background(), st.learner, st.client, st.line)
		if err != nil || res.Output != st.want {
			p.t.Errorf("%s %s> %.40s = %q, %v; want %q", st.learner, st.client, st.line, res.Output, err, st.want)
		}
	}
}

func (p *tester) exec(learner string, client playground.Client, line string) playground.Result {
	p.t.Helper()
	res, err := p.p.Exec(context.Background(), learner, client, line)
	if err != nil {
		p.t.Fatalf("%s %s> %.40s: %v", learner, client, line, err)
	}
	return res
}
