package worker

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/testenv"

	"github.com/locklab/locklab/playground"
)

// bomb is a hostile line and what its answer must contain. Lines after
// setup run first, and their answers are not checked.
type bomb struct {
	name  string
	setup []string
	line  string
	want  string // a part of the answer
}

// bombs are inputs that crash, hang or exhaust a careless Redis
// playground. Stock miniredis fails on most of them (its Lua has no
// deadline or memory budget and opens more libraries), which is why the
// playground runs scripts in package luaredis.
var bombs = []bomb{
	{name: "endless loop", line: `EVAL "while true do end" 0`, want: "stopped the script after 1s"},
	{name: "function reply", line: `EVAL "return function() end" 0`, want: "(nil)"},
	{name: "table that holds itself", line: `EVAL "local t = {} t[1] = t return t" 0`, want: "1) 1) 1) "},
	{name: "table whose __index errors", line: `EVAL "return setmetatable({}, {__index = function() error('no') end})" 0`, want: "(empty array)"},
	{name: "string.rep of 2 GiB", line: `EVAL "return string.rep('x', 2^31)" 0`, want: "(error) ERR"},
	{name: "doubling string", line: `EVAL "local s = 'x' while true do s = s .. s end" 0`, want: "(error) ERR"},
	{name: "SETRANGE at 1 GiB", line: "SETRANGE k 1073741823 x", want: "(error) ERR the playground keeps strings under"},
	{name: "SETBIT at 4 Gibit", line: "SETBIT k 4294967295 1", want: "(error) ERR the playground keeps strings under"},
	{name: "dofile", line: `EVAL "return dofile('/etc/passwd')" 0`, want: "(error) ERR"},
	{name: "loadfile", line: `EVAL "return loadfile('/etc/passwd')" 0`, want: "(error) ERR"},
	{name: "require", line: `EVAL "return require('os')" 0`, want: "(error) ERR"},
	{name: "print", line: `EVAL "print('to the server log') return 1" 0`, want: "(error) ERR"},
	{name: "io", line: `EVAL "return io.open('/etc/passwd'):read('*a')" 0`, want: "(error) ERR"},
	{name: "os.execute", line: `EVAL "return os.execute('id')" 0`, want: "(error) ERR"},
	{name: "debug", line: `EVAL "return debug.getinfo(1)" 0`, want: "(error) ERR"},
	{name: "deep recursion", line: `EVAL "local function f() return 1 + f() end return f()" 0`, want: "(error) ERR"},
	{name: "pcall swallowing the deadline", line: `EVAL "while true do pcall(function() while true do end end) end" 0`, want: "stopped the script after 1s"},
	{name: "pcall of error in a loop", line: `EVAL "while true do pcall(error, 'again') end" 0`, want: "(error) ERR the playground stopped the script"},
	{name: "coroutine", line: `EVAL "local co = coroutine.wrap(function() while true do end end) return co()" 0`, want: "(error) ERR"},
	{name: "huge table", line: `EVAL "local t = {} for i = 1, 1e9 do t[i] = i end return #t" 0`, want: "(error) ERR the playground stopped the script"},
	{name: "huge table of strings", line: `EVAL "local t = {} for i = 1, 1e8 do t[i] = tostring(i) .. 'padding' end return #t" 0`, want: "(error) ERR the playground stopped the script"},
	{name: "table.concat of 10 MB", line: `EVAL "local t = {} for i = 1, 1e6 do t[i] = 'xxxxxxxxxx' end return #table.concat(t)" 0`, want: "(error) ERR"},
	{name: "string.format width", line: `EVAL "return string.format('%0999999999d', 1)" 0`, want: "(error) ERR"},
	{name: "unpack of a billion", line: `EVAL "return unpack({}, 1, 1e9)" 0`, want: "(error) ERR"},
	{name: "catastrophic pattern", line: `EVAL "return string.find(string.rep('a', 100000), string.rep('a?', 40) .. string.rep('a', 40) .. 'b')" 0`, want: "(error) ERR"},
	{name: "gsub to 100 MB", line: `EVAL "return #string.gsub(string.rep('x', 100000), 'x', string.rep('y', 1000))" 0`, want: "(error) ERR"},
	{name: "1 MB script", line: `EVAL "return 1 --` + strings.Repeat("x", 1<<20) + `" 0`, want: "(error) ERR the playground takes lines of at most"},
	{name: "1 MB SCRIPT LOAD", line: `SCRIPT LOAD "return 1 --` + strings.Repeat("x", 1<<20) + `"`, want: "(error) ERR the playground takes lines of at most"},
	{name: "60 KB script", line: `EVAL "local x = 0 ` + strings.Repeat("x = x + 1 ", 6000) + `return x" 0`, want: "(integer) 6000"},
	{name: "deeply nested parentheses", line: `EVAL "return ` + strings.Repeat("(", 20000) + "1" + strings.Repeat(")", 20000) + `" 0`, want: "chunk has too many syntax levels"}, // as Lua 5.1 in Redis says
	{name: "deeply nested tables", line: `EVAL "return ` + strings.Repeat("{", 20000) + strings.Repeat("}", 20000) + `" 0`, want: ""},
	{name: "invalid UTF-8", line: "SET k \xff\xfe\xfd", want: "OK"},
	{name: "invalid UTF-8 in a script", line: "EVAL \"return '\xff\xc0'\" 0", want: `"\xff\xc0"`},
	{name: "NUL bytes", line: "SET k a\x00b", want: "OK"},
	// redis-cli reads C strings: a NUL ends the line, inside quotes too.
	{name: "NUL bytes in a script", line: "EVAL \"return 'a\x00b'\" 0", want: "Invalid argument(s)"},
	{name: "unbalanced quotes", line: `SET k "abc`, want: "Invalid argument(s)"},
	{name: "unbalanced quotes in EVAL", line: `EVAL "return 1 0`, want: "Invalid argument(s)"},
	{name: "10,000 arguments", line: "DEL" + strings.Repeat(" a", 10_000), want: "(error) ERR the playground takes at most"},
	{name: "BLPOP in a script", line: `EVAL "return redis.call('BLPOP', 'l', 0)" 0`, want: "(error) ERR This Redis command is not allowed from script"},
	{name: "nested EVAL", line: `EVAL "return redis.call('EVAL', 'return 1', 0)" 0`, want: "(error) ERR This Redis command is not allowed from script"},
	{name: "SRANDMEMBER huge negative count", setup: []string{"SADD s a b c"}, line: "SRANDMEMBER s -9223372036854775807", want: "(error) ERR the playground limits the count"},
	{name: "HRANDFIELD huge negative count", setup: []string{"HSET h f v"}, line: "HRANDFIELD h -2000000000 WITHVALUES", want: "(error) ERR the playground limits the count"},
	{name: "ZRANDMEMBER huge negative count", setup: []string{"ZADD z 1 m"}, line: "ZRANDMEMBER z -2000000000", want: "(error) ERR the playground limits the count"},
	{name: "empty argv", line: `""`, want: "(error) ERR unknown command ''"},
	{name: "spaces only", line: "   ", want: ""},
	{name: "global variable", line: `EVAL "x = 1 return x" 0`, want: "(error) ERR"},
	{name: "string metatable", line: `EVAL "getmetatable('').__index = nil return 1" 0`, want: "(error) ERR"},
	{name: "fill the sandbox", line: `EVAL "for i = 1, 1000 do redis.call('SET', 'big' .. i, string.rep('x', 65536)) end" 0`, want: "(error) ERR the playground keeps at most"},
	{name: "long list", line: `EVAL "for i = 1, 1e6 do redis.call('RPUSH', 'list', i) end" 0`, want: "(error) ERR the playground"},
	{name: "read it all", setup: []string{`EVAL "for i = 1, 1e6 do redis.call('RPUSH', 'list', i) end" 0`}, line: "LRANGE list 0 -1", want: "(reply cut by the playground"},
	{name: "repeat prefix of endless loops", line: `100 EVAL "while true do end" 0`, want: "stopped the script after 1s"},
	// One line of a few KB asked for hundreds of MB of reply, and took
	// the worker down with every sandbox on it.
	{name: "MGET of a 60 KB value 999 times", setup: []string{"SET k " + strings.Repeat("v", 60_000)}, line: "MGET" + strings.Repeat(" k", 999), want: "(error) ERR the playground's replies stop at 1 MiB"},
	{name: "HMGET of a 60 KB field 998 times", setup: []string{"HSET h f " + strings.Repeat("v", 60_000)}, line: "HMGET h" + strings.Repeat(" f", 998), want: "(error) ERR the playground's replies stop at 1 MiB"},
	{name: "script returning one string 2000 times", line: `EVAL "local s=string.rep('a',200000) local t={} for i=1,2000 do t[i]=s end return t" 0`, want: "(error) ERR the playground's replies stop at 1 MiB"},
	{name: "transaction of big GETs", setup: append([]string{"SET k " + strings.Repeat("v", 60_000), "MULTI"}, slices.Repeat([]string{"GET k"}, 999)...), line: "EXEC", want: "(reply cut by the playground"},
	// One line spun the worker until its watchdog killed it.
	{name: "SINTER of a big set 998 times", setup: bigSet("s"), line: "12 SINTER" + strings.Repeat(" s", 998), want: "(error) ERR the playground runs commands that visit at most 200000 elements"},
	{name: "ZUNION of a big sorted set 998 times", setup: bigZset("z"), line: "ZUNION 998" + strings.Repeat(" z", 998), want: "(error) ERR the playground runs commands that visit at most 200000 elements"},
	{name: "transaction of endless loops", setup: append([]string{"MULTI"}, slices.Repeat([]string{`EVAL "while true do end" 0`}, 999)...), line: "EXEC", want: "1) (error) ERR the playground stopped the script after 1s"},
}

