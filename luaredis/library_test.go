package luaredis

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/locklab/locklab/resp"
)

// do runs one command line, split on spaces, on e.
func do(e *Engine, c Caller, argv ...string) resp.Value {
	return e.Do(context.Background(), c, argv)
}

// TestFunctions pins, without a redis-server, replies that the
// playground's TestParityFunctions checks against Redis 7.0.15.
func TestFunctions(t *testing.T) {
	e := NewEngine(Options{})
	c := newMapCaller()
	for _, tt := range []struct {
		argv []string
		want resp.Value
	}{
		{[]string{"FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('get', function(keys, args) return redis.call('GET', keys[1]) end)"}, resp.Str("lib")},
		{[]string{"FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('x', function() end)"}, resp.Err("ERR Library 'lib' already exists")},
		{[]string{"FUNCTION", "LOAD", "#!lua name=two\nredis.register_function('GET', function() end)"}, resp.Err("ERR Function GET already exists")},
		{[]string{"FUNCTION", "LOAD", "#!lua name=two\nredis.register_function{function_name='w', callback=function(keys) return redis.call('SET', keys[1], 'v') end, flags={'no-writes'}}"}, resp.Str("two")},
		{[]string{"FUNCTION", "LOAD", "#!lua name=bad\nredis.register_function{callback=1, function_name=2}"}, resp.Err("ERR Error registering functions: ERR callback argument given to redis.register_function must be a function")},
		{[]string{"FUNCTION", "LOAD", "#!lua name=bad\nstring.len('')"}, resp.Err("ERR Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable 'string'")},
		{[]string{"FUNCTION", "LOAD", "#!lua name=bad\nlocal x = ("}, resp.Err("ERR Error compiling function: user_function:2: unexpected symbol near '<eof>'")},
		{[]string{"FCALL", "get", "1", "k"}, resp.Null()},
		{[]string{"FCALL", "w", "1", "k"}, resp.Err("ERR Write commands are not allowed from read-only scripts. script: w, on @user_function:2.")},
		{[]string{"FCALL_RO", "get", "0"}, resp.Err("ERR Can not execute a script with write flag using *_ro command.")},
		{[]string{"FCALL", "get", "x"}, resp.Err("ERR Bad number of keys provided")},
		{[]string{"FUNCTION", "DELETE", "two"}, resp.OK()},
		{[]string{"FUNCTION", "STATS"}, resp.Arr(resp.Str("running_script"), resp.Null(), resp.Str("engines"),
			resp.Arr(resp.Str("LUA"), resp.Arr(resp.Str("libraries_count"), resp.Int(1), resp.Str("functions_count"), resp.Int(1))))},
		{[]string{"FUNCTION", "KILL"}, resp.Err("NOTBUSY No scripts in execution right now.")},
	} {
		if got := e.Do(context.Background(), c, tt.argv); got.String() != tt.want.String() {
			t.Errorf("%q = %v; want %v", tt.argv, got, tt.want)
		}
	}
}

// TestFunctionUpvaluesStartAfresh pins the playground's choice: a
// function's upvalues do not outlive the call (see library.go).
func TestFunctionUpvaluesStartAfresh(t *testing.T) {
	e := NewEngine(Options{})
	do(e, nil, "FUNCTION", "LOAD", "#!lua name=n\nlocal n = 0\nredis.register_function('n', function() n = n + 1 return n end)")
	for range 2 {
		if got := do(e, nil, "FCALL", "n", "0"); got.String() != resp.Int(1).String() {
			t.Errorf("FCALL n = %v; want 1 every time", got)
		}
	}
	e.Release()
	if got := do(e, nil, "FCALL", "n", "0"); got.String() != resp.Int(1).String() {
		t.Errorf("FCALL n after Release = %v; want 1", got)
	}
}

// TestLibrariesRoundTrip checks that Libraries gives what LoadLibrary
// takes back, that libraries count in ScriptBytes, and that Forget
// removes them.
func TestLibrariesRoundTrip(t *testing.T) {
	e := NewEngine(Options{})
	codes := []string{
		"#!lua name=a\nredis.register_function('fa', function() return 'a' end)",
		"#!lua name=b\nredis.register_function{function_name='fb', callback=function() return 'b' end, flags={'no-writes'}, description='bee'}",
	}
	for _, code := range codes {
		if _, err := e.LoadLibrary(code); err != nil {
			t.Fatal(err)
		}
	}
	if e.ScriptBytes() < len(codes[0])+len(codes[1]) {
		t.Errorf("ScriptBytes() = %d; want at least the code's %d bytes", e.ScriptBytes(), len(codes[0])+len(codes[1]))
	}
	e2 := NewEngine(Options{})
	for _, code := range e.Libraries() {
		if _, err := e2.LoadLibrary(code); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(e2.Libraries(), codes) {
		t.Errorf("Libraries() = %q; want %q", e2.Libraries(), codes)
	}
	want := do(e, nil, "FUNCTION", "LIST", "WITHCODE")
	if got := do(e2, nil, "FUNCTION", "LIST", "WITHCODE"); got.String() != want.String() {
		t.Errorf("FUNCTION LIST WITHCODE of the copy = %v; want %v", got, want)
	}
	if _, err := e2.LoadLibrary(codes[0]); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("LoadLibrary of a loaded library = %v; want already exists", err)
	}
	e.Forget()
	if e.ScriptBytes() != 0 || len(e.Libraries()) != 0 {
		t.Errorf("after Forget: ScriptBytes() = %d, Libraries() = %q; want none", e.ScriptBytes(), e.Libraries())
	}
}

