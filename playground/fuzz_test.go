package playground

import (
	"context"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/testenv"

	"github.com/alicebob/miniredis/v2/server"

	"github.com/locklab/locklab/luaredis"
)

// FuzzExec types arbitrary lines into one sandbox as either client. No
// line may panic (which runSafely would report as an internal error), hang,
// or leave the sandbox unable to answer PING.
func FuzzExec(f *testing.F) {
	for _, s := range []string{
		acquireLine, lessonRelease, "MULTI", "EXEC", "WATCH k", "SETRANGE k 5 x", "SETBIT k 7 1",
		"SRANDMEMBER s -3", "EVAL \"return {1,{2}}\" 0", "EVAL \"return redis.call('INCR', KEYS[1])\" 1 n",
		"ZADD z 1 a", "ZRANGEBYSCORE z -inf +inf", "LPOS l a RANK -1", "GETEX k PX 10", "3 RPUSH l a",
		"HRANDFIELD h -5 WITHVALUES", "SCAN 0 MATCH * COUNT 10", "OBJECT IDLETIME k", "\"unclosed", "help",
	} {
		f.Add(s, false)
	}
	s, err := NewSandbox(SandboxOptions{
		Now:    newFakeClock().Now,
		Limits: Limits{Script: luaredis.Limits{Timeout: 50 * time.Millisecond}},
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(s.Close)
	f.Fuzz(func(t *testing.T, line string, asB bool) {
		client := ClientA
		if asB {
			client = ClientB
		}
		res, err := s.Exec(context.Background(), client, line)
		if strings.Contains(res.Output, "internal error") {
			t.Fatalf("Exec(%q) = %q", line, res.Output)
		}
		if err != nil && res.Output == "" {
			t.Fatalf("Exec(%q) error %v without output", line, err)
		}
		// DISCARD ends any transaction the line opened; PING must answer.
		s.Exec(context.Background(), client, "DISCARD")
		if res, _ := s.Exec(context.Background(), client, "PING"); res.Output != "PONG" {
			t.Fatalf("PING after %q = %q", line, res.Output)
		}
	})
}

// TestRandomCommandsDoNotPanic types many random commands built from the
// allowed names and arguments that miniredis finds awkward (extreme
// numbers, options out of place, odd patterns). It found the empty *STORE
// results and negative SCAN cursors that used to panic inside miniredis.
func TestRandomCommandsDoNotPanic(t *testing.T) {
	n := 50_000
	if !testenv.SlowTier() {
		n = 5_000
	}
	names := allowedInSource(t)
	vocab := strings.Fields(`k l h s z 0 1 -1 2 -2 9223372036854775807 -9223372036854775808
		18446744073709551616 1.5 nan inf -inf +inf (1 [a - + ( [ * ? [z-a] NX XX GT LT PX EX
		KEEPTTL GET WITHSCORES LIMIT COUNT MATCH TYPE RANK MAXLEN LEFT RIGHT BEFORE AFTER BYSCORE
		BYLEX REV MIN MAX WEIGHTS AGGREGATE SUM WITHVALUES IDLETIME LOAD EXISTS FLUSH ABSTTL
		PERSIST EXAT PXAT INCR CH BIT BYTE DB REPLACE`)
	vocab = append(vocab, "")
	s := newTestSandbox(t, newFakeClock(), Limits{Script: scriptLimitsForTests()})
	r := rand.New(rand.NewSource(1))
	for i := range n {
		argv := []string{names[r.Intn(len(names))]}
		for range r.Intn(7) {
			argv = append(argv, vocab[r.Intn(len(vocab))])
		}
		var line strings.Builder
		for _, a := range argv {
			line.WriteString(Quote(a) + " ")
		}
		res, _ := s.Exec(context.Background(), ClientA, line.String())
		if strings.Contains(res.Output, "internal error") {
			t.Fatalf("Exec(%q) = %q", line.String(), res.Output)
		}
		if i%100 == 0 {
			s.Exec(context.Background(), ClientA, "DISCARD")
		}
	}
}

// TestPanicInsideMiniredis simulates a miniredis command that panics with
// its lock held: the learner gets an error and an emptied, working sandbox
// instead of one that hangs forever.
func TestPanicInsideMiniredis(t *testing.T) {
	s := newTestSandbox(t, newFakeClock(), Limits{})
	runSteps(t, s, []step{{ClientA, "SET k v", "OK"}})
	s.srv.SetPreHook(func(p *server.Peer, cmd string, args ...string) bool {
		if cmd == "ECHO" {
			s.m.Lock()
			panic("boom")
		}
		return s.hook(p, cmd, args...)
	})
	res, _ := s.Exec(context.Background(), ClientA, "ECHO hi")
	if want := "(error) ERR the playground failed to run ECHO (internal error: boom); your sandbox had to be emptied"; res.Output != want {
		t.Errorf("ECHO = %q; want %q", res.Output, want)
	}
	runSteps(t, s, []step{
		{ClientA, "GET k", "(nil)"},
		{ClientB, "ECHO hi", `"hi"`},
		{ClientA, lessonRelease, "(integer) 0"},
	})
}

// TestPanicInsideScriptCommand is TestPanicInsideMiniredis for a command a
// script runs, where gopher-lua would otherwise catch the panic.
func TestPanicInsideScriptCommand(t *testing.T) {
	s := newTestSandbox(t, newFakeClock(), Limits{})
	runSteps(t, s, []step{{ClientA, "SET k v", "OK"}})
	s.srv.SetPreHook(func(p *server.Peer, cmd string, args ...string) bool {
		if cmd == "ECHO" {
			s.m.Lock()
			panic("boom")
		}
		return s.hook(p, cmd, args...)
	})
	res, _ := s.Exec(context.Background(), ClientA, `EVAL "pcall(redis.call, 'ECHO', 'x') return redis.call('GET', 'k')" 0`)
	if want := "(error) ERR the playground stopped your script: it failed to run ECHO (internal error: boom); your sandbox had to be emptied"; res.Output != want {
		t.Errorf("EVAL = %q; want %q", res.Output, want)
	}
	runSteps(t, s, []step{{ClientB, "GET k", "(nil)"}})
}
