package luaredis

import (
	"context"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// TestSmallPiecesAreCopies keeps one-byte pieces of 40 strings of 100 KB
// that the script drops, cut in each way the libraries cut strings: what
// the script keeps is the pieces, not the strings they were cut from.
func TestSmallPiecesAreCopies(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the heap")
	}
	for _, tt := range []struct{ name, piece string }{
		{"string.sub", "s:sub(1, 1)"},
		{"string.match", "s:match('^(.)')"},
		{"string.find", "select(3, s:find('(.)'))"},
		{"string.gmatch", "s:gmatch('.')()"},
		{"string.gsub", "(function() local p s:gsub('^.', function(c) p = c end) return p end)()"},
		{"struct.unpack", "struct.unpack('c1', s)"},
		{"cmsgpack.unpack", "cmsgpack.unpack(cmsgpack.pack({'a', s}))[1]"},
		{"redis.call", "redis.call('GETRANGE', s)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := NewEngine(Options{Limits: Limits{Timeout: time.Minute, MaxAllocBytes: 1 << 40}})
			c := &measureCaller{e: e, mapCaller: newMapCaller()}
			src := `local t = {}
redis.call('MEASURE')
for i = 1, 40 do local s = string.rep('p', 100000) .. i t[i] = ` + tt.piece + ` end
redis.call('MEASURE')
return #t`
			if got := e.Do(context.Background(), c, []string{"EVAL", src, "0"}); got.IsError() || got.Int != 40 {
				t.Fatalf("EVAL = %v; want 40", got)
			}
			if grew := int64(c.heap[1]) - int64(c.heap[0]); grew > 1<<20 {
				t.Errorf("the heap grew by %d bytes for 40 one-byte pieces; want the 4 MB they were cut from dropped", grew)
			}
		})
	}
}

// TestGmatchAsGopherLua checks that string.gmatch, which finds one match
// at a time, finds what gopher-lua's, which finds them all at once, does.
func TestGmatchAsGopherLua(t *testing.T) {
	const collect = `local out = {} for a, b in string.gmatch(S, P) do out[#out + 1] = tostring(a) .. '|' .. tostring(b) end return table.concat(out, ',')`
	L := lua.NewState()
	defer L.Close()
	e := NewEngine(Options{})
	for _, s := range []string{"", "a", "hello world from Lua", "key:1,key:22,,key:333", "aaa", "  x  y  "} {
		for _, p := range []string{".", "%a+", "(%a+)", "()", "x*", "a-", "^a", "^(%a+)", "(%w+):(%d+)", "[^,]+", "()(a)", "(h)(.)", "%s*", "$", "a?"} {
			L.SetGlobal("S", lua.LString(s))
			L.SetGlobal("P", lua.LString(p))
			if err := L.DoString(collect); err != nil {
				t.Fatalf("gopher-lua, gmatch(%q, %q): %v", s, p, err)
			}
			want := L.Get(-1).String()
			L.Pop(1)
			src := strings.ReplaceAll(collect, "S, P", "ARGV[1], ARGV[2]")
			got := eval(t, e, newMapCaller(), src, "0", s, p)
			if got.IsError() || got.Str != want {
				t.Errorf("gmatch(%q, %q) = %v; want %q as gopher-lua finds", s, p, got, want)
			}
		}
	}
	if got := eval(t, e, newMapCaller(), "return #{string.gmatch('abc', '.')}"); got.Int != 1 {
		t.Errorf("string.gmatch returns %v values; want 1, as Lua 5.1", got)
	}
	if got := eval(t, e, newMapCaller(), "return string.gmatch('abc', '[a')"); !got.IsError() {
		t.Errorf("string.gmatch with a malformed pattern = %v; want an error", got)
	}
}
