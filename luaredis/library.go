package luaredis

import (
	"context"
	"errors"
	"fmt"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/locklab/locklab/resp"
)

// Redis 7 functions: FUNCTION LOAD adds a library, whose first line says
// its engine and name ("#!lua name=mylib") and whose code registers
// functions with redis.register_function; FCALL calls one of them by
// name, with its keys and arguments as two tables. A library stays until
// it is deleted or flushed: unlike an EVAL script it is never forgotten
// to make room, so libraries and cached scripts share the engine's
// budget (MaxScripts, MaxScriptBytes, Room) with the libraries first.
//
// The Lua state keeps nothing of a library between calls: each FCALL
// runs the library's top level again to make its functions, as the
// state is dropped when the sandbox goes idle and rebuilt elsewhere
// when the sandbox moves. So a function's upvalues start afresh on
// every call, where in Redis they live on until the library is loaded
// again. What the top level can do is only to register functions, so
// running it again makes the same ones.

// library is a function library FUNCTION LOAD added.
type library struct {
	name string
	// code is the whole payload, shebang line included, as FUNCTION LIST
	// WITHCODE shows it; proto is its code after the shebang line.
	code     string
	proto    *lua.FunctionProto
	setTable bool // see protoCount
	funcs    []libFunction
	// size is the memory the library takes: its code and an estimate of
	// its compiled form, as a cached script's.
	size int
}

// libFunction is a function a library registered.
type libFunction struct {
	name    string
	desc    string
	hasDesc bool
	flags   scriptFlagSet
}

// scriptFlagSet holds function flags, bit i for shebangFlags[i].
type scriptFlagSet uint8

func (f scriptFlagSet) noWrites() bool { return f&1 != 0 }

// funcRef is a function with its library.
type funcRef struct {
	lib *library
	fn  *libFunction
}

// badLibraryName is Redis's error for a library or function name that is
// not letters, digits and underscores.
const badLibraryName = "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"

// validName is Redis's functionsVerifyName.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// parseLibraryMeta is Redis's functionExtractLibMetaData: the engine and
// name from the shebang line of a library's payload, and the code after
// it, from its newline on, so that line numbers stay the payload's. msg
// is Redis's error, without "ERR ".
func parseLibraryMeta(payload string) (engine, name, body, msg string) {
	if !strings.HasPrefix(payload, "#!") {
		return "", "", "", "Missing library metadata"
	}
	end := strings.IndexByte(payload, '\n')
	if end < 0 {
		return "", "", "", "Invalid library metadata"
	}
	parts, ok := splitArgs(payload[:end])
	if !ok || len(parts) == 0 {
		return "", "", "", "Invalid library metadata"
	}
	engine = strings.TrimPrefix(parts[0], "#!")
	hasName := false
	for _, p := range parts[1:] {
		if len(p) >= 5 && strings.EqualFold(p[:5], "name=") {
			if hasName {
				return "", "", "", "Invalid metadata value, name argument was given multiple times"
			}
			name, hasName = p[5:], true
			continue
		}
		return "", "", "", "Invalid metadata value given: " + p
	}
	if !hasName {
		return "", "", "", "Library name was not given"
	}
	return engine, name, payload[end:], ""
}

// LoadLibrary adds a library as FUNCTION LOAD does, without REPLACE, and
// returns its name: for a sandbox restored from a snapshot. Its top level
// runs under the engine's limits, with no deadline but Limits.Timeout.
func (e *Engine) LoadLibrary(code string) (string, error) {
	v := e.loadLibrary(context.Background(), code, false)
	if v.IsError() {
		return "", errors.New(v.Str)
	}
	return v.Str, nil
}

// Libraries returns the code of every library, in the order they were
// loaded, so that a snapshot of the sandbox can restore them with
// LoadLibrary.
func (e *Engine) Libraries() []string {
	out := make([]string, 0, len(e.libs))
	for _, lib := range e.libs {
		out = append(out, lib.code)
	}
	return out
}

// library returns the library named name (case-sensitive), or nil.
func (e *Engine) library(name string) *library {
	for _, lib := range e.libs {
		if lib.name == name {
			return lib
		}
	}
	return nil
}

// loadLibrary is FUNCTION LOAD [REPLACE] code, with Redis's checks in
// Redis's order and the playground's limits.
func (e *Engine) loadLibrary(ctx context.Context, code string, replace bool) resp.Value {
	engine, name, body, msg := parseLibraryMeta(code)
	switch {
	case msg != "":
		return resp.Err("ERR " + msg)
	case !validName(name):
		return resp.Err("ERR " + badLibraryName)
	case !strings.EqualFold(engine, "lua"):
		return resp.Err(fmt.Sprintf("ERR Engine '%s' not found", engine))
	}
	old := e.library(name)
	if old != nil && !replace {
		return resp.Err(fmt.Sprintf("ERR Library '%s' already exists", name))
	}
	if len(code) > e.opts.MaxScriptBytes {
		return resp.Err(e.libraryOverLimit(len(code)))
	}
	proto, err := compile(body, libChunkName, e.opts.Limits)
	if err != nil {
		var tl *tooLargeError
		if errors.As(err, &tl) {
			return resp.Err(tl.msg)
		}
		return resp.Err("ERR Error compiling function: " + err.Error())
	}
	proto = trim(proto)
	lib := &library{name: name, code: code, proto: proto, setTable: countProto(proto).setTable, size: len(code) + compiledSize(proto)}
	drop, errv := e.roomForLibrary(lib, old)
	if errv != nil {
		return *errv
	}
	if e.late(ctx) {
		return e.stopped(errTimeout, name)
	}
	v, r, end := e.begin(ctx, nil, lib.setTable, false)
	lc, err := v.instantiate(lib)
	end()
	if werr := r.watchdog.err; werr != nil {
		return e.stopped(werr, name)
	}
	if err != nil {
		return resp.Err("ERR Error registering functions: " + err.Error())
	}
	if len(lc.funcs) == 0 {
		return resp.Err("ERR No functions registered")
	}
	for _, f := range lc.funcs {
		if ref, ok := e.funcIndex[strings.ToLower(f.name)]; ok && ref.lib != old {
			return resp.Err(fmt.Sprintf("ERR Function %s already exists", f.name))
		}
	}
	lib.funcs = lc.funcs
	e.forgetOldest(drop)
	if old != nil {
		e.unlink(old)
	}
	e.link(lib)
	return resp.Str(name)
}

