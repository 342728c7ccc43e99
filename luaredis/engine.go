package luaredis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/locklab/locklab/resp"
)

// A Caller runs the commands a script sends with redis.call and
// redis.pcall. It returns Redis's replies, and error replies with Redis's
// script wording for commands a script may not run ("ERR This Redis command
// is not allowed from script"). readOnly is set for EVAL_RO and EVALSHA_RO.
//
// readOnly is also set for a script whose shebang says flags=no-writes,
// as Redis sets it for both: the Caller refuses write commands with
// "ERR Write commands are not allowed from read-only scripts.".
type Caller interface {
	Call(argv []string, readOnly bool) resp.Value
}

// A RESP3Caller is a Caller that can also run a command as a client that
// chose RESP3 (HELLO 3) would, for a script that called redis.setresp(3):
// its replies keep RESP3's kinds (resp.Map with keys and values in turn,
// resp.Set, resp.Double with the number's text, resp.Bool, and resp.Nil
// for every null), which the script then sees as Redis converts them
// ({map=...}, {set=...}, {double=n}, true or false, nil). After
// redis.setresp(3), a Caller without CallRESP3 is asked with Call, and
// the script sees its RESP2 replies with only that difference: a null is
// nil rather than false.
type RESP3Caller interface {
	CallRESP3(argv []string, readOnly bool) resp.Value
}

// A CommandLookup is a Caller that knows which commands exist, for
// redis.acl_check_cmd. LookupCommand reports whether Redis's lookupCommand
// finds argv: argv[0] is a command, in any case, and if it has
// subcommands (CONFIG, CLIENT, OBJECT, ...) and argv has more than one
// element, argv[1] is one of them. The arity is not checked. Without it,
// redis.acl_check_cmd takes every name for a command.
type CommandLookup interface {
	LookupCommand(argv []string) bool
}

// Engine runs the scripting commands of one sandbox. It keeps the
// sandbox's script cache (for EVALSHA), its function libraries (for
// FCALL) and, while scripts run, a Lua state.
// An Engine is not safe for concurrent use; the sandbox serializes commands.
type Engine struct {
	opts  Options
	cache map[string]*compiled // by SHA1
	order []string             // SHA1s, oldest first, for eviction
	bytes int                  // script bytes in cache, as compiled.size counts them
	// libSet holds the function libraries (see library.go).
	libSet
	vm     *vm // nil until the first script runs, and after Release
	shared *Cache
	now    func() time.Time
	// allocs counts the bytes the process has allocated: when it has
	// grown enough, the watchdog judges what the script holds.
	allocs func() uint64
	// shaMemo holds the SHA1s of the last scripts run, most recent first.
	shaMemo [4]shaMemo
	// rand is math.random's generator; it outlives the Lua state, as
	// Redis's outlives SCRIPT FLUSH.
	rand lrand48
	// stops counts the scripts stopped at their deadline or for their
	// memory (see Stops).
	stops int64
}

// Options configure an Engine. Zero fields take their defaults.
type Options struct {
	Limits Limits
	// MaxScripts and MaxScriptBytes bound the sandbox's script cache, by
	// count (default 100) and by bytes (default 256 KiB): source and
	// estimated compiled size, as ScriptBytes counts them. When full,
	// loading another script forgets the oldest, as Redis 7.4 does for
	// EVAL scripts; a script larger than MaxScriptBytes alone is refused.
	MaxScripts     int
	MaxScriptBytes int
	// Room, if set, returns how many script bytes the cache may hold now,
	// as a budget shared with other engines allows: a script that would
	// take the cache past it is refused, with a message that the
	// playground is full. Forgetting old scripts for MaxScripts and
	// MaxScriptBytes is always allowed.
	Room func() int
	// Shared compiles and keeps scripts for every engine; default a cache
	// of this engine's own.
	Shared *Cache
}

// run is the state of the script being run.
type run struct {
	caller   Caller
	readOnly bool
	resp3    bool // the script called redis.setresp(3)
	watchdog *watchdog
	errLine  int    // where the error was raised, set by the error handler
	errSrc   string // chunk name of that place, as Redis's error shows it
}

