package luaredis

import (
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/testenv"
	"github.com/locklab/locklab/resp"
)

// TestLibsBounded checks that cjson.encode and cmsgpack.pack stop at the
// string limit as they write, however much a table repeats itself: a
// table of 20 references to the level below, 10 levels deep, would be
// 20^10 elements.
func TestLibsBounded(t *testing.T) {
	e := NewEngine(Options{Limits: Limits{MaxStringBytes: 64 << 10, Timeout: 5 * time.Second}})
	build := `local t = {1} for d = 1, 10 do local u = {} for i = 1, 20 do u[i] = t end t = u end `
	for _, tt := range []struct{ name, src string }{
		{"cjson.encode", build + `return cjson.encode(t)`},
		{"cmsgpack.pack", build + `return cmsgpack.pack(t, t)`},
		{"cjson.encode of a long array", `local t = {} for i = 1, 100000 do t[i] = 'abcdefgh' end return cjson.encode(t)`},
		{"struct.pack", `return struct.pack(string.rep('c0', 100), unpack((function() local a = {} for i = 1, 100 do a[i] = string.rep('x', 1000) end return a end)()))`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			v := eval(t, e, newMapCaller(), tt.src)
			if v.Kind != resp.Error || !strings.Contains(v.Str, "resulting string too large") {
				t.Errorf("%s = %v; want the string limit's error", tt.name, v)
			}
			// Unstopped, these write 20^10 elements or run for minutes.
			if d := time.Since(start); d > testenv.HangGuard {
				t.Errorf("%s took %v; want it stopped at the limit", tt.name, d)
			}
		})
	}
}

// TestLibsRoundTrip checks that what the libraries write, they read back.
func TestLibsRoundTrip(t *testing.T) {
	e := NewEngine(Options{})
	for _, tt := range []struct {
		src  string
		want resp.Value
	}{
		{`local t = cjson.decode(cjson.encode({a = {1, 2, 'x'}, b = true})) return {t.a[3], t.b and 1 or 0}`, resp.Arr(resp.Str("x"), resp.Int(1))},
		{`local a, b, c = cmsgpack.unpack(cmsgpack.pack(-70000, 'héllo', {k = 2.5})) return {a, b, tostring(c.k)}`, resp.Arr(resp.Int(-70000), resp.Str("héllo"), resp.Str("2.5"))},
		{`return {struct.unpack('>i2 s d', struct.pack('>i2 s d', -300, 'ab', 0.25))}`, resp.Arr(resp.Int(-300), resp.Str("ab"), resp.Int(0), resp.Int(14))},
		{`return bit.tohex(bit.bxor(0xf0f0f0f0, bit.bnot(0)))`, resp.Str("0f0f0f0f")},
	} {
		if got := eval(t, e, newMapCaller(), tt.src); got.String() != tt.want.String() {
			t.Errorf("EVAL %q = %v; want %v", tt.src, got, tt.want)
		}
	}
}

// TestLibsWatchdog checks that a loop of library calls, each too short
// for the VM to look at the clock in, stops at the script's deadline.
func TestLibsWatchdog(t *testing.T) {
	const timeout = 200 * time.Millisecond
	e := NewEngine(Options{Limits: Limits{Timeout: timeout}})
	for _, src := range []string{
		`local s = '[' .. string.rep('[1,"x"],', 20000) .. '[]]' while true do cjson.decode(s) end`,
		`local t = {} for i = 1, 20000 do t[i] = {i} end while true do cmsgpack.pack(t) end`,
	} {
		start := time.Now()
		v := eval(t, e, newMapCaller(), src)
		if v.Kind != resp.Error {
			t.Errorf("EVAL %q = %v; want it stopped", src, v)
		}
		// A watchdog that looked only between library calls would let
		// the loop run for many seconds: each pass is thousands of the
		// VM's instructions in one call.
		if d := time.Since(start); d > 10*timeout {
			t.Errorf("EVAL %q ran %v; want it stopped near its %v", src, d, timeout)
		}
	}
}
