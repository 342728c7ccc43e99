package luaredis

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/yuin/gopher-lua/parse"
)

// TestSyntax51Accepts checks that the Lua 5.1 recognizer takes what Lua
// 5.1 takes: tricky but valid scripts, and every script the project's own
// packages send to Redis.
func TestSyntax51Accepts(t *testing.T) {
	srcs := []string{
		"",
		"return",
		"return;",
		"local a, b = 1, 2; local c",
		"local function f(...) return select('#', ...) end return f(1, 2)",
		"function a.b.c:d(x, y, ...) return self, ... end",
		"return ...",
		"local t = {1, 2; 3, x = 1, ['y'] = 2, [3] = {}, f = function() end,}",
		"return f{1} .. g'x' .. h\"y\" .. k[[z]]",
		"x, y.z, w[1] = 1, 2, 3",
		"a.b:c(1):d 'e' {f = 1}",
		"return -2 ^ -3 .. 'x' == 'y' and not #t or nil",
		"while true do break end repeat local x = 1 until x",
		"for i = 1, 10, 2 do end for k, v in pairs(t) do end for _ in next, t do end",
		"if a then elseif b then else end",
		"do return end",
		"return 1e10, 1.5e-3, .5, 3., 0x1F, 0XaB, 1E+2",
		"--[[ long\ncomment ]] --[==[ x ]] ]==] -- line\nreturn [==[\nlong ]] string]==]",
		"return 'a\\'b\\\"c\\\\\\n\\065\\z'",
		"return \"multi\\\nline\"",
		"local t = {} t[#t + 1] = (f)(1)",
		"return (...)",
		"while f() do local x = function() for i = 1, 2 do break end end end",
		"return a.b.c[d][e](f)(g):h()",
		"return " + strings.Repeat("(", 198) + "1" + strings.Repeat(")", 198),
		strings.Repeat("do ", 199) + strings.Repeat("end ", 199),
	}
	srcs = append(srcs, projectScripts(t)...)
	for _, src := range srcs {
		if err := checkSyntax51(src, chunkName); err != nil {
			t.Errorf("checkSyntax51(%q) = %v; want nil", src, err)
		}
	}
}

// projectScripts returns the Lua scripts written as Go string constants
// in the packages that send scripts to Redis.
func projectScripts(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, dir := range []string{"../lock", "../race", "../store"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(file, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err == nil && strings.Contains(s, "redis.call") {
					if _, err := parse.Parse(strings.NewReader(s), chunkName); err == nil {
						out = append(out, s)
					}
				}
				return true
			})
		}
	}
	if len(out) == 0 {
		t.Fatal("found no scripts in lock, race and store")
	}
	return out
}

// TestLua51Source checks that hexadecimal numbers reach gopher-lua as
// Lua 5.1 reads them, on the same lines.
func TestLua51Source(t *testing.T) {
	for _, tt := range []struct{ src, want string }{
		{"return 0x1p4", "return  16 "},
		{"return 0x10..'a'\n", "return  16 ..'a'\n"},
		{"return 0xffffffffffffffff", "return  1.8446744073709552e+19 "},
		{"return 10, 'x0x1'", "return 10, 'x0x1'"},
	} {
		got, err := lua51Source(tt.src, chunkName)
		if err != nil || got != tt.want {
			t.Errorf("lua51Source(%q) = %q, %v; want %q", tt.src, got, err, tt.want)
		}
	}
}

