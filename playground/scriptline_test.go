package playground

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/luaredis"
)

func TestRunsScript(t *testing.T) {
	for _, tt := range []struct {
		line         string
		want, mayRun bool
	}{
		{`EVAL "return 1" 0`, true, true},
		{`  evalsha abc 0`, true, true},
		{`"\x45VAL" "return 1" 0`, true, true},
		{`'eval' 'return 1' 0`, true, true},
		{`SCRIPT LOAD "return 1"`, true, true},
		{`fcall f 0`, true, true},
		{`FUNCTION LIST`, true, true},
		{`1 EVAL "while true do end" 0`, true, true},
		{`100 eVaL "while true do end" 0`, true, true},
		{`+3 EVALSHA abc 0`, true, true},
		{`"3" EVAL "return 1" 0`, true, true},
		{`EXEC`, false, true},
		{`5 exec`, false, true},
		{`3 SET k v`, false, false},
		{`EVAL`, true, true},
		{`3`, false, false},
		{`SET k v`, false, false},
		{`GET EVAL`, false, false},
		{`MULTI`, false, false},
		{`"EVAL`, false, false}, // unbalanced quotes: refused by Exec anyway
		{``, false, false},
		// Exec refuses a line this long before reading it.
		{`EVAL "` + strings.Repeat("x", defaultMaxLineBytes) + `" 0`, false, false},
	} {
		if got := RunsScript(tt.line); got != tt.want {
			t.Errorf("RunsScript(%.40q) = %v; want %v", tt.line, got, tt.want)
		}
		if got := MayRunScript(tt.line); got != tt.mayRun {
			t.Errorf("MayRunScript(%.40q) = %v; want %v", tt.line, got, tt.mayRun)
		}
		if got, _ := LineKind(tt.line); got != tt.want {
			t.Errorf("LineKind(%.40q) runs a script: %v; want %v", tt.line, got, tt.want)
		}
	}
}

// TestResultScriptTime checks that Result.ScriptTime adds up every script
// a line runs: none for plain commands, a little for a quick script, and
// for a repeat count or a transaction of spinning scripts the whole line's
// deadline, which they share.
func TestResultScriptTime(t *testing.T) {
	// Long enough that a quick script stays well under it on a busy machine.
	const timeout = 200 * time.Millisecond
	s := newTestSandbox(t, newFakeClock(), Limits{Script: luaredis.Limits{Timeout: timeout}})
	ctx := context.Background()
	run := func(line string) Result {
		t.Helper()
		res, _ := s.Exec(ctx, ClientA, line)
		return res
	}
	if got := run("SET k v").ScriptTime; got != 0 {
		t.Errorf("SET: ScriptTime = %v; want 0", got)
	}
	if got := run(`EVAL "return 1" 0`).ScriptTime; got <= 0 || got >= timeout {
		t.Errorf("a quick EVAL: ScriptTime = %v; want more than 0 and less than %v", got, timeout)
	}
	res := run(`3 EVAL "while true do end" 0`)
	if got := res.ScriptTime; got < timeout || got > 4*timeout {
		t.Errorf("3 spinning EVALs: ScriptTime = %v; want the line's deadline, %v, and not three of them", got, timeout)
	}
	// One error, and a word that the other repeats did not run.
	if lines := strings.Split(res.Output, "\n"); len(lines) != 2 || !strings.Contains(lines[0], "stopped the script") || !strings.Contains(lines[1], "did not run the other 2") {
		t.Errorf("3 spinning EVALs printed %q; want the deadline's error once and that the other 2 did not run", res.Output)
	}
	if got := run(`3 EVAL "return 1" 0`).Output; got != "(integer) 1\n(integer) 1\n(integer) 1" {
		t.Errorf("3 quick EVALs printed %q; want three replies", got)
	}
	for _, line := range []string{"MULTI", `EVAL "while true do end" 0`, `EVAL "while true do end" 0`} {
		if res := run(line); res.ScriptTime != 0 {
			t.Errorf("%s while queueing: ScriptTime = %v; want 0 (nothing ran yet)", line, res.ScriptTime)
		}
	}
	if got := run("EXEC").ScriptTime; got < timeout || got > 4*timeout {
		t.Errorf("EXEC of two spinning EVALs: ScriptTime = %v; want about %v", got, timeout)
	}
	if got := run("PING").ScriptTime; got != 0 {
		t.Errorf("PING after scripts: ScriptTime = %v; want 0 (each line counts its own)", got)
	}
}

func TestRunsLong(t *testing.T) {
	for _, tt := range []struct {
		line string
		want bool
	}{
		{`EVAL "return 1" 0`, true},
		{`EXEC`, true},
		{`100 SUNION a b`, true},
		{`2 GET k`, true},
		{`1 GET k`, false},
		{`1 EVAL "return 1" 0`, true},
		{`SUNION a b`, false},
		{`KEYS *`, false},
		{`GET 100`, false},
		{`"EVAL`, false},
		{``, false},
		{`2 GET "` + strings.Repeat("x", defaultMaxLineBytes) + `"`, false}, // refused unread
	} {
		if got := RunsLong(tt.line); got != tt.want {
			t.Errorf("RunsLong(%.30q) = %v; want %v", tt.line, got, tt.want)
		}
	}
}
