package luaredis

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/resp"
)

// memoryStop is the start of the reply to a script stopped for memory
// under a 16 MiB limit.
const memoryStop = "ERR the playground stopped the script: it allocated more than 16 MiB"

// TestWatchdogJudgesMemory checks when the watchdog judges a script's
// memory: once the process has allocated the limit since the script
// started, then each time it has allocated as much as the script had left
// under the limit (an eighth of it at least), counted from after the last
// judgement; and that it stops the script only for what the script holds.
func TestWatchdogJudgesMemory(t *testing.T) {
	const limit = 800
	for _, tt := range []struct {
		name   string
		allocs []uint64 // the process's counter at each check, after the start at 1000
		held   []uint64 // what each judgement finds
		judged int
		stop   bool
	}{
		{"others allocate, the script holds nothing", []uint64{1500, 1800, 2599, 5000, 1e9}, []uint64{0, 0, 0}, 3, false},
		{"below the first step", []uint64{1100, 1700, 1799}, nil, 0, false},
		{"the step shrinks as the script holds more", []uint64{1800, 2099, 2100, 2299}, []uint64{500, 600}, 2, false},
		{"an eighth of the limit at least", []uint64{1800, 1899, 1900}, []uint64{790, 790}, 2, false},
		{"stopped past the limit", []uint64{1800, 2000, 2100}, []uint64{700, 801}, 2, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// The judgement itself reads the counter after its walk:
			// it finds it where the check did.
			var now uint64 = 1000
			judged := 0
			mem := memory{
				allocs: func() uint64 { return now },
				held: func(max uint64) uint64 {
					if max != limit {
						t.Errorf("held(%d); want held(%d)", max, limit)
					}
					judged++
					if judged > len(tt.held) {
						t.Fatalf("judgement %d at allocation count %d; want %d judgements", judged, now, tt.judged)
					}
					return tt.held[judged-1]
				},
			}
			w := newWatchdog(context.Background(), time.Now(), Limits{Timeout: time.Hour, MaxAllocBytes: limit}, mem, nil)
			for _, a := range tt.allocs {
				now = a
				w.check()
			}
			if judged != tt.judged || w.judged != tt.judged {
				t.Errorf("judged %d times (watchdog says %d); want %d", judged, w.judged, tt.judged)
			}
			if stopped := w.err == errMemory; stopped != tt.stop {
				t.Errorf("stopped for memory: %v (err %v); want %v", stopped, w.err, tt.stop)
			}
		})
	}
}

// TestBystanderNotStopped runs scripts that hold nothing, or little,
// while the process allocates without end (as it does while other
// learners' scripts and lab checks run in the same worker): none is
// stopped for memory, though their memory is judged again and again.
func TestBystanderNotStopped(t *testing.T) {
	for _, src := range []string{
		"return 1",
		"local x = 0 for i = 1, 300000 do x = x + i end return 1",
		"for i = 1, 30000 do local s = 'x' .. i local t = {s, s} end return 1", // garbage only
		"local t = {} for i = 1, 30000 do t[i] = i end local x = 0 for i = 1, 300000 do x = x + i end return 1",
		"for i = 1, 100000 do local r = redis.call('PING') end return 1",
	} {
		t.Run("others allocate: "+src, func(t *testing.T) {
			e := NewEngine(Options{Limits: Limits{Timeout: time.Minute, MaxAllocBytes: 16 << 20}})
			var n uint64
			e.allocs = func() uint64 { n += 1 << 30; return n } // a GiB more at every look
			if got := eval(t, e, newMapCaller(), src); got.IsError() || got.Int != 1 {
				t.Errorf("EVAL %q = %v; want 1", src, got)
			}
			if src != "return 1" && e.vm.acct.walks == 0 {
				t.Errorf("EVAL %q: the memory was never judged; want it judged at every check", src)
			}
		})
	}
	// The same with the process's real counter, while the worker's other
	// work, here done inside redis.call, allocates 400 MiB of garbage.
	t.Run("others allocate, real counter", func(t *testing.T) {
		e := NewEngine(Options{Limits: Limits{Timeout: time.Minute, MaxAllocBytes: 16 << 20}})
		src := "local x = 0 for i = 1, 400 do redis.call('WORK') for j = 1, 2000 do x = x + j end end return 1"
		if got := eval(t, e, workCaller{newMapCaller()}, src); got.IsError() || got.Int != 1 {
			t.Errorf("EVAL %q = %v; want 1", src, got)
		}
	})
}

