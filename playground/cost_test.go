package playground

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/testenv"
)

// bigSetLines fill set k with 19,800 five-byte members, close to the key
// size limit, as the attacker's repro did.
func bigSetLines(k string) []string {
	var lines []string
	for i := range 20 {
		var b strings.Builder
		b.WriteString("SADD " + k)
		for j := range 990 {
			fmt.Fprintf(&b, " %05d", i*990+j)
		}
		lines = append(lines, b.String())
	}
	return lines
}

// bigZsetLines fill sorted set k with 9,900 members.
func bigZsetLines(k string) []string {
	var lines []string
	for i := range 20 {
		var b strings.Builder
		b.WriteString("ZADD " + k)
		for j := range 495 {
			fmt.Fprintf(&b, " %d %05d", j, i*495+j)
		}
		lines = append(lines, b.String())
	}
	return lines
}

// TestCostBoundedByLine: lines of a few KB that once asked for hundreds of
// MB of reply (and took a worker down) or seconds of CPU (until the
// worker's watchdog killed it) are refused, and what refusing them
// allocates is a small multiple of the data, whatever the line repeats.
func TestCostBoundedByLine(t *testing.T) {
	big := strings.Repeat("v", 60_000)
	for _, tt := range []struct {
		name     string
		setup    []string
		line     string
		want     string // a part of the output
		maxAlloc uint64
	}{
		{"MGET of a 60 KB value 999 times", []string{"SET k " + big}, "MGET" + strings.Repeat(" k", 999),
			"(error) ERR the playground's replies stop at 1 MiB; ask for fewer elements (LRANGE 0 99, SCAN)", 1 << 20},
		{"HMGET of a 60 KB field 998 times", []string{"HSET h f " + big}, "HMGET h" + strings.Repeat(" f", 998),
			"(error) ERR the playground's replies stop at 1 MiB", 1 << 20},
		{"script returning one string 2000 times", nil, `EVAL "local s=string.rep('a',200000) local t={} for i=1,2000 do t[i]=s end return t" 0`,
			"(error) ERR the playground's replies stop at 1 MiB", 8 << 20},
		{"SINTER of a big set 998 times, 12 times over", bigSetLines("s"), "12 SINTER" + strings.Repeat(" s", 998),
			"(error) ERR the playground runs commands that visit at most 200000 elements, and this one would visit about 19760400", 4 << 20},
		{"SUNION", bigSetLines("s"), "SUNION" + strings.Repeat(" s", 998), "visit at most 200000 elements", 4 << 20},
		{"SINTERCARD", bigSetLines("s"), "SINTERCARD 998" + strings.Repeat(" s", 998), "visit at most 200000 elements", 4 << 20},
		{"SINTERSTORE", bigSetLines("s"), "SINTERSTORE d" + strings.Repeat(" s", 997), "visit at most 200000 elements", 4 << 20},
		{"ZINTER", bigZsetLines("z"), "ZINTER 998" + strings.Repeat(" z", 998), "visit at most 200000 elements", 4 << 20},
		{"ZUNION", bigZsetLines("z"), "ZUNION 998" + strings.Repeat(" z", 998), "visit at most 200000 elements", 4 << 20},
		// What the guard cannot tell before, the reply buffer stops:
		// miniredis writes 60 KB a time into it and nothing is kept.
		{"EXEC of big GETs", append([]string{"SET k " + big, "MULTI"}, slices.Repeat([]string{"GET k"}, 30)...), "EXEC",
			"18) (error) ERR the playground's replies stop at 1 MiB", 16 << 20},
		// Small ones still work. (Bounds leave room for the race
		// detector's own allocations.)
		{"SINTER of a big set twice", bigSetLines("s"), "SINTER s s", "(reply cut by the playground: 19300 more lines", 16 << 20},
		{"MGET of a few", []string{"SET k " + big}, "MGET k k", `2) "vvv`, 4 << 20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// Outputs are shown whole, to see every reply of a transaction.
			s := newTestSandbox(t, newFakeClock(), Limits{MaxReplyBytes: 4 << 20})
			for _, line := range tt.setup {
				s.Exec(context.Background(), ClientA, line)
			}
			var res Result
			got := testenv.Allocated(func() { res, _ = s.Exec(context.Background(), ClientA, tt.line) })
			if !strings.Contains(res.Output, tt.want) {
				t.Errorf("%.60s = %.300q; want %q in it", tt.line, res.Output, tt.want)
			}
			if got > tt.maxAlloc {
				t.Errorf("%.60s allocated %d bytes; want at most %d", tt.line, got, tt.maxAlloc)
			}
			if res, _ := s.Exec(context.Background(), ClientB, "PING"); res.Output != "PONG" {
				t.Errorf("PING afterwards = %q", res.Output)
			}
		})
	}
}

