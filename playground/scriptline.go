package playground

import "strings"

// scriptCommands run Lua, or load it: each may take up to the script
// deadline, so the web layer gives them a lower rate limit.
var scriptCommands = map[string]bool{
	"EVAL": true, "EVALSHA": true, "EVAL_RO": true, "EVALSHA_RO": true,
	"FCALL": true, "FCALL_RO": true, "SCRIPT": true, "FUNCTION": true,
}

// RunsScript reports whether line, as Exec would read it, runs or loads a
// Lua script: its command, after redis-cli's repeat count ("3 EVAL ..."),
// in any case and with quotes and escapes read ("\x45VAL" is EVAL). Inside
// a transaction such a line only queues the script; each queued script is
// still a script line, and so is the EXEC that runs them (MayRunScript).
//
// A line longer than the default MaxLineBytes is refused by Exec before it
// is read, so it runs nothing and is not read here either: the answer costs
// at most a line's worth of work.
func RunsScript(line string) bool {
	name, ok := commandName(line)
	return ok && scriptCommands[name]
}

// MayRunScript reports whether line may run scripts when Exec runs it:
// RunsScript, or EXEC, which runs whatever scripts its transaction queued.
// Callers that meter script time must admit these lines; what a line
// really used is in Result.ScriptTime.
func MayRunScript(line string) bool {
	name, ok := commandName(line)
	return ok && (scriptCommands[name] || name == "EXEC")
}

// commandName returns the upper-cased command of line as Exec reads it,
// after a repeat count; ok is false for a line Exec would not run.
func commandName(line string) (string, bool) {
	if len(line) > defaultMaxLineBytes {
		return "", false
	}
	args, err := tokenize(line, 2)
	if err != nil || len(args) == 0 {
		return "", false
	}
	if len(args) == 2 {
		if _, isNum := strtol(args[0]); isNum {
			args = args[1:]
		}
	}
	return strings.ToUpper(args[0]), true
}

// RunsLong reports whether line may run until its deadline: it may run
// scripts (MayRunScript), or it repeats a command ("100 SUNION a b"),
// which the line's deadline stops. Any other line is one command that the
// sandbox's limits keep short (reply size, work, patterns).
func RunsLong(line string) bool {
	_, long := LineKind(line)
	return long
}

// LineKind returns RunsScript(line) and RunsLong(line), from one reading
// of line: callers that meter scripts ask both of every line.
func LineKind(line string) (runsScript, runsLong bool) {
	if len(line) > defaultMaxLineBytes {
		return false, false
	}
	args, err := tokenize(line, 2)
	if err != nil || len(args) == 0 {
		return false, false
	}
	repeats := false
	if len(args) == 2 {
		if n, isNum := strtol(args[0]); isNum {
			repeats = n > 1
			args = args[1:]
		}
	}
	name := strings.ToUpper(args[0])
	runsScript = scriptCommands[name]
	return runsScript, repeats || runsScript || name == "EXEC"
}
