package luaredis

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// lessonScript is a script of the shape the lessons use: a lock release.
func lessonScript(i int) string {
	return fmt.Sprintf(`-- release %d
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("DEL", KEYS[1])
else
  return 0
end`, i)
}

// funcsScript is a table of n empty functions, the shape that compiled
// into 10 MB before MaxFunctions.
func funcsScript(i, n int) string {
	return fmt.Sprintf("-- %d\nreturn {%s}", i, strings.TrimSuffix(strings.Repeat("function() end,", n), ","))
}

// bodyScript is one function of n statements with a distinct constant
// each.
func bodyScript(i, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "-- %d\nlocal t = {}\n", i)
	for j := range n {
		fmt.Fprintf(&b, "t[%d] = redis.call('GET', 'k%d')\n", j, j)
	}
	return b.String() + "return #t"
}

func heapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestCompiledSizeEstimate checks compiledSize against the heap a cache
// of compiled scripts keeps: within a factor of two either way, so that
// the budgets that count scripts count what they cost.
func TestCompiledSizeEstimate(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the heap")
	}
	tests := []struct {
		name string
		src  func(i int) string
		n    int
	}{
		{"lesson", lessonScript, 400},
		{"functions", func(i int) string { return funcsScript(i, 99) }, 50},
		{"body", func(i int) string { return bodyScript(i, 300) }, 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srcs := make([]string, tt.n)
			for i := range srcs {
				srcs[i] = tt.src(i)
			}
			c := NewCache(1 << 30)
			before := heapAlloc()
			for _, src := range srcs {
				if _, err := c.compile(sha1hex(src), src, Limits{}.WithDefaults()); err != nil {
					t.Fatal(err)
				}
			}
			measured := int(heapAlloc() - before)
			est, n := c.Bytes()
			for _, src := range srcs {
				est -= len(src) // the sources were allocated before
			}
			runtime.KeepAlive(srcs)
			t.Logf("%d scripts: heap %d bytes (%d each), estimate %d (%d each)", n, measured, measured/n, est, est/n)
			if est < measured/2 || est > measured*2 {
				t.Errorf("estimate %d bytes, heap %d: not within a factor of 2", est, measured)
			}
		})
	}
}

// TestCompileCaps checks each cap on what a script compiles into, through
// SCRIPT LOAD, EVAL and load() inside a script.
func TestCompileCaps(t *testing.T) {
	limits := Limits{MaxFunctions: 5, MaxConstants: 10, MaxInstructions: 40}
	refusal := "ERR the playground compiles scripts of at most 5 functions, 10 constants and 40 instructions, all functions together; split the script or make it smaller"
	many := func(n int, item string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf(item, i)
		}
		return strings.Join(parts, ", ")
	}
	for _, tt := range []struct {
		name, src string
		ok        bool
	}{
		{"functions at the cap", "return {" + many(4, "function() return %d end") + "}", true},
		{"functions past the cap", "return {" + many(5, "function() return %d end") + "}", false},
		{"named functions past the cap", strings.Repeat("local function f() end\n", 5) + "return 1", false},
		{"nested functions past the cap", "return function() return function() return function() return function() return function() end end end end end", false},
		{"constants at the cap", "return {" + many(10, "'c%d'") + "}", true},
		{"constants past the cap", "return {" + many(11, "'c%d'") + "}", false},
		{"instructions past the cap", strings.Repeat("local a = 1\n", 41), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := NewEngine(Options{Limits: limits})
			for _, cmd := range [][]string{{"SCRIPT", "LOAD", tt.src}, {"EVAL", tt.src, "0"}} {
				got := e.Do(context.Background(), newMapCaller(), cmd)
				if refused := got.IsError() && got.Str == refusal; refused == tt.ok {
					t.Errorf("%s = %v; want refused: %v", cmd[0], got, !tt.ok)
				}
			}
			if !tt.ok && e.ScriptBytes() != 0 {
				t.Errorf("ScriptBytes() = %d after refusals; want 0", e.ScriptBytes())
			}
		})
	}
	t.Run("loadstring in a script", func(t *testing.T) {
		e := NewEngine(Options{Limits: limits})
		src := "local f, err = loadstring(\"return {" + many(6, "function() return %d end") + "}\") return err"
		if got := eval(t, e, newMapCaller(), src); got.Str != refusal {
			t.Errorf("loadstring error = %v; want %q", got, refusal)
		}
	})
	t.Run("default caps refuse the 60 KB table of functions", func(t *testing.T) {
		e := NewEngine(Options{MaxScriptBytes: 1 << 20})
		src := funcsScript(0, 60_000/15)
		got := e.Do(context.Background(), newMapCaller(), []string{"SCRIPT", "LOAD", src})
		if !strings.HasPrefix(got.Str, "ERR the playground compiles scripts of at most 100 functions") {
			t.Errorf("SCRIPT LOAD of %d bytes = %v; want refused", len(src), got)
		}
	})
}

