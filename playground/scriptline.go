package playground

import "strings"

// scriptCommands run Lua, or load it: each may take up to the script
// deadline, so the web layer gives them a lower rate limit.
var scriptCommands = map[string]bool{
	"EVAL": true, "EVALSHA": true, "EVAL_RO": true, "EVALSHA_RO": true,
	"FCALL": true, "FCALL_RO": true, "SCRIPT": true, "FUNCTION": true,
}

// RunsScript reports whether line, as the playground would read it, runs
// or loads a Lua script. It reads the command name the way Exec does (with
// quotes and escapes), so "\x45VAL" counts as EVAL.
func RunsScript(line string) bool {
	args, err := Tokenize(line)
	if err != nil || len(args) == 0 {
		return false
	}
	return scriptCommands[strings.ToUpper(args[0])]
}
