package luaredis

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/locklab/locklab/resp"
)

// TestAccountSeesGopherLua checks that the account finds the unexported
// fields it reads in this version of gopher-lua, and that what it reads
// there is what the state holds: a value only a temporary register keeps,
// and a key a table no longer has.
func TestAccountSeesGopherLua(t *testing.T) {
	if _, err := findLayout(); err != nil {
		t.Fatalf("findLayout: %v; the account must be taught this version of gopher-lua", err)
	}
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	acct, err := newAccount(L)
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 1<<20)
	L.Push(lua.LString(big)) // on the stack, named by nothing
	if got := acct.held(1 << 30); got < 1<<20 {
		t.Errorf("held() with 1 MiB on the stack = %d; want at least 1 MiB", got)
	}
	L.SetTop(0)
	tb := L.NewTable()
	tb.RawSetString(big, lua.LTrue)
	tb.RawSetString(big, lua.LNil) // gopher-lua keeps the key
	L.Push(tb)
	if got := acct.held(1 << 30); got < 1<<20 {
		t.Errorf("held() of a table that once had a 1 MiB key = %d; want at least 1 MiB", got)
	}
	L.SetTop(0)
	acct.clearStack()
	if got := acct.held(1 << 30); got > 4<<10 {
		t.Errorf("held() after clearing the stack = %d; want about 0", got)
	}
}

// measureCaller answers MEASURE with what the engine's account holds and
// the live heap, measured at that moment inside the script, and GETRANGE
// s with the first byte of s, cut from it as a sandbox cuts its values.
type measureCaller struct {
	e          *Engine
	held, heap []uint64
	*mapCaller
}

func (c *measureCaller) Call(argv []string, readOnly bool) resp.Value {
	if argv[0] == "GETRANGE" {
		return resp.Str(argv[1][:1])
	}
	if argv[0] != "MEASURE" {
		return c.mapCaller.Call(argv, readOnly)
	}
	c.heap = append(c.heap, heapAlloc())
	c.held = append(c.held, c.e.vm.acct.held(^uint64(0)>>1))
	return resp.OK()
}

// TestAccountEstimate checks the account's estimate against the heap a
// script's data really takes, for each kind of thing a script can hold:
// never much less (a script could then hold more than the limit) and at
// most a few times more (a script holding little must not be stopped).
func TestAccountEstimate(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the heap")
	}
	const n = 20000
	for _, tt := range []struct {
		name, build string
		over        float64 // how many times the heap the estimate may be
	}{
		{"empty tables", "t[i] = {}", 2},
		{"arrays", "t[i] = {i, i, i}", 2},
		{"tables by constructor", "t[i] = {a = i, b = 'x'}", 4},
		{"tables by assignment", "local u = {} u.a = i u.b = 'x' t[i] = u", 2},
		{"tables with a boolean key", "local u = {} u[true] = i t[i] = u", 2},
		{"numbers", "t[i] = i + 0.5", 2},
		{"every 32nd number", "for j = 1, 31 do local _ = j + 0.5 end t[i] = i + 0.5", 2},
		{"short strings", "t[i] = 'k' .. i", 2},
		{"long strings", "t[i] = string.rep('x', 200) .. i", 2},
		{"one string many times", "t[i] = s", 2},
		{"string keys", "t['k' .. i] = i", 2},
		{"string keys removed", "t['k' .. i] = i t['k' .. i] = nil", 2},
		{"closures", "local x = i t[i] = function() return x end", 2},
		{"nested tables", "t[i] = {{{i}}}", 2},
		{"gmatch iterators", "t[i] = string.gmatch(s, '.')", 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := NewEngine(Options{Limits: Limits{Timeout: time.Minute, MaxAllocBytes: 1 << 40}})
			c := &measureCaller{e: e, mapCaller: newMapCaller()}
			src := fmt.Sprintf(`local s = string.rep('y', 100)
local t = {}
redis.call('MEASURE')
for i = 1, %d do %s end
redis.call('MEASURE')
return #t`, n, tt.build)
			if got := e.Do(context.Background(), c, []string{"EVAL", src, "0"}); got.IsError() {
				t.Fatalf("EVAL = %v", got)
			}
			heap := float64(int64(c.heap[1]) - int64(c.heap[0]))
			est := float64(c.held[1]) - float64(c.held[0])
			t.Logf("%d of them: heap %.0f bytes (%.0f each), estimate %.0f (%.0f each), %.2f times", n, heap, heap/n, est, est/n, est/heap)
			if est < heap*0.8 || est > heap*tt.over {
				t.Errorf("estimate %.0f bytes, heap %.0f: want between 0.8 and %g times the heap", est, heap, tt.over)
			}
		})
	}
}