// roomForLibrary says how many of the oldest cached scripts must be
// forgotten for lib to fit, in place of old if that is set, or refuses
// it with the playground's error.
func (e *Engine) roomForLibrary(lib, old *library) (int, *resp.Value) {
	libs, libBytes := len(e.libs)+1, e.libBytes+lib.size
	if old != nil {
		libs, libBytes = libs-1, libBytes-old.size
	}
	if libBytes > e.opts.MaxScriptBytes {
		v := resp.Err(e.libraryOverLimit(libBytes))
		return 0, &v
	}
	if libs > e.opts.MaxScripts {
		v := resp.Err(fmt.Sprintf("ERR the playground keeps at most %d function libraries and scripts in a sandbox; delete a library first (FUNCTION DELETE)", e.opts.MaxScripts))
		return 0, &v
	}
	drop, after := 0, e.bytes
	for drop < len(e.order) && (len(e.order)-drop+libs > e.opts.MaxScripts || after+libBytes > e.opts.MaxScriptBytes) {
		after -= e.cache[e.order[drop]].size
		drop++
	}
	if total := after + libBytes; e.opts.Room != nil && total > e.ScriptBytes() && total > e.opts.Room() {
		v := resp.Err(errLibFull)
		return 0, &v
	}
	return drop, nil
}

// errLibFull refuses a library when Options.Room has no room for it.
const errLibFull = "ERR the playground is full right now and cannot take more function libraries in your sandbox; try again in a few minutes, or make room in it (FUNCTION DELETE, SCRIPT FLUSH, DEL, FLUSHDB)"

func (e *Engine) libraryOverLimit(size int) string {
	return fmt.Sprintf("ERR the playground keeps at most %d KiB of function libraries and scripts in a sandbox, source and compiled code together, and the libraries would take %d KiB; make them smaller or delete one (FUNCTION DELETE)", e.opts.MaxScriptBytes>>10, (size+1023)>>10)
}

// forgetOldest forgets the n oldest cached scripts.
func (e *Engine) forgetOldest(n int) {
	for _, sha := range e.order[:n] {
		e.bytes -= e.cache[sha].size
		delete(e.cache, sha)
	}
	e.order = e.order[n:]
}

// link adds lib and its functions. Function names are one namespace in
// any case: of two that differ only in case, the first registered is
// the one FCALL finds, as Redis's first added is.
func (e *Engine) link(lib *library) {
	e.libs = append(e.libs, lib)
	e.libBytes += lib.size
	if e.funcIndex == nil {
		e.funcIndex = map[string]funcRef{}
	}
	for i := range lib.funcs {
		key := strings.ToLower(lib.funcs[i].name)
		if _, ok := e.funcIndex[key]; !ok {
			e.funcIndex[key] = funcRef{lib: lib, fn: &lib.funcs[i]}
		}
	}
}

// unlink removes lib and its functions.
func (e *Engine) unlink(lib *library) {
	for i, l := range e.libs {
		if l == lib {
			e.libs = append(e.libs[:i:i], e.libs[i+1:]...)
			break
		}
	}
	e.libBytes -= lib.size
	for key, ref := range e.funcIndex {
		if ref.lib == lib {
			delete(e.funcIndex, key)
		}
	}
}

// flushLibraries removes every library, as FUNCTION FLUSH does.
func (e *Engine) flushLibraries() {
	e.libs, e.funcIndex, e.libBytes = nil, nil, 0
}

// fcall is FCALL and FCALL_RO (ro): it calls the function named argv[1],
// in any case, with the keys and arguments that follow numkeys (argv[2]).
func (e *Engine) fcall(ctx context.Context, c Caller, argv []string, ro bool) resp.Value {
	ref, ok := e.funcIndex[strings.ToLower(argv[1])]
	if !ok {
		return resp.Err("ERR Function not found")
	}
	rest := argv[3:]
	n, ok := parseInt(argv[2])
	switch {
	case !ok:
		return resp.Err("ERR Bad number of keys provided")
	case n > int64(len(rest)):
		return resp.Err("ERR Number of keys can't be greater than number of args")
	case n < 0:
		return resp.Err("ERR Number of keys can't be negative")
	}
	noWrites := ref.fn.flags.noWrites()
	if ro && !noWrites {
		return resp.Err("ERR Can not execute a script with write flag using *_ro command.")
	}
	name := ref.fn.name
	if e.late(ctx) {
		return e.stopped(errTimeout, name)
	}
	v, r, end := e.begin(ctx, c, ref.lib.setTable, ro || noWrites)
	defer end()
	lc, err := v.instantiate(ref.lib)
	if err != nil {
		if werr := r.watchdog.err; werr != nil {
			return e.stopped(werr, name)
		}
		// The library loaded with this code; only the limits can stop it.
		return resp.Err("ERR the playground could not load the library of " + name + ": " + err.Error())
	}
	L := v.L
	L.Push(lc.protos[name])
	L.Push(stringTable(L, rest[:n]))
	L.Push(stringTable(L, rest[n:]))
	return e.reply(L.PCall(2, 1, v.handler), name, v, r)
}