// NewEngine returns an engine with opts.
func NewEngine(opts Options) *Engine {
	opts.Limits = opts.Limits.WithDefaults()
	if opts.MaxScripts <= 0 {
		opts.MaxScripts = 100
	}
	if opts.MaxScriptBytes <= 0 {
		opts.MaxScriptBytes = 256 << 10
	}
	if opts.Shared == nil {
		opts.Shared = NewCache(opts.MaxScriptBytes)
	}
	return &Engine{opts: opts, cache: map[string]*compiled{}, shared: opts.Shared, now: time.Now, allocs: newProcessAllocs().read, rand: newLrand48()}
}

// Release drops the Lua state; the next script builds a new one. A
// sandbox calls it when it goes idle, because a Lua state is much larger
// than an idle sandbox. The script cache is kept.
func (e *Engine) Release() {
	if e.vm != nil {
		e.vm.L.Close()
		e.vm = nil
	}
}

// Forget empties the script cache, as SCRIPT FLUSH does, and removes
// the function libraries, as FUNCTION FLUSH does, but keeps the Lua
// state: for a caller that reuses the engine for a new, empty server.
// Scripts cannot keep globals (they are refused), so the state carries
// nothing from one script to the next.
func (e *Engine) Forget() {
	e.cache = map[string]*compiled{}
	e.order, e.bytes = nil, 0
	e.flushLibraries()
	e.rand = newLrand48()
}

// ScriptBytes returns what the cached scripts and the function libraries
// take: their source and an estimate of their compiled form. A sandbox
// counts it with its data.
func (e *Engine) ScriptBytes() int { return e.bytes + e.libBytes }

// Scripts returns the source of every cached script, oldest first, so that
// a snapshot of the sandbox can restore them with Load.
func (e *Engine) Scripts() []string {
	out := make([]string, 0, len(e.order))
	for _, sha := range e.order {
		out = append(out, e.cache[sha].src)
	}
	return out
}

// shaOf returns the SHA1 of a script's source, remembering the last few:
// a caller that runs the same script again and again (the lock lab runs
// one recipe's lines thousands of times) pays for hashing it once.
func (e *Engine) shaOf(src string) string {
	for _, m := range e.shaMemo {
		if m.src == src && m.sha != "" {
			return m.sha
		}
	}
	sha := sha1hex(src)
	copy(e.shaMemo[1:], e.shaMemo[:])
	e.shaMemo[0] = shaMemo{src: src, sha: sha}
	return sha
}

// shaMemo is a script's source and its SHA1.
type shaMemo struct{ src, sha string }

// Load compiles src and adds it to the cache, as SCRIPT LOAD does, and
// returns its SHA1.
func (e *Engine) Load(src string) (string, error) {
	sha := sha1hex(src)
	if _, err := e.lookupOrCompile(sha, src); err != nil {
		return "", err
	}
	return sha, nil
}

// Do runs one scripting command: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO,
// FCALL, FCALL_RO, or SCRIPT or FUNCTION with a subcommand. argv[0] is
// the command name in any case; the caller has checked the arity.
func (e *Engine) Do(ctx context.Context, c Caller, argv []string) resp.Value {
	switch name := strings.ToUpper(argv[0]); name {
	case "EVAL", "EVAL_RO", "EVALSHA", "EVALSHA_RO":
		if len(argv) < 3 {
			return resp.Err(fmt.Sprintf("ERR wrong number of arguments for '%s' command", strings.ToLower(name)))
		}
		keys, args, errv := splitKeys(argv[2], argv[3:])
		if errv != nil {
			return *errv
		}
		readOnly := strings.HasSuffix(name, "_RO")
		var sha string
		var sc *compiled
		if strings.HasPrefix(name, "EVALSHA") {
			sha = strings.ToLower(argv[1])
			sc = e.cache[sha]
			if sc == nil {
				return resp.Err("NOSCRIPT No matching script. Please use EVAL.")
			}
		} else {
			sha = e.shaOf(argv[1])
			var err error
			if sc, err = e.lookupOrCompile(sha, argv[1]); err != nil {
				return compileError(err)
			}
		}
		if readOnly && sc.flags.shebang && !sc.flags.noWrites {
			return resp.Err("ERR Can not execute a script with write flag using *_ro command.")
		}
		return e.run(ctx, c, sha, sc, keys, args, readOnly || sc.flags.noWrites)
	case "FCALL", "FCALL_RO":
		if len(argv) < 3 {
			return resp.Err(fmt.Sprintf("ERR wrong number of arguments for '%s' command", strings.ToLower(name)))
		}
		return e.fcall(ctx, c, argv, name == "FCALL_RO")
	case "SCRIPT":
		return e.scriptCommand(argv)
	case "FUNCTION":
		return e.functionCommand(ctx, argv)
	default:
		return resp.Err(fmt.Sprintf("ERR unknown command '%s'", argv[0]))
	}
}