// TestSyntax51Errors checks the messages of the common mistakes against
// what Redis 7.0 (Lua 5.1) prints; the parity test compares more of them
// with a real server.
func TestSyntax51Errors(t *testing.T) {
	for _, tt := range []struct{ src, want string }{
		{"local x error", "user_script:1: '=' expected near '<eof>'"},
		{"local x = 1 y error('e')", "user_script:1: '=' expected near 'error'"},
		{"if x then return 1", "user_script:1: 'end' expected near '<eof>'"},
		{"if x then\nreturn 1", "user_script:2: 'end' expected (to close 'if' at line 1) near '<eof>'"},
		{"return f(1,\n2", "user_script:2: ')' expected (to close '(' at line 1) near '<eof>'"},
		{"for i = 1 10 do end", "user_script:1: ',' expected near '10'"},
		{"for i do end", "user_script:1: '=' or 'in' expected near 'do'"},
		{"function f(1) end", "user_script:1: <name> or '...' expected near '1'"},
		{"return 'abc", "user_script:1: unfinished string near '<eof>'"},
		{"return 'abc\nx'", "user_script:1: unfinished string near ''abc'"},
		{"return [==[abc", "user_script:1: unfinished long string near '<eof>'"},
		{"--[[ x", "user_script:1: unfinished long comment near '<eof>'"},
		{"return [=x", "user_script:1: invalid long string delimiter near '[='"},
		{"return '\\300'", "user_script:1: escape sequence too large near '''"},
		{"return 3..2", "user_script:1: malformed number near '3..2'"},
		{"return 0x", "user_script:1: malformed number near '0x'"},
		{"goto done", "user_script:1: '=' expected near 'done'"},
		{"::done::", "user_script:1: unexpected symbol near ':'"},
		{"break", "user_script:1: no loop to break near '<eof>'"},
		{"function f() return ... end", "user_script:1: cannot use '...' outside a vararg function near '...'"},
		{"f()\n(g)()", "user_script:2: ambiguous syntax (function call x new statement) near '('"},
		{"a:b", "user_script:1: function arguments expected near '<eof>'"},
		{"(a) = 1", "user_script:1: syntax error near '='"},
		{"x, f() = 1, 2", "user_script:1: syntax error near '='"},
		{"return $", "user_script:1: unexpected symbol near '$'"},
		{"return \x01", "user_script:1: unexpected symbol near 'char(1)'"},
		{"return 1 end", "user_script:1: '<eof>' expected near 'end'"},
		{"return " + strings.Repeat("(", 199) + "1", "user_script:1: chunk has too many syntax levels"}, // as on Redis 7.0.15
		{strings.Repeat("do ", 200), "user_script:1: chunk has too many syntax levels"},
	} {
		err := checkSyntax51(tt.src, chunkName)
		if err == nil || err.Error() != tt.want {
			t.Errorf("checkSyntax51(%q) = %v; want %s", tt.src, err, tt.want)
		}
	}
}

// TestSyntax51Mutations edits valid scripts at random and checks that the
// recognizer never fails but with a syntax error, and that what it
// accepts, gopher-lua parses too (gopher-lua takes more: empty
// statements, ",," in tables, a call's "(" on the next line, which Lua
// 5.1 refuses as Redis does).
func TestSyntax51Mutations(t *testing.T) {
	seeds := []string{
		"local t = {1, 'a', x = {y = [[z]]}} for k, v in pairs(t) do if k == 1 then break end end return #t",
		"if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end",
		"local function f(a, ...) return a .. select('#', ...) end -- c\nreturn f('x', 1, 2), -2^3, not nil",
		"while true do repeat local x = (1 + 2) * 3 until x > 1 break end return {f = function() end}",
	}
	alphabet := []byte("()[]{}=.,;:'\"-+*/%^#<>~ \n\tabcdefinrtlx0159[]")
	rnd := uint32(7)
	next := func(n int) int { rnd = rnd*1664525 + 1013904223; return int(rnd>>8) % n }
	for i := 0; i < 20000; i++ {
		b := []byte(seeds[i%len(seeds)])
		for range 1 + next(3) {
			at := next(len(b))
			switch next(3) {
			case 0:
				b = append(b[:at], b[at+1:]...)
			case 1:
				b = append(b[:at], append([]byte{alphabet[next(len(alphabet))]}, b[at:]...)...)
			default:
				b[at] = alphabet[next(len(alphabet))]
			}
		}
		src := string(b)
		err := checkSyntax51(src, chunkName)
		if err != nil {
			if _, ok := err.(*syntaxError); !ok {
				t.Fatalf("checkSyntax51(%q) = %v; want a syntax error", src, err)
			}
		}
		if _, perr := parse.Parse(strings.NewReader(src), chunkName); perr != nil && err == nil {
			t.Errorf("checkSyntax51 accepts %q, gopher-lua says %v", src, perr)
		}
	}
}