// TestCacheBytes checks that the shared cache keeps at most its bytes and
// forgets the least recently used script first.
func TestCacheBytes(t *testing.T) {
	l := Limits{}.WithDefaults()
	one, err := NewCache(1<<30).compile(sha1hex(lessonScript(0)), lessonScript(0), l)
	if err != nil {
		t.Fatal(err)
	}
	c := NewCache(3*one.size + one.size/2) // room for three
	load := func(i int) *compiled {
		t.Helper()
		sc, err := c.compile(sha1hex(lessonScript(i)), lessonScript(i), l)
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	first := load(0)
	load(1)
	load(2)
	if again := load(0); again != first {
		t.Fatal("script 0 compiled again; want the cached one")
	}
	load(3) // forgets 1, the least recently used
	if bytes, n := c.Bytes(); n != 3 || bytes > c.max {
		t.Errorf("Bytes() = %d, %d scripts; want 3 scripts within %d", bytes, n, c.max)
	}
	for i, want := range []bool{true, false, true, true} {
		if got := c.get(sha1hex(lessonScript(i))) != nil; got != want {
			t.Errorf("script %d cached: %v; want %v", i, got, want)
		}
	}
}

// TestEngineScriptBytes checks what an engine counts for its scripts: the
// per-engine bound by bytes, the refusal of a script larger than it, Room
// and SCRIPT FLUSH.
func TestEngineScriptBytes(t *testing.T) {
	ctx := context.Background()
	size := func(i int) int {
		sc, err := NewCache(0).compile(sha1hex(lessonScript(i)), lessonScript(i), Limits{}.WithDefaults())
		if err != nil {
			t.Fatal(err)
		}
		return sc.size
	}
	per := size(0)
	if per < len(lessonScript(0))+500 {
		t.Fatalf("a lesson script counts %d bytes; want its source and its compiled code", per)
	}

	t.Run("oldest forgotten at MaxScriptBytes", func(t *testing.T) {
		e := NewEngine(Options{MaxScriptBytes: 3*per + per/2})
		for i := range 5 {
			if _, err := e.Load(lessonScript(i)); err != nil {
				t.Fatal(err)
			}
		}
		if got := len(e.Scripts()); got != 3 {
			t.Errorf("%d scripts kept; want 3", got)
		}
		if got, want := e.ScriptBytes(), size(2)+size(3)+size(4); got != want {
			t.Errorf("ScriptBytes() = %d; want %d", got, want)
		}
		e.Do(ctx, newMapCaller(), []string{"SCRIPT", "FLUSH"})
		if got := e.ScriptBytes(); got != 0 {
			t.Errorf("ScriptBytes() after SCRIPT FLUSH = %d; want 0", got)
		}
	})

	t.Run("larger than MaxScriptBytes alone", func(t *testing.T) {
		e := NewEngine(Options{MaxScriptBytes: 4 << 10})
		src := bodyScript(0, 40) // 1.3 KB of source, some 10 KB compiled
		got := e.Do(ctx, newMapCaller(), []string{"SCRIPT", "LOAD", src})
		if !strings.HasPrefix(got.Str, "ERR the playground keeps at most 4 KiB of scripts in a sandbox, source and compiled code together, and this script takes ") {
			t.Errorf("SCRIPT LOAD = %v; want refused", got)
		}
	})

	t.Run("room", func(t *testing.T) {
		room := 2*per + per/2
		e := NewEngine(Options{Room: func() int { return room }})
		for i := range 2 {
			if _, err := e.Load(lessonScript(i)); err != nil {
				t.Fatal(err)
			}
		}
		got := e.Do(ctx, newMapCaller(), []string{"EVAL", lessonScript(2), "1", "k", "v"})
		if want := "ERR the playground is full right now and cannot take more scripts in your sandbox; try again in a few minutes, or make room in it (SCRIPT FLUSH, DEL, FLUSHDB)"; got.Str != want {
			t.Errorf("EVAL past the room = %v; want -%s", got, want)
		}
		if got := len(e.Scripts()); got != 2 {
			t.Errorf("%d scripts after the refusal; want 2", got)
		}
		// Scripts already cached run as before.
		if got := e.Do(ctx, newMapCaller(), []string{"EVALSHA", sha1hex(lessonScript(1)), "1", "k", "v"}); got.IsError() {
			t.Errorf("EVALSHA of a cached script = %v", got)
		}
		room = 3 * per
		if _, err := e.Load(lessonScript(2)); err != nil {
			t.Errorf("Load with room again: %v", err)
		}
	})
}