// TestLibraryCap checks that libraries are bounded by MaxScripts and
// MaxScriptBytes, and that a script does not push one out.
func TestLibraryCap(t *testing.T) {
	e := NewEngine(Options{MaxScripts: 2})
	for _, name := range []string{"a", "b"} {
		if got := do(e, nil, "FUNCTION", "LOAD", "#!lua name="+name+"\nredis.register_function('f"+name+"', function() return 1 end)"); got.IsError() {
			t.Fatal(got)
		}
	}
	if got := do(e, nil, "FUNCTION", "LOAD", "#!lua name=c\nredis.register_function('fc', function() return 1 end)"); !strings.Contains(got.Str, "at most 2 function libraries") {
		t.Errorf("a third library = %v; want refused", got)
	}
	if got := do(e, nil, "EVAL", "return 1", "0"); !strings.Contains(got.Str, "FUNCTION DELETE") {
		t.Errorf("a script beside 2 libraries = %v; want refused", got)
	}
	if got := do(e, nil, "FCALL", "fa", "0"); got.String() != resp.Int(1).String() {
		t.Errorf("FCALL fa = %v; want 1", got)
	}
	e = NewEngine(Options{MaxScriptBytes: 1 << 10})
	big := "#!lua name=big\n--" + strings.Repeat("x", 2<<10) + "\nredis.register_function('f', function() return 1 end)"
	if got := do(e, nil, "FUNCTION", "LOAD", big); !strings.Contains(got.Str, "at most 1 KiB") {
		t.Errorf("a library past MaxScriptBytes = %v; want refused", got)
	}
}

func TestGlobMatch(t *testing.T) {
	for _, tt := range []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", false}, // as in Redis: KEYS "**" does not list the key ""
		{"*", "abc", true},
		{"a*c", "abc", true},
		{"a*c", "abd", false},
		{"A?C", "abc", true},
		{"[a-c]x", "Bx", true},
		{"[c-a]x", "bx", true},
		{"[^a]x", "ax", false},
		{"[^a]x", "bx", true},
		{"[!a]x", "!x", true},
		{`a\*`, "a*", true},
		{`a\*`, "ab", false},
		{"a[", "a", false},
		{"lib**", "lib", true},
		{"*a*a*a*a*a*a*a*a*a*b", strings.Repeat("a", 60), false},
	} {
		if got := globMatch(tt.pattern, tt.s, true); got != tt.want {
			t.Errorf("globMatch(%q, %q) = %v; want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

// TestListPatternCost checks that FUNCTION LIST's pattern matching stops
// at its budget, however the pattern and the names are made.
func TestListPatternCost(t *testing.T) {
	e := NewEngine(Options{})
	for i := range 40 {
		name := fmt.Sprintf("%s%d", strings.Repeat("a", 2000), i)
		if got := do(e, nil, "FUNCTION", "LOAD", "#!lua name="+name+"\nredis.register_function('f"+strconv.Itoa(i)+"', function() return 1 end)"); got.IsError() {
			t.Fatal(got)
		}
	}
	for _, pattern := range []string{
		"*" + strings.Repeat("a", 30000) + "b",
		"[" + strings.Repeat("b", 60000) + "]*",
	} {
		if got := do(e, nil, "FUNCTION", "LIST", "LIBRARYNAME", pattern); !strings.Contains(got.Str, "at most 1000000 steps") {
			t.Errorf("FUNCTION LIST LIBRARYNAME %.20q... = %.80v; want refused for its cost", pattern, got)
		}
	}
	// Many stars cost little: a star gives up on longer matches once the
	// rest of the pattern matched nowhere, and 1,000 nest at most.
	if got := do(e, nil, "FUNCTION", "LIST", "LIBRARYNAME", strings.Repeat("*a", 20000)+"b"); got.Kind != resp.Array || len(got.Elems) != 0 {
		t.Errorf("FUNCTION LIST LIBRARYNAME *a*a...b = %.80v; want no library", got)
	}
	if got := do(e, nil, "FUNCTION", "LIST", "LIBRARYNAME", "*9"); len(got.Elems) != 4 {
		t.Errorf("FUNCTION LIST LIBRARYNAME *9 = %d libraries; want 4", len(got.Elems))
	}
}
