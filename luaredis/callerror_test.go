package luaredis

import (
	"strings"
	"testing"

	"github.com/locklab/locklab/resp"
)

// TestTypeErrorNames pins, without a redis-server, type errors that the
// playground's TestParityLuaTypeErrors checks against Redis 7.0.15. It
// fails first if a gopher-lua other than v1.1.2 keeps a frame's pc or
// registers elsewhere: the names are then lost.
func TestTypeErrorNames(t *testing.T) {
	e := NewEngine(Options{})
	for _, tt := range []struct{ script, want string }{
		{"redis.cal('GET', 'x')", "user_script:1: attempt to call field 'cal' (a nil value)"},
		{"local f = 5\nreturn f()", "user_script:2: attempt to call local 'f' (a number value)"},
		{"local t = {}\nreturn t:nope()", "user_script:2: attempt to call method 'nope' (a nil value)"},
		{"return KEYS()", "user_script:1: attempt to call global 'KEYS' (a table value)"},
		{"local u\nlocal function g() return u() end\nreturn g()", "user_script:2: attempt to call upvalue 'u' (a nil value)"},
		{"return (function() end)()()", "user_script:1: attempt to call a nil value"},
		{"for k in nil do end", "user_script:1: attempt to call a nil value"},
		{"local t = {}\nreturn t.x.y", "user_script:2: attempt to index field 'x' (a nil value)"},
		{"local t\nt.x = 1", "user_script:2: attempt to index local 't' (a nil value)"},
		{"local s = '10'\nlocal q\nreturn s + q", "user_script:3: attempt to perform arithmetic on local 'q' (a nil value)"},
		{"return ARGV[1] + 1", "user_script:1: attempt to perform arithmetic on field '?' (a nil value)"},
		{"return 1 + nil", "user_script:1: attempt to perform arithmetic on a nil value"},
		{"return -KEYS", "user_script:1: attempt to perform arithmetic on global 'KEYS' (a table value)"},
		{"local z\nreturn #z", "user_script:2: attempt to get length of local 'z' (a nil value)"},
		{"local x, y = {}, 'b'\nreturn x .. y .. 'c'", "user_script:2: attempt to concatenate local 'x' (a table value)"},
		{"return 'a' .. redis.nope .. 'b'", "user_script:1: attempt to concatenate field 'nope' (a nil value)"},
		{"return select(2, pcall(function() local q; q() end))", ""},
	} {
		got := do(e, nil, "EVAL", tt.script, "0")
		if tt.want == "" { // the message comes back as pcall's result
			if got.Str != "user_script:1: attempt to call local 'q' (a nil value)" {
				t.Errorf("%q = %v", tt.script, got)
			}
			continue
		}
		if !got.IsError() || !strings.HasPrefix(got.Str, "ERR "+tt.want+" script: ") {
			t.Errorf("%q = %v; want ERR %s script: ...", tt.script, got, tt.want)
		}
	}
}

func TestChunkID(t *testing.T) {
	for _, tt := range []struct{ name, want string }{
		{"=name", "name"},
		{"=" + strings.Repeat("n", 70), strings.Repeat("n", 59)},
		{"@file.lua", "file.lua"},
		{"@" + strings.Repeat("d/", 30) + "f.lua", "..." + (strings.Repeat("d/", 30) + "f.lua")[65-52:]},
		{"return 1", `[string "return 1"]`},
		{"return 1\nreturn 2", `[string "return 1..."]`},
		{"\x1bLuaQ\x00\x01", `[string "` + "\x1bLuaQ" + `"]`},
		{strings.Repeat("x", 43), `[string "` + strings.Repeat("x", 43) + `"]`},
		{strings.Repeat("x", 44), `[string "` + strings.Repeat("x", 43) + `..."]`},
	} {
		if got := chunkID(tt.name); got != tt.want {
			t.Errorf("chunkID(%q) = %q; want %q", tt.name, got, tt.want)
		}
	}
}

// TestPcallClosesUpvalues: a closure made in a function whose error
// pcall or xpcall caught keeps the value it captured, and one over a local of
// pcall's caller still shares it (see upvalues.go).
func TestPcallClosesUpvalues(t *testing.T) {
	e := NewEngine(Options{})
	for _, tt := range []struct {
		script string
		want   int64
	}{
		{"local f\npcall(function() local x = 1\nf = function() return x end\nerror('e') end)\nlocal a, b, c = 5, 6, 7\nreturn f()", 1},
		{"local x = 1\nlocal function inc() x = x + 1 end\npcall(function() error('e') end)\ninc()\nreturn x", 2},
		{"local f\npcall(function(a) f = function() a = a + 1 return a end\nerror('e') end, 41)\nlocal t = 0\nf()\nreturn f()", 43},
		{"local f\nxpcall(function() local x = 1\nf = function() return x end\nerror('e') end, function(m) return m end)\nlocal a, b, c = 5, 6, 7\nreturn f()", 1},
	} {
		if got := do(e, nil, "EVAL", tt.script, "0"); got.Kind != resp.Integer || got.Int != tt.want {
			t.Errorf("%q = %v; want %d", tt.script, got, tt.want)
		}
	}
}