func (e *Engine) scriptCommand(argv []string) resp.Value {
	if len(argv) < 2 {
		return resp.Err("ERR wrong number of arguments for 'script' command")
	}
	switch sub := strings.ToUpper(argv[1]); sub {
	case "LOAD":
		if len(argv) != 3 {
			return resp.Err("ERR wrong number of arguments for 'script|load' command")
		}
		sha, err := e.Load(argv[2])
		if err != nil {
			return compileError(err)
		}
		return resp.Str(sha)
	case "EXISTS":
		if len(argv) < 3 {
			return resp.Err("ERR wrong number of arguments for 'script|exists' command")
		}
		out := make([]resp.Value, 0, len(argv)-2)
		for _, sha := range argv[2:] {
			_, ok := e.cache[strings.ToLower(sha)]
			out = append(out, resp.Int(boolInt(ok)))
		}
		return resp.Arr(out...)
	case "FLUSH":
		if len(argv) > 3 || len(argv) == 3 && !strings.EqualFold(argv[2], "SYNC") && !strings.EqualFold(argv[2], "ASYNC") {
			return resp.Err("ERR SCRIPT FLUSH only support SYNC|ASYNC option")
		}
		e.cache = map[string]*compiled{}
		e.order, e.bytes = nil, 0
		e.Release()
		return resp.OK()
	case "KILL":
		// Commands run one at a time, so no script is running now.
		return resp.Err("NOTBUSY No scripts in execution right now.")
	default:
		return resp.Err(fmt.Sprintf("ERR unknown subcommand '%s'. Try SCRIPT HELP.", argv[1]))
	}
}

// splitKeys reads EVAL's numkeys and splits the rest into KEYS and ARGV,
// with Redis's errors.
func splitKeys(numkeys string, rest []string) (keys, args []string, errv *resp.Value) {
	n, ok := parseInt(numkeys)
	switch {
	case !ok:
		v := resp.Err("ERR value is not an integer or out of range")
		return nil, nil, &v
	case n > int64(len(rest)):
		v := resp.Err("ERR Number of keys can't be greater than number of args")
		return nil, nil, &v
	case n < 0:
		v := resp.Err("ERR Number of keys can't be negative")
		return nil, nil, &v
	}
	return rest[:n], rest[n:], nil
}

func (e *Engine) lookupOrCompile(sha, src string) (*compiled, error) {
	if sc := e.cache[sha]; sc != nil {
		return sc, nil
	}
	// Cheap refusals first, before compiling: the source alone is over
	// the limits.
	if len(src) > e.opts.MaxScriptBytes {
		return nil, e.overLimit(len(src))
	}
	if e.opts.Room != nil && len(src) > e.ScriptBytes() && len(src) > e.opts.Room() {
		return nil, errFull
	}
	sc, err := e.shared.compile(sha, src, e.opts.Limits)
	if err != nil {
		return nil, err
	}
	if sc.size > e.opts.MaxScriptBytes {
		return nil, e.overLimit(sc.size)
	}
	// Function libraries are never forgotten: a script must fit beside
	// them.
	if len(e.libs) >= e.opts.MaxScripts || e.libBytes+sc.size > e.opts.MaxScriptBytes {
		return nil, &tooLargeError{fmt.Sprintf("ERR the playground keeps at most %d KiB and %d function libraries and scripts in a sandbox, and its libraries leave no room for this script; delete a library (FUNCTION DELETE)", e.opts.MaxScriptBytes>>10, e.opts.MaxScripts)}
	}
	// What the cache holds once the oldest scripts are forgotten to make
	// room under MaxScripts and MaxScriptBytes.
	drop, after := 0, e.bytes
	for drop < len(e.order) && (len(e.order)-drop+len(e.libs) >= e.opts.MaxScripts || after+sc.size+e.libBytes > e.opts.MaxScriptBytes) {
		after -= e.cache[e.order[drop]].size
		drop++
	}
	after += sc.size
	if e.opts.Room != nil && after+e.libBytes > e.ScriptBytes() && after+e.libBytes > e.opts.Room() {
		return nil, errFull
	}
	for _, old := range e.order[:drop] {
		delete(e.cache, old)
	}
	e.order = e.order[drop:]
	e.cache[sha] = sc
	e.order = append(e.order, sha)
	e.bytes = after
	return sc, nil
}