// workCaller is a Redis whose WORK command allocates 1 MiB of garbage,
// as other goroutines of the worker would meanwhile, and whose BIG
// command answers 100 strings of 1,000 bytes.
type workCaller struct{ *mapCaller }

func (c workCaller) Call(argv []string, readOnly bool) resp.Value {
	switch argv[0] {
	case "WORK":
		b := make([]byte, 1<<20)
		b[len(b)-1] = 1
		runtime.KeepAlive(b)
		return resp.OK()
	case "BIG":
		elems := make([]resp.Value, 100)
		for i := range elems {
			elems[i] = resp.Str(strings.Repeat("x", 1000))
		}
		return resp.Arr(elems...)
	}
	return c.mapCaller.Call(argv, readOnly)
}

// TestMemoryBombs runs scripts that keep what they allocate, in every way
// a script can: each is stopped with the memory error at the 16 MiB
// limit.
func TestMemoryBombs(t *testing.T) {
	loop := func(body string) string {
		return "local t = {} local i = 0 while true do i = i + 1 " + body + " end"
	}
	for _, tt := range []struct{ name, src string }{
		{"tables", loop("t[i] = {i, i, i}")},
		{"long strings", loop("t[i] = string.rep('x', 60000) .. i")},
		{"string.rep", loop("t[i] = string.rep('x' .. i, 1000)")},
		{"closures", loop("local x = i t[i] = function() return x end")},
		{"string keys", loop("t['k' .. i] = i")},
		{"removed keys", loop("local k = string.rep('k', 1000) .. i t[k] = true t[k] = nil")},
		{"numbers in their own blocks", loop("for j = 1, 31 do local _ = j + 0.5 end t[i] = i + 0.5")},
		{"table.concat", "local p = {} for j = 1, 100 do p[j] = string.rep('x', 1000) end " + loop("p[1] = tostring(i) t[i] = table.concat(p)")},
		{"cjson.decode", "local s = cjson.encode((function() local a = {} for j = 1, 1000 do a[j] = {j} end return a end)()) " + loop("t[i] = cjson.decode(s)")},
		{"cmsgpack.unpack", "local s = cmsgpack.pack((function() local a = {} for j = 1, 1000 do a[j] = {j} end return a end)()) " + loop("t[i] = cmsgpack.unpack(s)")},
		{"struct.unpack", loop("t[i] = {struct.unpack(string.rep('c100', 100), string.rep('y', 10000) .. i)}")},
		{"redis.call replies", loop("t[i] = redis.call('BIG')")},
		{"gmatch iterators", loop("t[i] = string.gmatch(string.rep('x', 10000) .. i, '.')")},
		{"loadstring", loop("t[i] = loadstring('return ' .. i)")},
		{"metatables", loop("t = setmetatable({}, {__index = t, i})")},
		{"upvalues", "local f = function() return 0 end " + loop("local g, big = f, {i, i, i, i} f = function() return g() + #big end")},
		{"KEYS", loop("KEYS[i] = {i, i, i}")},
		{"deep recursion holding a table a frame", "local function f(n) local t = {} for j = 1, 20000 do t[j] = j + 0.5 end return #t + f(n + 1) end return f(1)"},
		{"temporaries of a recursion", "local function g(a, b) return b end local function f(n) return g({string.rep('z', 250000) .. n}, f(n + 1)) end return f(1)"},
		{"varargs", "local function f(...) local x = 0 while true do x = x + 1 end end return f(unpack((function() local t = {} for i = 1, 3000 do t[i] = string.rep('v', 10000) .. i end return t end)()))"},
		{"pcall's error values", loop("local ok, e = pcall(error, {string.rep('e', 1000) .. i}) t[i] = e")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := NewEngine(Options{Limits: Limits{Timeout: 30 * time.Second, MaxAllocBytes: 16 << 20}})
			got := eval(t, e, workCaller{newMapCaller()}, tt.src)
			if !strings.HasPrefix(got.Str, memoryStop) {
				t.Errorf("EVAL %q = %v; want an error starting %q", tt.src, got, memoryStop)
			}
			if got := eval(t, e, newMapCaller(), "return 1"); got.Int != 1 {
				t.Errorf("EVAL after the bomb = %v; want 1", got)
			}
		})
	}
}