// TestReplyBuffer: a reply past Limits.MaxReplyBuildBytes is refused with
// ErrLimit, its bytes dropped as miniredis writes them, and a repeat
// prefix stops there.
func TestReplyBuffer(t *testing.T) {
	s := newTestSandbox(t, newFakeClock(), Limits{MaxReplyBuildBytes: 32 << 10})
	ctx := context.Background()
	s.Exec(ctx, ClientA, "SET k "+strings.Repeat("v", 20_000))
	s.Exec(ctx, ClientA, "RPUSH l "+strings.Repeat("x", 20_000)+" "+strings.Repeat("y", 20_000))
	const over = "(error) ERR the playground's replies stop at 32 KiB; ask for fewer elements (LRANGE 0 99, SCAN)"
	for _, tt := range []struct {
		line, want string
		refused    bool
	}{
		{"LRANGE l 0 -1", over, true},
		{"LRANGE l 0 0", `1) "xxx`, false},
		{"3 LRANGE l 0 -1", over, true},
		{"MGET k k", over, true},
		{"GET k", `"vvv`, false},
	} {
		res, err := s.Exec(ctx, ClientA, tt.line)
		if res.Output != tt.want && !(strings.HasPrefix(res.Output, tt.want) && !tt.refused) {
			t.Errorf("%s = %.100q; want %q", tt.line, res.Output, tt.want)
		}
		if refused := err != nil; refused != tt.refused {
			t.Errorf("%s: error %v; want refused %v", tt.line, err, tt.refused)
		}
	}
}

// stepClock is a clock that moves by step each time it is read.
type stepClock struct {
	t    time.Time
	step time.Duration
}

func (c *stepClock) Now() time.Time { c.t = c.t.Add(c.step); return c.t }

// TestLineDeadlineWithoutScripts: a line's deadline (the script timeout)
// holds between repeats and between a transaction's commands, scripts or
// none, and the line's whole run time is reported.
func TestLineDeadlineWithoutScripts(t *testing.T) {
	for _, tt := range []struct {
		name  string
		setup []string
		line  string
		want  string
	}{
		{"repeat", nil, "10 PING", "PONG\nPONG\nPONG\n(the playground did not run the other 7: this line used up its 1s)"},
		{"transaction", []string{"MULTI", "INCR n", "INCR n", "INCR n", "INCR n"}, "EXEC",
			"1) (integer) 1\n2) (integer) 2\n3) (error) ERR the playground did not run this command: the line used up its 1s (command 3 of 4)\n4) (error) ERR the playground did not run this command: the line used up its 1s (command 4 of 4)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestSandbox(t, newFakeClock(), Limits{})
			for _, line := range tt.setup {
				s.Exec(context.Background(), ClientA, line)
			}
			// Each read of the clock is 400 ms later: the line starts at the
			// first, and the deadline has passed at the fourth.
			clock := &stepClock{t: time.Now(), step: 400 * time.Millisecond}
			s.runNow = clock.Now
			res, _ := s.Exec(context.Background(), ClientA, tt.line)
			if res.Output != tt.want {
				t.Errorf("%s = %q; want %q", tt.line, res.Output, tt.want)
			}
			if res.RunTime < time.Second || res.ScriptTime != 0 {
				t.Errorf("%s: RunTime %v, ScriptTime %v; want at least 1s and none", tt.line, res.RunTime, res.ScriptTime)
			}
		})
	}
}

// TestKeysPreviewOfBigKeys: the inspector shows a big key as it shows a
// small one, the first members in order, and builds it once until the
// key is written: polling the inspector costs nearly nothing.
func TestKeysPreviewOfBigKeys(t *testing.T) {
	s := newTestSandbox(t, newFakeClock(), Limits{})
	ctx := context.Background()
	for _, k := range []string{"s1", "s2", "s3"} {
		for _, line := range bigSetLines(k) {
			s.Exec(ctx, ClientA, line)
		}
	}
	first := testenv.Allocated(func() { s.Keys() })
	keys, _ := s.Keys()
	if want := `{"00000", "00001", "00002", "00003", "00004", "00005", "000…`; keys[0].Value != want {
		t.Errorf("preview of s1 = %q; want %q", keys[0].Value, want)
	}
	again := testenv.Allocated(func() { s.Keys() })
	if again > 16<<10 || again > first/20 {
		t.Errorf("Keys() again allocated %d bytes (the first time %d); want it reused", again, first)
	}
	s.Exec(ctx, ClientA, "SREM s1 00000")
	keys, _ = s.Keys()
	if want := `{"00001", "00002", `; !strings.HasPrefix(keys[0].Value, want) {
		t.Errorf("preview of s1 after SREM = %q; want it to start %q", keys[0].Value, want)
	}
	s.Exec(ctx, ClientA, "FLUSHDB")
	s.Exec(ctx, ClientA, "SADD s1 a")
	if keys, _ = s.Keys(); keys[0].Value != `{"a"}` {
		t.Errorf("preview of s1 after FLUSHDB = %q; want {\"a\"}", keys[0].Value)
	}
}

// TestFirstByScore: the members kept are those a full sort puts first.
func TestFirstByScore(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{0, 1, 5, 40, 41, 1000} {
		z := map[string]float64{}
		for i := range size {
			z[fmt.Sprint("m", i)] = float64(r.IntN(10))
		}
		all := make([]string, 0, len(z))
		for m := range z {
			all = append(all, m)
		}
		sort.Slice(all, func(i, j int) bool {
			if z[all[i]] != z[all[j]] {
				return z[all[i]] < z[all[j]]
			}
			return all[i] < all[j]
		})
		want := all[:min(len(all), previewItems)]
		if got := firstByScore(z, previewItems); !slices.Equal(got, want) {
			t.Errorf("firstByScore of %d members = %v; want %v", size, got, want)
		}
	}
}
