package playground

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// loadLine is a FUNCTION LOAD line of library lib, registering one
// function fn that answers what the Lua expression ret gives.
func loadLine(lib, fn, ret string) string {
	return fmt.Sprintf(`FUNCTION LOAD "#!lua name=%s\nredis.register_function('%s', function(keys, args) return %s end)"`, lib, fn, ret)
}

// TestFunctionsFollowAcrossReplicas checks that function libraries are
// in the copy another replica restores, and so is their deletion.
func TestFunctionsFollowAcrossReplicas(t *testing.T) {
	m1, m2, _, _ := newReplicas(t, Options{})
	mustExec(t, m1, "ada", ClientA, loadLine("locks", "owner", "redis.call('GET', keys[1])"))
	mustExec(t, m1, "ada", ClientA, "SET lock:1 tok")
	wantOutput(t, m2, "replica 2", "ada", ClientB, "FCALL owner 1 lock:1", `"tok"`)
	mustExec(t, m2, "ada", ClientA, "FUNCTION DELETE locks")
	wantOutput(t, m1, "replica 1", "ada", ClientA, "FCALL owner 1 lock:1", "(error) ERR Function not found")
}

// TestFunctionsResetAndFlushAll checks that FLUSHALL keeps the libraries,
// as in Redis 7, and that a reset of the sandbox removes them.
func TestFunctionsResetAndFlushAll(t *testing.T) {
	m, _ := newTestManager(t, Options{})
	mustExec(t, m, "ada", ClientA, loadLine("lib", "one", "1"))
	mustExec(t, m, "ada", ClientA, "FLUSHALL")
	if res := mustExec(t, m, "ada", ClientB, "FCALL one 0"); res.Output != "(integer) 1" {
		t.Errorf("FCALL after FLUSHALL = %q; want (integer) 1", res.Output)
	}
	if err := m.Reset("ada"); err != nil {
		t.Fatal(err)
	}
	if res := mustExec(t, m, "ada", ClientA, "FCALL one 0"); res.Output != "(error) ERR Function not found" {
		t.Errorf("FCALL after Reset = %q; want the function gone", res.Output)
	}
}