// errFull refuses a script when Options.Room has no room for it.
var errFull = &tooLargeError{"ERR the playground is full right now and cannot take more scripts in your sandbox; try again in a few minutes, or make room in it (SCRIPT FLUSH, DEL, FLUSHDB)"}

func (e *Engine) overLimit(size int) error {
	return &tooLargeError{fmt.Sprintf("ERR the playground keeps at most %d KiB of scripts in a sandbox, source and compiled code together, and this script takes %d KiB; make it smaller", e.opts.MaxScriptBytes>>10, (size+1023)>>10)}
}

// compileError is the reply for a script that could not be added: the
// playground's refusal as it is, a compile error as Redis words it.
func compileError(err error) resp.Value {
	var tl *tooLargeError
	if errors.As(err, &tl) {
		return resp.Err(tl.msg)
	}
	var se *shebangError
	if errors.As(err, &se) {
		return resp.Err(se.msg)
	}
	return resp.Err("ERR Error compiling script (new function): " + err.Error())
}

// run calls the compiled script with KEYS and ARGV under the watchdog and
// converts what it returns, or the error it raises, into a reply.
func (e *Engine) run(ctx context.Context, c Caller, sha string, sc *compiled, keys, args []string, readOnly bool) resp.Value {
	// A line whose time is up (the scripts of a transaction after one
	// that spun) gets its answer without starting the VM.
	if e.late(ctx) {
		return e.stopped(errTimeout, sha)
	}
	v, r, end := e.begin(ctx, c, sc.count.setTable, readOnly)
	defer end()
	L := v.L
	v.globals.RawSetString("KEYS", stringTable(L, keys))
	v.globals.RawSetString("ARGV", stringTable(L, args))
	fn := L.NewFunctionFromProto(sc.proto)
	fn.Env = v.env
	L.Push(fn)
	return e.reply(L.PCall(0, 1, v.handler), sha, v, r)
}

// late reports whether the deadline of ctx has passed already.
func (e *Engine) late(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ok && !e.now().Before(d)
}

// begin readies the Lua state for a run of code under the watchdog, and
// returns it with the run and the function that ends the run. setTable
// says the code writes tables at computed keys, which the watchdog must
// then look at.
func (e *Engine) begin(ctx context.Context, c Caller, setTable, readOnly bool) (*vm, *run, func()) {
	if e.vm == nil {
		e.vm = newVM(e)
	}
	v := e.vm
	L := v.L
	// Only a script that writes tables at computed keys needs the
	// watchdog to look at its instructions; loadstring turns it on for
	// code it compiles that does.
	var pad *padGuard
	if setTable {
		pad = v.pad
	}
	r := &run{caller: c, readOnly: readOnly, watchdog: newWatchdog(ctx, e.now(), e.opts.Limits, memory{allocs: e.allocs, held: v.held}, pad)}
	v.run = r
	L.SetContext(r.watchdog.context())
	return v, r, func() {
		v.run = nil
		v.pcallBases = v.pcallBases[:0]
		L.RemoveContext()
		// Nothing of the script outlives it: not its stack, whose
		// registers above the top keep what returned calls left there,
		// nor KEYS and ARGV.
		L.SetTop(0)
		v.acct.clearStack()
		v.acct.release()
		v.globals.RawSetString("KEYS", lua.LNil)
		v.globals.RawSetString("ARGV", lua.LNil)
	}
}

