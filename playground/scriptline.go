package playground

import "strings"

// scriptCommands run Lua, or load it: each may take up to the script
// deadline, so the web layer gives them a lower rate limit.
var scriptCommands = map[string]bool{
	"EVAL": true, "EVALSHA": true, "EVAL_RO": true, "EVALSHA_RO": true,
	"FCALL": true, "FCALL_RO": true, "SCRIPT": true, "FUNCTION": true,
}

// Line is what one reading of a typed line tells about how it runs, as
// Exec would read it: its command after redis-cli's repeat count ("3 EVAL
// ..."), in any case, with quotes and escapes read ("\x45VAL" is EVAL).
// The web layer meters lines by it and a sandbox worker schedules them by
// it, both from the same tokenizer and command table as Exec.
type Line struct {
	// Script: the line runs or loads a Lua script. Inside a transaction
	// such a line only queues the script; each queued script is still a
	// script line, and so is the EXEC that runs them (MayRunScript).
	Script bool
	// Long: the line may run until its deadline: it may run scripts, or
	// it repeats a command ("100 SUNION a b"), which the line's deadline
	// stops. Any other line is one command that the sandbox's limits keep
	// short (reply size, work, patterns).
	Long bool
	// Quick: the line surely runs in microseconds in a sandbox of few
	// keys: at most maxQuickLine bytes, one command that the command
	// table declares quick, with no more arguments than it declares (a
	// command of constant cost, or of the cost of its own arguments).
	Quick bool
}

// maxQuickLine is the longest line that can be quick: what a lesson
// types, and not a reply of more than a few values.
const maxQuickLine = 512

// maxQuickArgs bounds the arguments any command table entry may declare
// quick, so that ReadLine reads no further than that.
const maxQuickArgs = 1 + 8

// ReadLine reads line once and says how it runs. A line longer than the
// default MaxLineBytes is refused by Exec before it is read, so it runs
// nothing and is not read here either: the answer costs at most a line's
// worth of work, and for a line too long to be quick, two arguments' worth
// of copying.
func ReadLine(line string) Line {
	if len(line) > defaultMaxLineBytes {
		return Line{}
	}
	t, rest, err := SplitTarget(line)
	switch {
	case err != nil || t.Storage:
		return Line{} // answered without a command
	case t.All:
		// Every node runs it in turn: never quick, and up to five times
		// one line's deadline.
		l := readCommand(rest)
		l.Long, l.Quick = true, false
		return l
	}
	return readCommand(rest)
}

// readCommand is ReadLine for a line without a target.
func readCommand(line string) Line {
	limit := 2 // a repeat count and the command's name
	if len(line) <= maxQuickLine {
		limit = 1 + maxQuickArgs + 1 // and enough to tell there are too many
	}
	args, err := tokenize(line, limit)
	if err != nil || len(args) == 0 {
		return Line{}
	}
	repeat := false
	if len(args) >= 2 {
		if n, isNum := strtol(args[0]); isNum {
			repeat = true
			args = args[1:]
			if n > 1 {
				return Line{Script: scriptCommands[strings.ToUpper(args[0])], Long: true}
			}
		}
	}
	name := strings.ToUpper(args[0])
	var l Line
	l.Script = scriptCommands[name]
	l.Long = l.Script || name == "EXEC"
	if !l.Long && !repeat && len(line) <= maxQuickLine {
		cmd, ok := lookupCommand(name)
		l.Quick = ok && len(args) <= cmd.quick && len(args) < limit
	}
	return l
}

// RunsScript reports whether line, as Exec would read it, runs or loads a
// Lua script (Line.Script).
func RunsScript(line string) bool { return ReadLine(line).Script }

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
	if _, rest, err := SplitTarget(line); err == nil {
		line = rest
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

// RunsLong reports whether line may run until its deadline (Line.Long).
func RunsLong(line string) bool { return ReadLine(line).Long }

// LineKind returns RunsScript(line) and RunsLong(line), from one reading
// of line: callers that meter scripts ask both of every line.
func LineKind(line string) (runsScript, runsLong bool) {
	l := ReadLine(line)
	return l.Script, l.Long
}