// TestMemoryBombStopsNearLimit checks how far past the 16 MiB limit a
// script gets before it is stopped, counting what it keeps through
// redis.call: an eighth of the limit at most, even when each turn of its
// loop builds a string of 200 KB.
func TestMemoryBombStopsNearLimit(t *testing.T) {
	const limit = 16 << 20
	for _, tt := range []struct {
		name, keep string
		each       int // bytes kept each turn, about
	}{
		{"big strings", "t[i] = string.rep('x', 200000) .. i", 200_000},
		{"big strings by string.rep", "t[i] = string.rep('x' .. (i % 10), 30000)", 60_000},
		{"big strings by table.concat", "p[1] = i t[i] = table.concat(p)", 100_000},
		{"tables", "t[i] = {i, i, i}", 179},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := NewEngine(Options{Limits: Limits{Timeout: 30 * time.Second, MaxAllocBytes: limit}})
			turns := 0
			c := callerFunc(func(argv []string, readOnly bool) resp.Value {
				turns++
				return resp.OK()
			})
			src := "local p = {} for j = 2, 100 do p[j] = string.rep('c', 1000) end local t = {} local i = 0 while true do i = i + 1 " + tt.keep + " redis.call('TURN') end"
			got := eval(t, e, c, src)
			if !strings.HasPrefix(got.Str, memoryStop) {
				t.Fatalf("EVAL = %v; want an error starting %q", got, memoryStop)
			}
			kept := turns * tt.each
			t.Logf("stopped after %d turns, some %d MiB kept", turns, kept>>20)
			if kept > limit+limit/8 {
				t.Errorf("stopped after keeping some %d bytes; want at most %d", kept, limit+limit/8)
			}
		})
	}
}

// TestFarIntegerKeys writes integer keys far past a table's end, which
// gopher-lua fills with nils up to the key in one instruction or call: a
// write that would take the script past its limit is stopped before it
// allocates, in every way a script can make one; one under it runs.
func TestFarIntegerKeys(t *testing.T) {
	for _, tt := range []struct {
		name, src string
		stop      bool
	}{
		{"t[k] = v", "local t = {} t[50000000] = 1 return #t", true},
		{"a constant key", "local t = {[50000000] = 1} return #t", true},
		{"in a loop", "local t = {} for i = 1, 100 do local u = {} u[300000] = i t[i] = u end return #t", true},
		{"through __newindex", "local b = {} local a = setmetatable({}, {__newindex = b}) a[50000000] = 1 return #b", true},
		{"rawset", "local t = {} rawset(t, 50000000, 1) return #t", true},
		{"table.insert", "local t = {} table.insert(t, 50000000, 1) return #t", true},
		{"cmsgpack.unpack", `return #cmsgpack.unpack("\129\206\2\250\240\128\1")`, true},
		{"loadstring", "return loadstring('local t = {} t[50000000] = 1 return #t')()", true},
		{"under the limit", "local t = {} t[100000] = 1 return #t", false},
		{"appending", "local t = {} for i = 1, 200000 do t[i] = i end return #t", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := NewEngine(Options{Limits: Limits{Timeout: 30 * time.Second, MaxAllocBytes: 16 << 20}})
			var ms0, ms1 runtime.MemStats
			runtime.ReadMemStats(&ms0)
			got := eval(t, e, newMapCaller(), tt.src)
			runtime.ReadMemStats(&ms1)
			alloc := ms1.TotalAlloc - ms0.TotalAlloc
			if stopped := strings.HasPrefix(got.Str, memoryStop); stopped != tt.stop {
				t.Errorf("EVAL %q = %v; want stopped for memory: %v", tt.src, got, tt.stop)
			}
			// Unguarded, each of these allocates 2.4 GB (the loop,
			// 1.6 GB), most of it in one instruction.
			if tt.stop && alloc > 128<<20 {
				t.Errorf("EVAL %q allocated %d MB before it was stopped; want it stopped before it fills the array", tt.src, alloc>>20)
			}
		})
	}
}