// reply is the reply for a run whose protected call returned err: the
// watchdog's refusal if it stopped the code, Redis's error reply for an
// error the code raised (named as the script or function name says),
// else the value the code returned, converted.
func (e *Engine) reply(err error, name string, v *vm, r *run) resp.Value {
	if werr := r.watchdog.err; werr != nil {
		return e.stopped(werr, name)
	}
	if err != nil {
		var obj lua.LValue = lua.LString(err.Error())
		var apiErr *lua.ApiError
		if errors.As(err, &apiErr) {
			obj = apiErr.Object
		}
		return scriptError(obj, name, r)
	}
	return fromLua(v.L.Get(-1), r.resp3, v.order)
}

// Stops returns how many scripts (and function libraries' top levels)
// this engine has stopped at their deadline or for their memory: a caller
// that meters scripts can tell a line that ran into a limit by it.
func (e *Engine) Stops() int64 { return e.stops }

// stopped is the reply for a script the watchdog stopped.
func (e *Engine) stopped(err error, sha string) resp.Value {
	if errors.Is(err, errTimeout) || errors.Is(err, errMemory) {
		e.stops++
	}
	switch {
	case errors.Is(err, errTimeout):
		e.shared.timeouts.Add(1)
		return resp.Err(fmt.Sprintf("ERR the playground stopped the script after %v: scripts must finish quickly, as Redis runs nothing else meanwhile (script %s)", e.opts.Limits.Timeout, sha))
	case errors.Is(err, errMemory):
		return resp.Err(fmt.Sprintf("ERR the playground stopped the script: it allocated more than %d MiB script: %s", e.opts.Limits.MaxAllocBytes>>20, sha))
	}
	return resp.Err(fmt.Sprintf("ERR the script was cancelled: %v script: %s", err, sha))
}

// onError is the message handler of the script's pcall. Like Redis's
// __redis__err__handler it notes where the error was raised: the innermost
// Lua function (Go functions, such as error or redis.call, are skipped).
func (v *vm) onError(L *lua.LState) int {
	obj := lua51Error(v.namedTypeError(L, L.Get(1)))
	if r := v.run; r != nil {
		for level := 1; level < 64; level++ {
			dbg, ok := L.GetStack(level)
			if !ok {
				break
			}
			if _, err := L.GetInfo("Sl", dbg, lua.LNil); err != nil {
				break
			}
			if dbg.What != "G" && dbg.CurrentLine > 0 {
				r.errLine, r.errSrc = dbg.CurrentLine, "@"+dbg.Source
				if raw, ok := v.chunkNames[dbg.Source]; ok {
					r.errSrc = raw
				}
				break
			}
		}
	}
	L.Push(obj)
	return 1
}

// namedTypeError rewords obj, an error an error handler of L was given,
// with typeError, before its frame unwinds.
func (v *vm) namedTypeError(L *lua.LState, obj lua.LValue) lua.LValue {
	if s, ok := obj.(lua.LString); ok {
		return lua.LString(typeError(L, string(s)))
	}
	return obj
}

// scriptError builds Redis 7's reply for a script that raised obj: an
// error table keeps its err text, anything else becomes "ERR <text>", and
// both end with " script: <sha>, on @user_script:<line>.".
func scriptError(obj lua.LValue, sha string, r *run) resp.Value {
	var msg string
	if t, ok := obj.(*lua.LTable); ok {
		switch e := t.RawGetString("err").(type) {
		case lua.LString:
			msg = string(e)
		case lua.LNumber:
			msg = formatNumber(float64(e))
		default:
			msg = "ERR unknown error"
		}
	} else {
		text := obj.String()
		if n, ok := obj.(lua.LNumber); ok {
			text = formatNumber(float64(n))
		}
		msg = "ERR " + text
	}
	msg = strings.TrimRight(msg, "\r\n")
	if r.errLine > 0 {
		msg += fmt.Sprintf(" script: %s, on %s:%d.", sha, r.errSrc, r.errLine)
	}
	return resp.Err(msg)
}

func stringTable(L *lua.LState, ss []string) *lua.LTable {
	t := L.CreateTable(len(ss), 0)
	for i, s := range ss {
		t.RawSetInt(i+1, lua.LString(s))
	}
	return t
}

// parseInt parses a number as Redis's string2ll does: an optional minus,
// no plus sign, spaces or leading zeros.
func parseInt(s string) (int64, bool) {
	if s == "" || s[0] == '+' || len(s) > 1 && s[0] == '0' || strings.HasPrefix(s, "-0") {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