// TestFunctionsInSnapshotAndChanges checks that a library is in the
// changes a worker reports, in a Mirror's snapshot and in a sandbox
// restored from it, and that the changes report it only when the
// libraries changed.
func TestFunctionsInSnapshotAndChanges(t *testing.T) {
	clock := newFakeClock()
	s := newTestSandbox(t, clock, Limits{})
	var m Mirror
	exec := func(line, want string) {
		t.Helper()
		res, err := s.Exec(context.Background(), ClientA, line)
		if err != nil || res.Output != want {
			t.Fatalf("Exec(%q) = %q, %v; want %q", line, res.Output, err, want)
		}
		c, err := s.TakeChanges()
		if err != nil {
			t.Fatal(err)
		}
		m.Apply(c)
	}
	exec(loadLine("lib", "hello", "'hi ' .. args[1]"), `"lib"`)
	exec("FCALL hello 0 ada", `"hi ada"`)
	c, _ := s.TakeChanges()
	if c.Changed() {
		t.Errorf("changes after nothing = %+v; want none", c)
	}
	snap := m.Snapshot(clock.Now())
	if len(snap.Libraries) != 1 || !strings.Contains(snap.Libraries[0], "name=lib") {
		t.Fatalf("mirror's Libraries = %q; want lib's code", snap.Libraries)
	}
	own, err := s.Snapshot()
	if err != nil || !reflect.DeepEqual(own.Libraries, snap.Libraries) {
		t.Errorf("sandbox's Libraries = %q, %v; want the mirror's %q", own.Libraries, err, snap.Libraries)
	}
	r, err := RestoreSandbox(snap, SandboxOptions{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if res, _ := r.Exec(context.Background(), ClientB, "FCALL hello 0 bob"); res.Output != `"hi bob"` {
		t.Errorf("FCALL in the restored sandbox = %q; want \"hi bob\"", res.Output)
	}
	exec("FUNCTION FLUSH", "OK")
	if snap := m.Snapshot(clock.Now()); len(snap.Libraries) != 0 {
		t.Errorf("mirror's Libraries after FUNCTION FLUSH = %q; want none", snap.Libraries)
	}
}

// TestFunctionsCountInBudget checks that libraries count with the
// scripts: in the size a sandbox reports, within ScriptCacheBytes, and
// before cached scripts, which are forgotten to make room for them and
// never the other way round.
func TestFunctionsCountInBudget(t *testing.T) {
	cost := scriptCost(t)
	limits := Limits{ScriptCacheBytes: 4 * cost}
	s, err := NewSandbox(SandboxOptions{Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	exec := func(line string) (string, int) {
		t.Helper()
		res, size, err := s.ExecWithin(context.Background(), ClientA, line, 1<<20)
		if err != nil {
			t.Fatalf("Exec(%q): %v", line, err)
		}
		return res.Output, size
	}
	for i := range 3 {
		exec("SCRIPT LOAD " + releaseScript(i))
	}
	// A library padded to about two scripts' cost.
	pad := strings.Repeat("-", cost)
	big := fmt.Sprintf(`FUNCTION LOAD "#!lua name=big\n--%s\nredis.register_function('b', function() return 1 end)"`, pad)
	if out, size := exec(big); out != `"big"` || size > limits.ScriptCacheBytes {
		t.Fatalf("FUNCTION LOAD big = %q, size %d; want it loaded within %d", out, size, limits.ScriptCacheBytes)
	}
	res, _ := s.Exec(context.Background(), ClientA, "SCRIPT EXISTS "+sha1Of(t, s, releaseScript(0))+" "+sha1Of(t, s, releaseScript(2)))
	if want := "1) (integer) 0\n2) (integer) 1"; res.Output != want {
		t.Errorf("SCRIPT EXISTS oldest, newest after the library = %q; want %q (the oldest forgotten)", res.Output, want)
	}
	// Scripts come and go beside it; it stays.
	for i := 3; i < 10; i++ {
		exec("SCRIPT LOAD " + releaseScript(i))
	}
	if out, _ := exec("FCALL b 0"); out != "(integer) 1" {
		t.Errorf("FCALL b after 7 more scripts = %q; want the library kept", out)
	}
	// A second one does not fit beside it.
	big2 := strings.Replace(strings.Replace(big, "name=big", "name=big2", 1), "'b'", "'b2'", 1)
	if out, _ := exec(big2); !strings.HasPrefix(out, "(error) ERR the playground keeps at most") || !strings.Contains(out, "FUNCTION DELETE") {
		t.Errorf("FUNCTION LOAD big2 = %q; want refused for the sandbox's limit", out)
	}
	_, before := exec("FUNCTION DELETE big")
	if out, after := exec(big2); out != `"big2"` || after <= before {
		t.Errorf("FUNCTION LOAD big2 after DELETE = %q, size %d; want it loaded, counted above %d", out, after, before)
	}
	_, size := exec("FUNCTION FLUSH")
	if _, scripts := exec("SCRIPT FLUSH"); scripts != 0 || size == 0 {
		t.Errorf("size after FUNCTION FLUSH, SCRIPT FLUSH = %d, %d; want the scripts', then 0", size, scripts)
	}
}

// TestFunctionsRefusedWhenFull checks that a Manager whose budget is
// full refuses a library, as it refuses a script.
func TestFunctionsRefusedWhenFull(t *testing.T) {
	cost := scriptCost(t)
	m, _ := newTestManager(t, Options{Limits: budgetLimits, MaxDataBytes: 2*2*4093 + cost/2})
	for _, learner := range []string{"ada", "bob"} {
		mustExec(t, m, learner, ClientA, fillLine("k1"))
		mustExec(t, m, learner, ClientA, fillLine("k2"))
	}
	res := mustExec(t, m, "cyd", ClientA, fmt.Sprintf(`FUNCTION LOAD "#!lua name=big\n--%s\nredis.register_function('b', function() return 1 end)"`, strings.Repeat("-", cost)))
	if !strings.HasPrefix(res.Output, "(error) ERR the playground is full right now and cannot take more function libraries") {
		t.Errorf("FUNCTION LOAD in a full playground = %q; want refused as full", res.Output)
	}
	if data, _ := m.DataBytes(); data > m.opts.MaxDataBytes {
		t.Errorf("DataBytes() = %d; want within %d", data, m.opts.MaxDataBytes)
	}
}

// TestFunctionsUnderTheScriptLimits checks that a library's top level
// and its functions run under the limits of a script: the deadline, the
// memory cap, and the line's deadline inside a transaction.
func TestFunctionsUnderTheScriptLimits(t *testing.T) {
	limits := Limits{}
	limits.Script.Timeout = 100 * time.Millisecond
	s, err := NewSandbox(SandboxOptions{Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tt := range []struct{ line, want string }{
		{`FUNCTION LOAD "#!lua name=spin\nwhile true do end"`, "(error) ERR the playground stopped the script after 100ms"},
		{`FUNCTION LOAD "#!lua name=grow\nlocal t = {} for i = 1, 1e9 do t[i] = {i} end"`, "(error) ERR the playground stopped the script"},
		{loadLine("spinner", "spin", "(function() while true do end end)()"), `"spinner"`},
		{"FCALL spin 0", "(error) ERR the playground stopped the script after 100ms"},
		{loadLine("eater", "eat", "(function() local t = {} for i = 1, 1e9 do t[i] = {i} end end)()"), `"eater"`},
		{"FCALL eat 0", "(error) ERR the playground stopped the script"},
		{loadLine("wide", "wide", "string.rep('x', 1e9)"), `"wide"`},
		{"FCALL wide 0", "(error) ERR user_function:2: resulting string too large: the playground allows"},
		{"FUNCTION LIST LIBRARYNAME sp*", "1) 1) \"library_name\"\n   2) \"spinner\""},
	} {
		res, _ := s.Exec(context.Background(), ClientA, tt.line)
		if !strings.HasPrefix(res.Output, tt.want) {
			t.Errorf("Exec(%.40q) = %.200q; want it to begin %q", tt.line, res.Output, tt.want)
		}
	}
	for _, line := range []string{"MULTI", "FCALL spin 0", "FCALL spin 0", "SET after 1"} {
		s.Exec(context.Background(), ClientA, line)
	}
	res, _ := s.Exec(context.Background(), ClientA, "EXEC")
	if lines := strings.Split(res.Output, "\n"); len(lines) != 3 || !strings.Contains(lines[0], "stopped the script") ||
		!strings.Contains(lines[1], "stopped the script") || !strings.Contains(lines[2], "did not run this command") {
		t.Errorf("EXEC of two spinning FCALLs and a SET = %q; want both stopped and the SET not run", res.Output)
	}
}

// TestHelpFunctionExampleRuns types the example of functions that help
// prints, so that it stays one a learner can copy.
func TestHelpFunctionExampleRuns(t *testing.T) {
	start := strings.Index(helpText, "FUNCTION LOAD \"")
	mid := strings.Index(helpText, "\" then ")
	end := strings.Index(helpText, ". They count")
	if start < 0 || mid < start || end < mid {
		t.Fatal("help has no FUNCTION LOAD ... then FCALL ... example")
	}
	s := newTestSandbox(t, newFakeClock(), Limits{})
	for _, tt := range []struct{ line, want string }{
		{helpText[start : mid+1], `"mylib"`},
		{helpText[mid+len("\" then ") : end], `"k"`},
	} {
		if res, err := s.Exec(context.Background(), ClientA, tt.line); err != nil || res.Output != tt.want {
			t.Errorf("Exec(%q) = %q, %v; want %q", tt.line, res.Output, err, tt.want)
		}
	}
}
