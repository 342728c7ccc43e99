package luaredis

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/resp"
)

// payloadOf is a FUNCTION DUMP payload of the given libraries' code.
func payloadOf(codes ...string) string {
	var b []byte
	for _, c := range codes {
		b = appendRDBString(append(b, rdbOpcodeFunction2), c)
	}
	return string(appendFooter(b))
}

func libCode(name, fn string) string {
	return fmt.Sprintf("#!lua name=%s\nredis.register_function('%s', function() return '%s' end)", name, fn, name)
}

// TestFunctionDumpRoundTrip dumps libraries, flushes them and restores
// them, each policy in turn, and checks what FCALL then finds.
func TestFunctionDumpRoundTrip(t *testing.T) {
	e := NewEngine(Options{})
	for _, l := range []string{libCode("a", "fa"), libCode("b", "fb"), "#!lua name=c\nlocal p = 'f' .. 'c'\nredis.register_function(p, function() return 'c' end)"} {
		if v := do(e, nil, "FUNCTION", "LOAD", l); v.IsError() {
			t.Fatal(v)
		}
	}
	dump := do(e, nil, "FUNCTION", "DUMP")
	do(e, nil, "FUNCTION", "FLUSH")
	for _, tt := range []struct {
		argv []string
		want string
	}{
		{[]string{"FUNCTION", "RESTORE", dump.Str}, "OK"},
		{[]string{"FCALL", "fc", "0"}, "c"},
		{[]string{"FUNCTION", "RESTORE", dump.Str}, "ERR Library a already exists"},
		{[]string{"FUNCTION", "RESTORE", dump.Str, "replace"}, "OK"},
		{[]string{"FUNCTION", "RESTORE", payloadOf(libCode("z", "fz")), "FLUSH"}, "OK"},
		{[]string{"FCALL", "fa", "0"}, "ERR Function not found"},
		{[]string{"FCALL", "fz", "0"}, "z"},
		{[]string{"FUNCTION", "RESTORE", dump.Str, "APPEND"}, "OK"},
		{[]string{"FCALL", "fb", "0"}, "b"},
	} {
		if got := e.Do(context.Background(), nil, tt.argv); got.Str != tt.want {
			t.Errorf("%.40q = %v; want %s", tt.argv, got, tt.want)
		}
	}
	if got := len(e.Libraries()); got != 4 {
		t.Errorf("%d libraries at the end; want 4", got)
	}
}

// TestFunctionRestoreLimits gives FUNCTION RESTORE what an attacker
// would: more libraries than a sandbox keeps, more code than it keeps,
// compressed data that claims a terabyte, and a library whose top level
// never ends. Each is refused with the playground's message, quickly and
// without the memory it claims, and the sandbox's libraries and cached
// scripts are as they were.
func TestFunctionRestoreLimits(t *testing.T) {
	newEngine := func() *Engine {
		e := NewEngine(Options{MaxScripts: 4, MaxScriptBytes: 16 << 10, Limits: Limits{Timeout: 200 * time.Millisecond}})
		if v := do(e, nil, "FUNCTION", "LOAD", libCode("keep", "kept")); v.IsError() {
			t.Fatal(v)
		}
		if v := do(e, nil, "EVAL", "return 1", "0"); v.IsError() {
			t.Fatal(v)
		}
		return e
	}
	var many []string
	for i := range 5 {
		many = append(many, libCode(fmt.Sprint("l", i), fmt.Sprint("f", i)))
	}
	// A library of 300 KiB, LZF-compressed to a few KiB.
	big := "#!lua name=big\n--" + strings.Repeat("x", 300<<10) + "\nredis.register_function('big', function() return 1 end)"
	// LZF data of one literal and 100 references of 264 bytes each,
	// claiming 2^40 bytes.
	bomb := append([]byte{0x00, 'a'}, bytes.Repeat([]byte{0xe0, 0xff, 0x00}, 100)...)
	terabyte := []byte{rdbOpcodeFunction2, rdbEncLZF}
	terabyte = appendRDBLen(terabyte, len(bomb))
	terabyte = append(terabyte, 0x81, 0, 0, 1, 0, 0, 0, 0, 0)
	terabyte = append(terabyte, bomb...)
	for _, tt := range []struct {
		name, payload, policy, want string
	}{
		{"five libraries", payloadOf(many...), "FLUSH", "at most 4 function libraries"},
		{"three more beside two", payloadOf(many[:3]...), "APPEND", "at most 4 function libraries"},
		{"300 KiB of code", payloadOf(big), "FLUSH", "at most 16 KiB of function libraries"},
		{"a terabyte claimed", string(appendFooter(terabyte)), "FLUSH", "at most 16 KiB of function libraries"},
		{"an endless top level", payloadOf("#!lua name=loop\nwhile true do end"), "FLUSH", "stopped the script after 200ms"},
		{"a collision", payloadOf(libCode("other", "kept")), "APPEND", "Function kept already exists"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine()
			if tt.name == "three more beside two" {
				do(e, nil, "FUNCTION", "LOAD", libCode("second", "f2nd"))
			}
			before := e.Libraries()
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			start := time.Now()
			got := do(e, nil, "FUNCTION", "RESTORE", tt.payload, tt.policy)
			took := time.Since(start)
			runtime.ReadMemStats(&m1)
			if !got.IsError() || !strings.Contains(got.Str, tt.want) {
				t.Errorf("FUNCTION RESTORE = %v; want an error with %q", got, tt.want)
			}
			if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 16<<20 {
				t.Errorf("the restore allocated %d MiB", alloc>>20)
			}
			if took > 2*time.Second {
				t.Errorf("the restore took %v", took)
			}
			if after := e.Libraries(); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf("libraries after a refused restore: %q; want %q", after, before)
			}
			if v := do(e, nil, "EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"); v.String() != resp.Int(1).String() {
				t.Errorf("the cached script after a refused restore: %v", v)
			}
			if v := do(e, nil, "FCALL", "kept", "0"); v.Str != "keep" {
				t.Errorf("FCALL kept after a refused restore = %v", v)
			}
		})
	}
}

// TestFunctionRestoreRoom refuses a payload the playground has no room
// for, as FUNCTION LOAD does.
func TestFunctionRestoreRoom(t *testing.T) {
	e := NewEngine(Options{Room: func() int { return 100 }})
	if got := do(e, nil, "FUNCTION", "RESTORE", payloadOf(libCode("a", "fa"))); got.Str != errLibFull {
		t.Errorf("FUNCTION RESTORE with no room = %v; want %s", got, errLibFull)
	}
	if len(e.Libraries()) != 0 {
		t.Errorf("libraries: %q; want none", e.Libraries())
	}
}
