package luaredis

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/locklab/locklab/resp"
)

// functionCommand runs FUNCTION with a subcommand, with Redis 7.0's
// replies. Nothing runs while it does, so STATS has no running script
// and KILL has none to kill.
func (e *Engine) functionCommand(ctx context.Context, argv []string) resp.Value {
	if len(argv) < 2 {
		return resp.Err("ERR wrong number of arguments for 'function' command")
	}
	arity := func(sub string) resp.Value {
		return resp.Err(fmt.Sprintf("ERR wrong number of arguments for 'function|%s' command", sub))
	}
	switch sub := strings.ToUpper(argv[1]); sub {
	case "LOAD":
		if len(argv) < 3 {
			return arity("load")
		}
		replace, i := false, 2
		for ; i < len(argv)-1; i++ {
			if !strings.EqualFold(argv[i], "REPLACE") {
				return resp.Err("ERR Unknown option given: " + argv[i])
			}
			replace = true
		}
		return e.loadLibrary(ctx, argv[i], replace)
	case "LIST":
		return e.listLibraries(argv[2:])
	case "DELETE":
		if len(argv) != 3 {
			return arity("delete")
		}
		lib := e.library(argv[2])
		if lib == nil {
			return resp.Err("ERR Library not found")
		}
		e.unlink(lib)
		return resp.OK()
	case "FLUSH":
		switch {
		case len(argv) > 3:
			return resp.Err(fmt.Sprintf("ERR unknown subcommand or wrong number of arguments for '%.128s'. Try FUNCTION HELP.", argv[1]))
		case len(argv) == 3 && !strings.EqualFold(argv[2], "SYNC") && !strings.EqualFold(argv[2], "ASYNC"):
			return resp.Err("ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
		}
		e.flushLibraries()
		return resp.OK()
	case "STATS":
		if len(argv) != 2 {
			return arity("stats")
		}
		funcs := 0
		for _, lib := range e.libs {
			funcs += len(lib.funcs)
		}
		return resp.Arr(
			resp.Str("running_script"), resp.Null(),
			resp.Str("engines"), resp.Arr(
				resp.Str("LUA"), resp.Arr(
					resp.Str("libraries_count"), resp.Int(int64(len(e.libs))),
					resp.Str("functions_count"), resp.Int(int64(funcs)))))
	case "KILL":
		if len(argv) != 2 {
			return arity("kill")
		}
		return resp.Err("NOTBUSY No scripts in execution right now.")
	case "HELP":
		if len(argv) != 2 {
			return arity("help")
		}
		lines := make([]resp.Value, len(functionHelp))
		for i, l := range functionHelp {
			lines[i] = resp.StatusValue(l)
		}
		return resp.Arr(lines...)
	case "DUMP":
		if len(argv) != 2 {
			return arity("dump")
		}
		return e.dumpLibraries()
	case "RESTORE":
		if len(argv) < 3 {
			return arity("restore")
		}
		return e.restoreLibraries(ctx, argv)
	default:
		return resp.Err(fmt.Sprintf("ERR unknown subcommand '%.128s'. Try FUNCTION HELP.", argv[1]))
	}
}

// listLibraries is FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE]: the
// libraries whose name matches the pattern (a glob, in any case), each
// with its functions. Redis lists them in its hash tables' order, which
// changes with every server start; here they come sorted by name, and so
// do each library's functions.
func (e *Engine) listLibraries(args []string) resp.Value {
	withCode, pattern, hasPattern := false, "", false
	for i := 0; i < len(args); i++ {
		switch {
		case !withCode && strings.EqualFold(args[i], "WITHCODE"):
			withCode = true
		case !hasPattern && strings.EqualFold(args[i], "LIBRARYNAME"):
			if i == len(args)-1 {
				return resp.Err("ERR library name argument was not given")
			}
			i++
			pattern, hasPattern = args[i], true
		default:
			return resp.Err("ERR Unknown argument " + args[i])
		}
	}
	libs := append([]*library(nil), e.libs...)
	sort.Slice(libs, func(i, j int) bool { return libs[i].name < libs[j].name })
	g := globber{nocase: true, steps: maxListMatchSteps}
	out := []resp.Value{}
	for _, lib := range libs {
		if hasPattern && !g.match(pattern, lib.name) {
			if g.over {
				return resp.Err(fmt.Sprintf("ERR the playground matches library names in at most %d steps, and this pattern takes more; use fewer * ? and [ ]", maxListMatchSteps))
			}
			continue
		}
		funcs := append([]libFunction(nil), lib.funcs...)
		sort.Slice(funcs, func(i, j int) bool { return funcs[i].name < funcs[j].name })
		fs := make([]resp.Value, 0, len(funcs))
		for _, f := range funcs {
			desc := resp.Null()
			if f.hasDesc {
				desc = resp.Str(f.desc)
			}
			flags := []resp.Value{}
			for bit, name := range shebangFlags {
				if f.flags&(1<<bit) != 0 {
					flags = append(flags, resp.StatusValue(name))
				}
			}
			fs = append(fs, resp.Arr(resp.Str("name"), resp.Str(f.name), resp.Str("description"), desc, resp.Str("flags"), resp.Arr(flags...)))
		}
		entry := []resp.Value{resp.Str("library_name"), resp.Str(lib.name), resp.Str("engine"), resp.Str("LUA"), resp.Str("functions"), resp.Arr(fs...)}
		if withCode {
			entry = append(entry, resp.Str("library_code"), resp.Str(lib.code))
		}
		out = append(out, resp.Arr(entry...))
	}
	return resp.Arr(out...)
}

// maxListMatchSteps bounds the work of matching FUNCTION LIST's pattern
// against all library names: a pattern of a few wildcards takes a few
// steps per byte of the names, while a long one of many could take the
// product of its length and theirs, billions for a full sandbox.
const maxListMatchSteps = 1_000_000

// functionHelp is what FUNCTION HELP answers in Redis 7.0.15.
var functionHelp = []string{
	"FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"LOAD [REPLACE] <FUNCTION CODE>",
	"    Create a new library with the given library name and code.",
	"DELETE <LIBRARY NAME>",
	"    Delete the given library.",
	"LIST [LIBRARYNAME PATTERN] [WITHCODE]",
	"    Return general information on all the libraries:",
	"    * Library name",
	"    * The engine used to run the Library",
	"    * Library description",
	"    * Functions list",
	"    * Library code (if WITHCODE is given)",
	"    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
	"STATS",
	"    Return information about the current function running:",
	"    * Function name",
	"    * Command used to run the function",
	"    * Duration in MS that the function is running",
	"    If no function is running, return nil",
	"    In addition, returns a list of available engines.",
	"KILL",
	"    Kill the current running function.",
	"FLUSH [ASYNC|SYNC]",
	"    Delete all the libraries.",
	"    When called without the optional mode argument, the behavior is determined by the",
	"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
	"    * ASYNC: Asynchronously flush the libraries.",
	"    * SYNC: Synchronously flush the libraries.",
	"DUMP",
	"    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
	"RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
	"    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
	"    control how to handle existing libraries (default APPEND):",
	"    * FLUSH: delete all existing libraries.",
	"    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
	"    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
	"      libraries with the new libraries (notice that even on this option there is a chance of failure",
	"      in case of functions name collision with another library).",
	"HELP",
	"    Prints this help.",
}
