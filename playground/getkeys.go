package playground

import (
	"strings"

	"github.com/locklab/locklab/resp"
)

// commandCount is what COMMAND COUNT answers: Redis 7.0.15's commands,
// which the generated command table holds, subcommands apart.
const commandCount = 240

// commandGetKeys is COMMAND GETKEYS command [arg ...], as Redis 7.0's
// getKeysSubcommandImpl: the keys the command line would touch, found
// from the command table's key positions, or for the commands whose keys
// move with their arguments, as Redis's getkeys functions find them. Of
// those, the ones of commands the playground refuses (streams, GEO,
// MIGRATE) are refused too.
func commandGetKeys(argv []string) (resp.Value, *RefusedError) {
	line := argv[2:]
	name := strings.ToUpper(line[0])
	cmd, ok := lookupCommand(name)
	if ok && len(line) > 1 {
		if _, container := lookupCommand(name + "|HELP"); container {
			cmd, ok = lookupCommand(name + "|" + strings.ToUpper(line[1]))
		}
	}
	switch {
	case !ok:
		return resp.Err("ERR Invalid command specified"), nil
	case cmd.first <= 0 && cmd.flags&flagMovableKeys == 0:
		return resp.Err("ERR The command has no key arguments"), nil
	case !cmd.arityOK(len(line)):
		return resp.Err("ERR Invalid number of arguments specified for command"), nil
	}
	var keys []string
	if cmd.flags&flagMovableKeys != 0 {
		var known bool
		keys, known = movedKeys(name, line)
		if !known {
			return resp.Value{}, notAllowed("ERR the playground does not support COMMAND GETKEYS for %s: %s", name, refusal(name, cmd))
		}
	} else {
		keys = cmd.keys(line)
	}
	if len(keys) == 0 {
		if isScriptCall(name) { // Redis's CMD_NO_MANDATORY_KEYS
			return resp.Arr(), nil
		}
		return resp.Err("ERR Invalid arguments specified for command"), nil
	}
	out := make([]resp.Value, len(keys))
	for i, k := range keys {
		out[i] = resp.Str(k)
	}
	return resp.Arr(out...), nil
}

func isScriptCall(name string) bool {
	switch name {
	case "EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO", "FCALL", "FCALL_RO":
		return true
	}
	return false
}

// movedKeys finds the keys of a command whose keys move with its
// arguments, as Redis 7.0's getkeys function for it does; known is false
// for the ones the playground leaves out. A count out of range gives no
// keys.
func movedKeys(name string, line []string) (keys []string, known bool) {
	counted := func(countAt int) []string {
		n, ok := parseInt(line[countAt])
		if !ok || n < 1 || n > int64(len(line)-countAt-1) {
			return nil
		}
		return line[countAt+1 : countAt+1+int(n)]
	}
	switch name {
	case "ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE":
		if k := counted(2); k != nil {
			return append([]string{line[1]}, k...), true
		}
		return nil, true
	case "ZUNION", "ZINTER", "ZDIFF", "ZINTERCARD", "SINTERCARD", "LMPOP", "ZMPOP":
		return counted(1), true
	case "BLMPOP", "BZMPOP":
		return counted(2), true
	case "EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO", "FCALL", "FCALL_RO":
		// evalGetKeys: numkeys 0, or more than there are, is no keys.
		n, ok := parseInt(line[2])
		if !ok || n <= 0 || n > int64(len(line)-3) {
			return nil, true
		}
		return line[3 : 3+n], true
	case "SORT", "SORT_RO":
		// sortGetKeys: the key, and the last STORE's destination; LIMIT
		// takes two arguments, BY and GET one.
		keys = []string{line[1]}
		store := -1
		for i := 2; i < len(line); i++ {
			switch strings.ToLower(line[i]) {
			case "limit":
				i += 2
			case "get", "by":
				i++
			case "store":
				if i+1 < len(line) {
					store = i + 1
				}
			}
		}
		if store > 0 {
			keys = append(keys, line[store])
		}
		return keys, true
	}
	return nil, false
}

// commandHelpLines is what COMMAND HELP answers in Redis 7.0.15.
var commandHelpLines = []string{
	"COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"(no subcommand)",
	"    Return details about all Redis commands.",
	"COUNT",
	"    Return the total number of commands in this Redis server.",
	"LIST",
	"    Return a list of all commands in this Redis server.",
	"INFO [<command-name> ...]",
	"    Return details about multiple Redis commands.",
	"    If no command names are given, documentation details for all",
	"    commands are returned.",
	"DOCS [<command-name> ...]",
	"    Return documentation details about multiple Redis commands.",
	"    If no command names are given, documentation details for all",
	"    commands are returned.",
	"GETKEYS <full-command>",
	"    Return the keys from a full Redis command.",
	"GETKEYSANDFLAGS <full-command>",
	"    Return the keys and the access flags from a full Redis command.",
	"HELP",
	"    Prints this help.",
}