// bigSet is lines that fill set k with 19,800 members, close to the key
// size limit.
func bigSet(k string) []string {
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

// bigZset is lines that fill sorted set k with 9,900 members.
func bigZset(k string) []string {
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

// TestBombs throws the bombs at a supervised playground, in the worker
// of another learner who sends PING all along. Each bomb must be answered
// within the script deadline and half a second, the other learner's PINGs
// must stay fast, and the memory of all the processes must stay under
// 1 GiB. Then 100,000 distinct scripts check that the script caches stay
// bounded.
func TestBombs(t *testing.T) {
	testenv.Slow(t, "attack")
	s := newTestSupervisor(t, Options{Workers: 2})
	bomber := learnersOn(0, 2, 1, "bomber")[0]
	pinger := learnersOn(0, 2, 1, "pinger")[0] // in the same worker
	ctx := context.Background()
	const deadline = time.Second // the default script deadline

	mem := watchMemory(s)
	pings := startPinger(t, s, pinger)

	var slowest time.Duration
	var slowestName string
	for _, b := range bombs {
		for _, line := range b.setup {
			s.Exec(ctx, bomber, playground.ClientA, line)
		}
		start := time.Now()
		res, err := s.Exec(ctx, bomber, playground.ClientA, b.line)
		d := time.Since(start)
		if d > slowest {
			slowest, slowestName = d, b.name
		}
		if d > deadline+500*time.Millisecond {
			t.Errorf("%s: answered after %v; want within %v", b.name, d, deadline+500*time.Millisecond)
		}
		if !strings.Contains(res.Output, b.want) || strings.Contains(res.Output, "internal error") {
			t.Errorf("%s: %.300q, %v; want an answer with %q", b.name, res.Output, err, b.want)
		}
		if res, _ := s.Exec(ctx, bomber, playground.ClientB, "PING"); res.Output != "PONG" {
			t.Fatalf("%s: PING afterwards = %q", b.name, res.Output)
		}
		s.Exec(ctx, bomber, playground.ClientA, "FLUSHALL")
	}

	scripts := 100_000
	if raceMemoryFactor > 1 {
		scripts = 20_000 // the race detector makes each about ten times slower
	}
	start := time.Now()
	distinctScripts(t, s, scripts)
	scriptsTook := time.Since(start)

	p99, pmax, n := pings.stop()
	peak := mem.stop()
	t.Logf("%d bombs: slowest answer %v (%s); %d distinct scripts in %v", len(bombs), slowest.Round(time.Millisecond), slowestName, scripts, scriptsTook.Round(time.Millisecond))
	t.Logf("other learner's PING: %d sent, p99 %v, max %v; peak memory of all processes %d MiB; worker restarts %d",
		n, p99.Round(10*time.Microsecond), pmax.Round(10*time.Microsecond), peak>>20, s.Restarts())
	if p99 > 100*time.Millisecond {
		t.Errorf("the other learner's PING p99 = %v; want under 100ms", p99)
	}
	if peak > 1<<30 {
		t.Errorf("peak memory of all processes = %d MiB; want under 1 GiB", peak>>20)
	}
	if s.Restarts() != 0 {
		t.Errorf("Restarts() = %d; want no bomb to kill a worker", s.Restarts())
	}
}

// distinctScripts sends n distinct scripts from 8 learners on both
// workers, and checks that a learner's oldest scripts were forgotten.
func distinctScripts(t *testing.T, s *Supervisor, n int) {
	t.Helper()
	var wg sync.WaitGroup
	var next atomic.Int64
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			learner := fmt.Sprintf("scripter-%d", g)
			for {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				line := fmt.Sprintf(`EVAL "return %d" 0`, i)
				if res, err := s.Exec(context.Background(), learner, playground.ClientA, line); err != nil || res.Output != "(integer) "+strconv.FormatInt(i, 10) {
					t.Errorf("%s = %q, %v", line, res.Output, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	// "return 1" went to some learner long ago; no learner keeps it.
	for g := range 8 {
		res, _ := s.Exec(context.Background(), fmt.Sprintf("scripter-%d", g), playground.ClientA, "SCRIPT EXISTS e0e1f9fabfc9d4800c877a703b823ac0578ff8db")
		if res.Output != "1) (integer) 0" {
			t.Errorf("scripter-%d: SCRIPT EXISTS of the first script = %q; want it forgotten", g, res.Output)
		}
	}
}

// pinger sends PING as one learner every few milliseconds and records how
// long each took.
type pinger struct {
	stopc chan struct{}
	done  chan struct{}
	lat   []time.Duration
}

func startPinger(t *testing.T, s *Supervisor, learner string) *pinger {
	p := &pinger{stopc: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for range 1_000_000 { // more than the suite needs
			select {
			case <-p.stopc:
				return
			case <-tick.C:
			}
			start := time.Now()
			res, err := s.Exec(context.Background(), learner, playground.ClientA, "PING")
			p.lat = append(p.lat, time.Since(start))
			if res.Output != "PONG" {
				t.Errorf("the other learner's PING = %q, %v", res.Output, err)
			}
		}
	}()
	return p
}

// stop ends the pings and returns their 99th percentile, maximum and
// count.
func (p *pinger) stop() (p99, max time.Duration, n int) {
	close(p.stopc)
	<-p.done
	if len(p.lat) == 0 {
		return 0, 0, 0
	}
	slices.Sort(p.lat)
	return p.lat[len(p.lat)*99/100], p.lat[len(p.lat)-1], len(p.lat)
}

// memWatch samples the resident memory of this process and the workers.
type memWatch struct {
	stopc chan struct{}
	done  chan struct{}
	peak  int64
}

func watchMemory(s *Supervisor) *memWatch {
	w := &memWatch{stopc: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for range 10_000_000 {
			total := rss(os.Getpid())
			for _, pid := range s.pids() {
				total += rss(pid)
			}
			w.peak = max(w.peak, total)
			select {
			case <-w.stopc:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

func (w *memWatch) stop() int64 {
	close(w.stopc)
	<-w.done
	return w.peak
}

// rss reads a process's resident memory from /proc; 0 if it is gone.
func rss(pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
