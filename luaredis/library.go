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

// libSet is a set of function libraries: the engine's, or those a
// FUNCTION RESTORE payload holds while they are checked.
type libSet struct {
	// libs are the libraries, in the order loaded, libBytes what they
	// take, and funcIndex their functions by lower-case name.
	libs      []*library
	libBytes  int
	funcIndex map[string]funcRef
}

// library returns the library named name (case-sensitive), or nil.
func (s *libSet) library(name string) *library {
	for _, lib := range s.libs {
		if lib.name == name {
			return lib
		}
	}
	return nil
}

// loadLibrary is FUNCTION LOAD [REPLACE] code, with Redis's checks in
// Redis's order and the playground's limits.
func (e *Engine) loadLibrary(ctx context.Context, code string, replace bool) resp.Value {
	drop := 0
	lib, old, errv := e.createLibrary(ctx, &e.libSet, code, replace, func(lib, old *library) (errv *resp.Value) {
		drop, errv = e.roomForLibraries([]*library{lib}, []*library{old})
		return errv
	})
	if errv != nil {
		return *errv
	}
	e.forgetOldest(drop)
	if old != nil {
		e.unlink(old)
	}
	e.link(lib)
	return resp.Str(lib.name)
}

// createLibrary is Redis's functionsCreateWithLibraryCtx up to linking:
// it reads code's metadata, finds the library of that name in set (an
// error unless replace, and then old), compiles code, asks room (unless
// nil) whether the library fits, runs its top level to register its
// functions, and checks their names against the other libraries of set.
// It changes nothing; errv is Redis's error or the playground's.
func (e *Engine) createLibrary(ctx context.Context, set *libSet, code string, replace bool, room func(lib, old *library) *resp.Value) (lib, old *library, errv *resp.Value) {
	fail := func(msg string) (*library, *library, *resp.Value) {
		v := resp.Err(msg)
		return nil, nil, &v
	}
	engine, name, body, msg := parseLibraryMeta(code)
	switch {
	case msg != "":
		return fail("ERR " + msg)
	case !validName(name):
		return fail("ERR " + badLibraryName)
	case !strings.EqualFold(engine, "lua"):
		return fail(fmt.Sprintf("ERR Engine '%s' not found", engine))
	}
	old = set.library(name)
	if old != nil && !replace {
		return fail(fmt.Sprintf("ERR Library '%s' already exists", name))
	}
	if len(code) > e.opts.MaxScriptBytes {
		return fail(e.libraryOverLimit(len(code)))
	}
	proto, err := compile(body, libChunkName, e.opts.Limits)
	if err != nil {
		var tl *tooLargeError
		if errors.As(err, &tl) {
			return fail(tl.msg)
		}
		return fail("ERR Error compiling function: " + err.Error())
	}
	proto = trim(proto)
	lib = &library{name: name, code: code, proto: proto, setTable: countProto(proto).setTable, size: len(code) + compiledSize(proto)}
	if room != nil {
		if errv := room(lib, old); errv != nil {
			return nil, nil, errv
		}
	}
	if e.late(ctx) {
		v := e.stopped(errTimeout, name)
		return nil, nil, &v
	}
	v, r, end := e.begin(ctx, nil, lib.setTable, false)
	lc, err := v.instantiate(lib)
	end()
	if werr := r.watchdog.err; werr != nil {
		v := e.stopped(werr, name)
		return nil, nil, &v
	}
	if err != nil {
		return fail("ERR Error registering functions: " + err.Error())
	}
	if len(lc.funcs) == 0 {
		return fail("ERR No functions registered")
	}
	for _, f := range lc.funcs {
		if ref, ok := set.funcIndex[strings.ToLower(f.name)]; ok && ref.lib != old {
			return fail(fmt.Sprintf("ERR Function %s already exists", f.name))
		}
	}
	lib.funcs = lc.funcs
	return lib, old, nil
}

// roomForLibraries says how many of the oldest cached scripts must be
// forgotten for the libraries add to fit, in place of those of remove
// (nil entries ignored), or refuses them with the playground's error.
func (e *Engine) roomForLibraries(add, remove []*library) (int, *resp.Value) {
	libs, libBytes := len(e.libs), e.libBytes
	for _, lib := range add {
		libs, libBytes = libs+1, libBytes+lib.size
	}
	for _, lib := range remove {
		if lib != nil {
			libs, libBytes = libs-1, libBytes-lib.size
		}
	}
	if libBytes > e.opts.MaxScriptBytes {
		v := resp.Err(e.libraryOverLimit(libBytes))
		return 0, &v
	}
	if libs > e.opts.MaxScripts {
		v := resp.Err(e.tooManyLibraries())
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

func (e *Engine) tooManyLibraries() string {
	return fmt.Sprintf("ERR the playground keeps at most %d function libraries and scripts in a sandbox; delete a library first (FUNCTION DELETE)", e.opts.MaxScripts)
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
func (s *libSet) link(lib *library) {
	s.libs = append(s.libs, lib)
	s.libBytes += lib.size
	if s.funcIndex == nil {
		s.funcIndex = map[string]funcRef{}
	}
	for i := range lib.funcs {
		key := strings.ToLower(lib.funcs[i].name)
		if _, ok := s.funcIndex[key]; !ok {
			s.funcIndex[key] = funcRef{lib: lib, fn: &lib.funcs[i]}
		}
	}
}

// unlink removes lib and its functions.
func (s *libSet) unlink(lib *library) {
	for i, l := range s.libs {
		if l == lib {
			s.libs = append(s.libs[:i:i], s.libs[i+1:]...)
			break
		}
	}
	s.libBytes -= lib.size
	for key, ref := range s.funcIndex {
		if ref.lib == lib {
			delete(s.funcIndex, key)
		}
	}
}

// flushLibraries removes every library, as FUNCTION FLUSH does.
func (s *libSet) flushLibraries() {
	*s = libSet{}
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
