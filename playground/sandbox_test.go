package playground

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/fakeclock"
)

// newTestSandbox returns a sandbox on clock with limits, closed when the
// test ends.
func newTestSandbox(t *testing.T, clock *fakeclock.Clock, limits Limits) *Sandbox {
	t.Helper()
	s, err := NewSandbox(SandboxOptions{Now: clock.Now, Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// step is one line typed in a test and what it must print.
type step struct {
	client Client
	line   string
	want   string
}

func runSteps(t *testing.T, s *Sandbox, steps []step) {
	t.Helper()
	for _, st := range steps {
		res, _ := s.Exec(context.Background(), st.client, st.line)
		if res.Output != st.want {
			t.Errorf("%s> %s = %q; want %q", st.client, st.line, res.Output, st.want)
		}
	}
}

// TestTwoClients is the lesson's race between two clients, and MULTI and
// WATCH belonging to the client that sent them.
func TestTwoClients(t *testing.T) {
	s := newTestSandbox(t, newFakeClock(), Limits{})
	runSteps(t, s, []step{
		{ClientA, "SET lock:invoice:7 3f9a1c NX PX 30000", "OK"},
		{ClientB, "SET lock:invoice:7 9b2e77 NX PX 30000", "(nil)"},
		{ClientB, "GET lock:invoice:7", `"3f9a1c"`},
		// A transaction is A's alone: B's commands run at once.
		{ClientA, "MULTI", "OK"},
		{ClientA, "INCR fence", "QUEUED"},
		{ClientB, "INCR fence", "(integer) 1"},
		{ClientB, "EXEC", "(error) ERR EXEC without MULTI"},
		{ClientA, "EXEC", "1) (integer) 2"},
		// B watches the lock; A's write makes B's transaction fail.
		{ClientB, "WATCH lock:invoice:7", "OK"},
		{ClientA, "SET lock:invoice:7 3f9a1c XX PX 30000", "OK"},
		{ClientB, "MULTI", "OK"},
		{ClientB, "SET lock:invoice:7 9b2e77", "QUEUED"},
		{ClientB, "EXEC", "(nil)"},
		{ClientB, "GET lock:invoice:7", `"3f9a1c"`},
		// A's WATCH is not invalidated by B's writes to other keys.
		{ClientA, "WATCH lock:invoice:7", "OK"},
		{ClientB, "SET other 1", "OK"},
		{ClientA, "MULTI", "OK"},
		{ClientA, lessonRelease, "QUEUED"},
		{ClientA, "EXEC", "1) (integer) 1"},
		{ClientB, "SET lock:invoice:7 9b2e77 NX PX 30000", "OK"},
	})
}

// TestTTLOnTheSandboxClock moves the sandbox clock instead of sleeping.
func TestTTLOnTheSandboxClock(t *testing.T) {
	clock := newFakeClock()
	s := newTestSandbox(t, clock, Limits{})
	runSteps(t, s, []step{
		{ClientA, "SET lock:invoice:7 3f9a1c NX PX 1500", "OK"},
		{ClientA, "PTTL lock:invoice:7", "(integer) 1500"},
		{ClientA, "TTL lock:invoice:7", "(integer) 2"},
	})
	if _, err := s.Advance(time.Second); err != nil {
		t.Fatal(err)
	}
	runSteps(t, s, []step{
		{ClientA, "PTTL lock:invoice:7", "(integer) 500"},
		{ClientB, "SET lock:invoice:7 9b2e77 NX PX 30000", "(nil)"},
	})
	// Real time passes too.
	clock.Add(499 * time.Millisecond)
	runSteps(t, s, []step{{ClientA, "PTTL lock:invoice:7", "(integer) 1"}})
	clock.Add(time.Millisecond)
	runSteps(t, s, []step{
		{ClientA, "GET lock:invoice:7", "(nil)"},
		{ClientB, "SET lock:invoice:7 9b2e77 NX PX 30000", "OK"},
	})
	before := s.Now()
	if _, err := s.Advance(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	if got := s.Now().Sub(before); got != 30*time.Second {
		t.Errorf("Now() moved %v after Advance(30s); want 30s", got)
	}
	keys, err := s.Keys()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 0 {
		t.Errorf("Keys() = %v after the TTL ran out; want none", keys)
	}
	for _, d := range []time.Duration{0, -time.Second, 25 * time.Hour} {
		if _, err := s.Advance(d); !errors.Is(err, ErrBadAdvance) {
			t.Errorf("Advance(%v) error = %v; want ErrBadAdvance", d, err)
		}
	}
}

func TestTTLRounding(t *testing.T) {
	clock := newFakeClock()
	s := newTestSandbox(t, clock, Limits{})
	runSteps(t, s, []step{{ClientA, "SET k v EX 100", "OK"}})
	clock.Add(500 * time.Millisecond)
	runSteps(t, s, []step{{ClientA, "TTL k", "(integer) 100"}})
	clock.Add(time.Millisecond)
	runSteps(t, s, []step{{ClientA, "TTL k", "(integer) 99"}})
	want := clock.Now().Add(99499 * time.Millisecond)
	runSteps(t, s, []step{
		{ClientA, "PEXPIRETIME k", "(integer) " + itoa(want.UnixMilli())},
		{ClientA, "TTL nokey", "(integer) -2"},
		{ClientA, "EXPIRETIME nokey", "(integer) -2"},
	})
}

func itoa(n int64) string {
	return strings.TrimSpace(strings.Replace(Format(intValue(n)), "(integer) ", "", 1))
}

func TestKeys(t *testing.T) {
	clock := newFakeClock()
	s := newTestSandbox(t, clock, Limits{})
	runSteps(t, s, []step{
		{ClientA, "SET lock:invoice:7 3f9a1c PX 30000", "OK"},
		{ClientA, `SET bin "a\x00\n"`, "OK"},
		{ClientA, "HSET h b 2 a 1", "(integer) 2"},
		{ClientA, "RPUSH l x y", "(integer) 2"},
		{ClientA, "SADD s b a", "(integer) 2"},
		{ClientA, "ZADD z 2 b 1.5 a", "(integer) 2"},
		{ClientA, "SET long " + strings.Repeat("x", 100), "OK"},
	})
	clock.Add(10 * time.Second)
	got, err := s.Keys()
	if err != nil {
		t.Fatal(err)
	}
	want := []KeyInfo{
		{"bin", "string", `"a\x00\n"`, -1, 0},
		{"h", "hash", `{"a": "1", "b": "2"}`, -1, 0},
		{"l", "list", `["x", "y"]`, -1, 0},
		{"lock:invoice:7", "string", `"3f9a1c"`, 20000, 0},
		{"long", "string", `"` + strings.Repeat("x", 58) + "…", -1, 0},
		{"s", "set", `{"a", "b"}`, -1, 0},
		{"z", "zset", `{"a": 1.5, "b": 2}`, -1, 0},
	}
	if len(got) != len(want) {
		t.Fatalf("Keys() = %v; want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Keys()[%d] = %+v; want %+v", i, got[i], want[i])
		}
	}
}

func TestRefusals(t *testing.T) {
	s := newTestSandbox(t, newFakeClock(), Limits{})
	for _, tt := range []struct {
		line string
		want string
	}{
		{"SUBSCRIBE news", "(error) ERR the playground does not support SUBSCRIBE: it would keep your connection waiting for messages"},
		{"BLPOP queue 0", "(error) ERR the playground does not support BLPOP: it blocks the connection until data arrives, which would hold up your sandbox; use LPOP, which does not wait (after MULTI it is queued and runs without waiting, as in Redis)"},
		{"HELLO 3", "(error) ERR the playground does not support HELLO: it switches the protocol; the playground speaks RESP2 like a plain redis-cli"},
		{"CLIENT KILL ID 1", "(error) ERR the playground does not support CLIENT KILL: your two clients A and B are fixed; there are no others to list or kill, and only their names (SETNAME, GETNAME) can be set"},
		{"CLIENT LIST", "(error) ERR the playground does not support CLIENT LIST: your two clients A and B are fixed; there are no others to list or kill, and only their names (SETNAME, GETNAME) can be set"},
		{"DEBUG SLEEP 10", "(error) ERR the playground does not support DEBUG: it manages the server itself, and the playground's server is shared"},
		{"CONFIG SET maxmemory 1", "(error) ERR the playground does not support CONFIG: it manages the server itself, and the playground's server is shared"},
		{"SHUTDOWN", "(error) ERR the playground does not support SHUTDOWN: it manages the server itself, and the playground's server is shared"},
		{"MONITOR", "(error) ERR the playground does not support MONITOR: it would turn your connection into a feed of every command"},
		{"SELECT 1", "(error) ERR the playground does not support SELECT 1: a sandbox has only database 0"},
		{"SELECT 15", "(error) ERR the playground does not support SELECT 15: a sandbox has only database 0"},
		{"SWAPDB 0 1", "(error) ERR the playground does not support SWAPDB: a sandbox has only database 0"},
		{"MOVE k 1", "(error) ERR the playground does not support MOVE: a sandbox has only database 0"},
		{"MIGRATE h 1 k 0 10", "(error) ERR the playground does not support MIGRATE: it moves keys between servers, and a sandbox cannot reach another server"},
		{"RESTORE k 0 x", "(error) ERR the playground does not support RESTORE: it moves keys between servers, and a sandbox cannot reach another server"},
		{"AUTH pw", "(error) ERR the playground does not support AUTH: a sandbox has no users or passwords"},
		{"XADD s * f v", "(error) ERR the playground does not support XADD: streams are not part of this course"},
		{"PFADD h a", "(error) ERR the playground does not support PFADD: it is not part of this course"},
	} {
		res, err := s.Exec(context.Background(), ClientA, tt.line)
		if res.Output != tt.want {
			t.Errorf("Exec(%q) = %q; want %q", tt.line, res.Output, tt.want)
		}
		var ref *RefusedError
		if !errors.Is(err, ErrNotAllowed) || !errors.As(err, &ref) || "(error) "+ref.Msg != tt.want {
			t.Errorf("Exec(%q) error = %v; want a RefusedError matching ErrNotAllowed", tt.line, err)
		}
	}
	// Inside a script, Redis's own refusal comes first.
	runSteps(t, s, []step{
		{ClientA, `EVAL "return redis.call('SUBSCRIBE', 'x')" 0`, "(error) ERR This Redis command is not allowed from script script: " + sha1hex("return redis.call('SUBSCRIBE', 'x')") + ", on @user_script:1."},
		{ClientA, `EVAL "return redis.call('PFADD', 'x', 'a')" 0`, "(error) ERR the playground does not support PFADD: it is not part of this course script: " + sha1hex("return redis.call('PFADD', 'x', 'a')") + ", on @user_script:1."},
	})
}

// TestKeyLimitLetsKeysGo checks that a sandbox at its key limit still
// runs the commands that add no key, however many keys they name: DEL of
// keys that do not exist used to count them as new.
func TestKeyLimitLetsKeysGo(t *testing.T) {
	s := newTestSandbox(t, newFakeClock(), Limits{MaxKeys: 3})
	for _, tt := range []struct{ line, want string }{
		{"MSET a 1 b 2 c 3", "OK"},
		{"DEL w x y z", "(integer) 0"},
		{"EXPIRE w 10", "(integer) 0"},
		{"GETDEL w", "(nil)"},
		{"SET d 4", "(error) ERR the playground keeps at most 3 keys in a sandbox; delete some (DEL, FLUSHDB)"},
		{"UNLINK a b c d e", "(integer) 3"},
		{"MSET d 4 e 5 f 6", "OK"},
	} {
		if res, _ := s.Exec(context.Background(), ClientA, tt.line); res.Output != tt.want {
			t.Errorf("%s = %q; want %q", tt.line, res.Output, tt.want)
		}
	}
}

// TestLimits checks that each limit gives a clear error and leaves the
// sandbox as it was.
func TestLimits(t *testing.T) {
	limits := Limits{MaxLineBytes: 200, MaxArgs: 10, MaxValueBytes: 100, MaxKeys: 3, MaxDataBytes: 1000, MaxCount: 5, MaxReplyLines: 4, MaxRepeat: 3, MaxQueued: 2}
	for _, tt := range []struct {
		name  string
		setup []string
		line  string
		want  string
	}{
		{"line", nil, "SET k " + strings.Repeat("x", 300), "(error) ERR the playground takes lines of at most 200 bytes"},
		{"arguments", nil, "RPUSH l a b c d e f g h i j", "(error) ERR the playground takes at most 10 arguments in a command"},
		{"value", nil, "SET k " + strings.Repeat("x", 101), "(error) ERR the playground takes values of at most 100 bytes"},
		{"keys", []string{"MSET a 1 b 2 c 3"}, "SET d 4", "(error) ERR the playground keeps at most 3 keys in a sandbox; delete some (DEL, FLUSHDB)"},
		{"keys in MSET", []string{"SET a 1"}, "MSET b 2 c 3 d 4", "(error) ERR the playground keeps at most 3 keys in a sandbox; delete some (DEL, FLUSHDB)"},
		{"data", nineFields(), "HSET h z " + strings.Repeat("x", 90), ""},
		{"SETBIT offset", nil, "SETBIT k 800 1", "(error) ERR the playground keeps strings under 100 bytes, so bit offsets stop at 799"},
		{"SETBIT offset Atoi style", nil, "SETBIT k 0000000000800 1", "(error) ERR the playground keeps strings under 100 bytes, so bit offsets stop at 799"},
		{"SETRANGE offset", nil, "SETRANGE k 99 xx", "(error) ERR the playground keeps strings under 100 bytes"},
		{"SETRANGE overflow", nil, "SETRANGE k 9223372036854775807 xx", "(error) ERR the playground keeps strings under 100 bytes"},
		{"APPEND", []string{"SET k " + strings.Repeat("x", 90)}, "APPEND k " + strings.Repeat("y", 20), "(error) ERR the playground keeps strings under 100 bytes"},
		{"SRANDMEMBER count", []string{"SADD s a"}, "SRANDMEMBER s -1000000000", "(error) ERR the playground limits the count of SRANDMEMBER to 5"},
		{"HRANDFIELD count", []string{"HSET h a 1"}, "HRANDFIELD h 6", "(error) ERR the playground limits the count of HRANDFIELD to 5"},
		{"ZRANDMEMBER count", []string{"ZADD z 1 a"}, "ZRANDMEMBER z -9223372036854775808", "(error) ERR the playground limits the count of ZRANDMEMBER to 5"},
		{"SPOP count", []string{"SADD s a"}, "SPOP s 6", "(error) ERR the playground limits the count of SPOP to 5"},
		{"repeat", nil, "4 PING", "(error) ERR the playground repeats a command at most 3 times"},
		{"queued", []string{"MULTI", "SET a 1", "SET b 2"}, "SET c 3", "(error) ERR the playground queues at most 2 commands in a transaction"},
		{"reply lines", []string{"RPUSH l a b c d e f"}, "LRANGE l 0 -1", "1) \"a\"\n2) \"b\"\n3) \"c\"\n4) \"d\"\n... (reply cut by the playground: 2 more lines, 14 more bytes)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestSandbox(t, newFakeClock(), limits)
			for _, l := range tt.setup {
				if res, err := s.Exec(context.Background(), ClientA, l); err != nil {
					t.Fatalf("setup %q: %q, %v", l, res.Output, err)
				}
			}
			before, _ := s.Snapshot()
			res, err := s.Exec(context.Background(), ClientA, tt.line)
			want := tt.want
			if want == "" {
				want = "(error) ERR the playground keeps at most 1000 bytes of data in a sandbox; delete some keys (DEL, FLUSHDB)"
			}
			if res.Output != want {
				t.Errorf("Exec(%.40q) = %q; want %q", tt.line, res.Output, want)
			}
			if tt.name == "reply lines" {
				return
			}
			if !errors.Is(err, ErrLimit) {
				t.Errorf("Exec(%.40q) error = %v; want ErrLimit", tt.line, err)
			}
			after, _ := s.Snapshot()
			if !sameKeys(before, after) {
				t.Errorf("Exec(%.40q) changed the sandbox: %+v, then %+v", tt.line, before.Keys, after.Keys)
			}
		})
	}
}

// nineFields fills a hash with nine fields of 90 bytes.
func nineFields() []string {
	var lines []string
	for _, f := range "abcdefghi" {
		lines = append(lines, "HSET h "+string(f)+" "+strings.Repeat("x", 90))
	}
	return lines
}

func sha1hex(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

func sameKeys(a, b Snapshot) bool {
	if len(a.Keys) != len(b.Keys) {
		return false
	}
	for i := range a.Keys {
		if a.Keys[i].Key != b.Keys[i].Key || a.Keys[i].String != b.Keys[i].String || len(a.Keys[i].List) != len(b.Keys[i].List) || len(a.Keys[i].Hash) != len(b.Keys[i].Hash) {
			return false
		}
	}
	return true
}

// TestLimitsFreedByDeletes checks that deleting keys makes room again, as
// the error message promises.
func TestLimitsFreedByDeletes(t *testing.T) {
	s := newTestSandbox(t, newFakeClock(), Limits{MaxKeys: 2})
	runSteps(t, s, []step{
		{ClientA, "MSET a 1 b 2", "OK"},
		{ClientA, "SET c 3", "(error) ERR the playground keeps at most 2 keys in a sandbox; delete some (DEL, FLUSHDB)"},
		{ClientA, "SET a 9", "OK"},
		{ClientA, "RENAME a c", "OK"},
		{ClientA, "DEL b", "(integer) 1"},
		{ClientA, "SET d 4", "OK"},
		{ClientA, "FLUSHALL", "OK"},
		{ClientA, "MSET x 1 y 2", "OK"},
	})
}

// TestCLILines covers what redis-cli does with a line before Redis sees it.
func TestCLILines(t *testing.T) {
	s := newTestSandbox(t, newFakeClock(), Limits{})
	runSteps(t, s, []step{
		{ClientA, "", ""},
		{ClientA, " \t ", ""},
		{ClientA, `GET "open`, "Invalid argument(s)"},
		{ClientA, "0 INCR n", "Invalid redis-cli repeat command option value."},
		{ClientA, "-2 INCR n", "Invalid redis-cli repeat command option value."},
		{ClientA, `"" INCR n`, "Invalid redis-cli repeat command option value."},
		{ClientA, "99999999999999999999 INCR n", "Invalid redis-cli repeat command option value."},
		{ClientA, "2 INCR n", "(integer) 1\n(integer) 2"},
		{ClientA, "+2 INCR n", "(integer) 3\n(integer) 4"},
		{ClientA, "2x INCR n", "(error) ERR unknown command '2x', with args beginning with: 'INCR' 'n' "},
		{ClientA, "5", "(error) ERR unknown command '5', with args beginning with: "},
		{ClientA, "quit", "(the playground keeps your session: there is nothing to quit)"},
		{ClientA, "connect localhost 6379", "(redis-cli's connect is not available in the playground)"},
	})
	res, _ := s.Exec(context.Background(), ClientA, "clear")
	if !res.Clear || res.Output != "" {
		t.Errorf("Exec(\"clear\") = %+v; want Clear and no output", res)
	}
	res, _ = s.Exec(context.Background(), ClientB, "HELP")
	if !strings.Contains(res.Output, "EVAL EVALSHA") || !strings.Contains(res.Output, "MULTI EXEC") {
		t.Errorf("Exec(\"HELP\") = %q; want the list of commands", res.Output)
	}
	if _, err := s.Exec(context.Background(), "C", "PING"); !errors.Is(err, ErrUnknownClient) {
		t.Errorf("Exec as client C error = %v; want ErrUnknownClient", err)
	}
	if res, err := s.Exec(context.Background(), "b", "PING"); err != nil || res.Output != "PONG" || res.Client != ClientB {
		t.Errorf("Exec as client b = %+v, %v; want PONG", res, err)
	}
}

func TestResultClock(t *testing.T) {
	clock := newFakeClock()
	s := newTestSandbox(t, clock, Limits{})
	res, _ := s.Exec(context.Background(), ClientA, "PING")
	if want := clock.Now().UnixMilli(); res.ClockMS != want {
		t.Errorf("Result.ClockMS = %d; want %d", res.ClockMS, want)
	}
	s.Advance(10 * time.Second)
	res, _ = s.Exec(context.Background(), ClientA, "TIME")
	if want := clock.Now().Add(10 * time.Second).UnixMilli(); res.ClockMS != want {
		t.Errorf("Result.ClockMS = %d after Advance(10s); want %d", res.ClockMS, want)
	}
	secs := clock.Now().Add(10 * time.Second).Unix()
	if !strings.HasPrefix(res.Output, "1) \""+itoa(secs)+"\"") {
		t.Errorf("TIME = %q; want the sandbox clock, %d", res.Output, secs)
	}
}

func TestSnapshotRestore(t *testing.T) {
	clock := newFakeClock()
	s := newTestSandbox(t, clock, Limits{})
	runSteps(t, s, []step{
		{ClientA, "SET lock:invoice:7 3f9a1c PX 30000", "OK"},
		{ClientA, "HSET h f v", "(integer) 1"},
		{ClientA, "RPUSH l b a", "(integer) 2"},
		{ClientA, "SADD s x", "(integer) 1"},
		{ClientA, "ZADD z 1.5 m", "(integer) 1"},
		{ClientA, `SCRIPT LOAD "return 'kept'"`, `"` + sha1hex("return 'kept'") + `"`},
	})
	s.Advance(5 * time.Second)
	snap, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	r, err := RestoreSandbox(snap, SandboxOptions{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want, _ := s.Keys()
	got, _ := r.Keys()
	if len(got) != len(want) {
		t.Fatalf("restored Keys() = %v; want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("restored Keys()[%d] = %+v; want %+v", i, got[i], want[i])
		}
	}
	if !r.Now().Equal(s.Now()) {
		t.Errorf("restored Now() = %v; want %v", r.Now(), s.Now())
	}
	runSteps(t, r, []step{{ClientA, "EVALSHA " + sha1hex("return 'kept'") + " 0", `"kept"`}})
}

func TestClosedSandbox(t *testing.T) {
	s := newTestSandbox(t, newFakeClock(), Limits{})
	s.Close()
	if _, err := s.Exec(context.Background(), ClientA, "PING"); !errors.Is(err, ErrClosed) {
		t.Errorf("Exec after Close error = %v; want ErrClosed", err)
	}
	if _, err := s.Keys(); !errors.Is(err, ErrClosed) {
		t.Errorf("Keys after Close error = %v; want ErrClosed", err)
	}
}

// TestHostileLines throws lines at a sandbox that would crash or hang a
// careless implementation; each must come back with an answer.
func TestHostileLines(t *testing.T) {
	s := newTestSandbox(t, newFakeClock(), Limits{Script: scriptLimitsForTests()})
	for _, line := range []string{
		"GETRANGE k -9223372036854775808 9223372036854775807",
		"SET k v",
		"GETRANGE k -9223372036854775808 9223372036854775807",
		"LRANGE l -9223372036854775808 9223372036854775807",
		"LPOS l a RANK -9223372036854775808",
		"EXPIRE k 9223372036854775807",
		"PEXPIRE k -9223372036854775808",
		"SET k v EX 9223372036854775807",
		"INCRBYFLOAT k 1e400",
		"ZADD z nan a",
		"ZRANGEBYSCORE z (1 (0 LIMIT -9223372036854775808 -9223372036854775808",
		"SCAN 18446744073709551616 COUNT -1",
		"KEYS [[[[[[[[[[[[",
		`KEYS "*\\"`,
		"EVAL \"return redis.call('EVAL', 'return 1', 0)\" 0",
		"EVAL \"local t = {} t[1] = t return t\" 0",
		"EVAL \"while true do end\" 0",
		"SETBIT k -1 1",
		"BITCOUNT k 0 -9223372036854775808",
		"OBJECT IDLETIME k",
		"SINTERCARD 9223372036854775807 a",
		"LMPOP 2 a b LEFT COUNT -1",
		"ZMPOP 1 z MIN COUNT 9223372036854775807",
	} {
		done := make(chan struct{})
		go func() {
			defer close(done)
			res, _ := s.Exec(context.Background(), ClientA, line)
			if strings.Contains(res.Output, "internal error") {
				t.Errorf("Exec(%q) = %q; want no internal error", line, res.Output)
			}
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("Exec(%q) did not return", line)
		}
	}
}

// TestEmptyElementsCount checks that elements count towards the data limit
// even when they are empty: otherwise a list of millions of "" would be
// free.
func TestEmptyElementsCount(t *testing.T) {
	s := newTestSandbox(t, newFakeClock(), Limits{MaxDataBytes: 1000})
	for i := range 1000 {
		res, err := s.Exec(context.Background(), ClientA, `RPUSH l ""`)
		if err != nil {
			if !strings.Contains(res.Output, "at most 1000 bytes of data") {
				t.Fatalf("RPUSH l \"\" #%d = %q, %v; want the data limit", i+1, res.Output, err)
			}
			if i > 1000/elementOverhead {
				t.Errorf("the data limit of 1000 bytes held %d empty elements; want at most %d", i, 1000/elementOverhead)
			}
			return
		}
	}
	t.Error("1000 empty elements never reached a data limit of 1000 bytes")
}