// TestAccountFindsHiddenMemory keeps 4 MB in each place a script could
// hide it from a walk of its named variables and tables, and checks that
// the account counts it there.
func TestAccountFindsHiddenMemory(t *testing.T) {
	const want = 4_000_000
	// big makes 4 MB of distinct strings in a table.
	const big = "(function() local b = {} for i = 1, 40 do b[i] = string.rep('h', 100000) .. i end return b end)()"
	for _, tt := range []struct{ name, src string }{
		{"a named local", "local b = " + big + " redis.call('MEASURE')"},
		{"a temporary register", "local function g(a, b) return b end return g(" + big + ", redis.call('MEASURE'))"},
		{"varargs", "local function f(...) redis.call('MEASURE') end f(unpack(" + big + "))"},
		{"an upvalue", "local f do local b = " + big + " f = function() return #b end end redis.call('MEASURE')"},
		{"a metatable", "local t = setmetatable({}, {__index = " + big + "}) redis.call('MEASURE')"},
		{"a table's key", "local t = {} t[" + big + "] = true redis.call('MEASURE')"},
		{"keys a table no longer has", "local t = {} for i, s in ipairs(" + big + ") do t[s] = true t[s] = nil end redis.call('MEASURE')"},
		{"KEYS", "KEYS[2] = " + big + " redis.call('MEASURE')"},
		{"a pcall's error", "local ok, e = pcall(error, " + big + ") redis.call('MEASURE')"},
		{"gmatch iterators", "local its = {} for i, s in ipairs(" + big + ") do its[i] = string.gmatch(s, 'x') end redis.call('MEASURE')"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := NewEngine(Options{Limits: Limits{Timeout: time.Minute, MaxAllocBytes: 1 << 40}})
			c := &measureCaller{e: e, mapCaller: newMapCaller()}
			if got := e.Do(context.Background(), c, []string{"EVAL", tt.src, "1", "k"}); got.IsError() {
				t.Fatalf("EVAL = %v", got)
			}
			if len(c.held) != 1 || c.held[0] < want {
				t.Errorf("held %v; want at least %d", c.held, want)
			}
		})
	}
}

// TestNothingOutlivesAScript checks that after a script the Lua state
// holds nothing of it, whatever it left on its stack.
func TestNothingOutlivesAScript(t *testing.T) {
	e := NewEngine(Options{})
	src := "local function f() local t = {} for i = 1, 100000 do t[i] = i + 0.5 end return #t end return f()"
	if got := eval(t, e, newMapCaller(), src, "1", "key", "arg"); got.Int != 100000 {
		t.Fatalf("EVAL = %v; want 100000", got)
	}
	if got := e.vm.acct.held(1 << 30); got > 4<<10 {
		t.Errorf("the state holds %d bytes after the script; want about 0", got)
	}
}

// TestAccountWalkStops checks that a walk stops soon after its count
// passes the limit, however much more the state holds, so that judging a
// script costs work in proportion to the limit.
func TestAccountWalkStops(t *testing.T) {
	e := NewEngine(Options{Limits: Limits{Timeout: time.Minute, MaxAllocBytes: 1 << 40}})
	var held uint64
	c := &measureCaller{e: e, mapCaller: newMapCaller()}
	src := "local t = {} for i = 1, 200000 do t[i] = {i + 0.5} end redis.call('MEASURE') return 1"
	e.Do(context.Background(), callerFunc(func(argv []string, readOnly bool) resp.Value {
		if argv[0] == "MEASURE" {
			held = e.vm.acct.held(1 << 20)
			return resp.OK()
		}
		return c.Call(argv, readOnly)
	}), []string{"EVAL", src, "0"})
	// The table's array alone is 3 MiB; a walk that stopped at once has
	// counted it and at most a few of the small tables.
	if held <= 1<<20 || held > 4<<20 {
		t.Errorf("held(1 MiB) of a state holding 40 MB = %d; want past 1 MiB and under 4 MiB", held)
	}
}

type callerFunc func(argv []string, readOnly bool) resp.Value

func (f callerFunc) Call(argv []string, readOnly bool) resp.Value { return f(argv, readOnly) }
