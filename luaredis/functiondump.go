package luaredis

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/locklab/locklab/resp"
)

// dumpLibraries is FUNCTION DUMP: every library's code in a payload
// Redis 7.0 can restore (see rdbpayload.go). Redis writes the libraries
// in its hash table's order, which changes with every server start;
// here they come in the order they were loaded, so a sandbox of one
// library dumps exactly what Redis dumps.
func (e *Engine) dumpLibraries() resp.Value {
	var b []byte
	for _, lib := range e.libs {
		b = appendRDBString(append(b, rdbOpcodeFunction2), lib.code)
	}
	return resp.Str(string(appendFooter(b)))
}

// restoreLibraries is FUNCTION RESTORE payload [FLUSH|APPEND|REPLACE],
// as Redis 7.0's functionRestoreCommand: the payload's footer is checked,
// its libraries are created apart (each as FUNCTION LOAD would, with the
// same limits), and only if all of them are good do they join the
// sandbox's: FLUSH puts them in place of all, APPEND refuses a library
// that exists, REPLACE puts a library in place of the one of its name.
// On any error nothing changes.
func (e *Engine) restoreLibraries(ctx context.Context, argv []string) resp.Value {
	if len(argv) > 4 {
		return resp.Err(fmt.Sprintf("ERR unknown subcommand or wrong number of arguments for '%.128s'. Try FUNCTION HELP.", argv[1]))
	}
	policy := "APPEND"
	if len(argv) == 4 {
		policy = strings.ToUpper(argv[3])
		if policy != "FLUSH" && policy != "APPEND" && policy != "REPLACE" {
			return resp.Err("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.")
		}
	}
	p := []byte(argv[2])
	if !footerOK(p) {
		return resp.Err(errPayloadFooter)
	}
	var set libSet
	r := payloadReader{p: p, max: e.opts.MaxScriptBytes}
	for len(p)-r.pos > 10 {
		var code, failed string
		var err error
		switch t, _ := r.byte(); t {
		case rdbOpcodeFunction2:
			code, err = r.string()
			failed = "library payload"
		case rdbOpcodeFunctionPreGA:
			code, failed, err = r.preGALibrary()
		default:
			return resp.Err("ERR given type is not a function")
		}
		switch {
		case errors.Is(err, errStringTooLong):
			return resp.Err(e.libraryOverLimit(r.tooLong))
		case err != nil:
			return resp.Err("ERR Failed loading " + failed)
		}
		if len(set.libs) >= e.opts.MaxScripts {
			return resp.Err(e.tooManyLibraries())
		}
		lib, _, errv := e.createLibrary(ctx, &set, code, false, nil)
		if errv != nil {
			return *errv
		}
		if set.libBytes+lib.size > e.opts.MaxScriptBytes {
			return resp.Err(e.libraryOverLimit(set.libBytes + lib.size))
		}
		set.link(lib)
	}
	replaced, errv := e.joinLibraries(&set, policy)
	if errv != nil {
		return *errv
	}
	drop, errv := e.roomForLibraries(set.libs, replaced)
	if errv != nil {
		return *errv
	}
	e.forgetOldest(drop)
	for _, old := range replaced {
		e.unlink(old)
	}
	for _, lib := range set.libs {
		e.link(lib)
	}
	return resp.OK()
}

// joinLibraries is Redis's libraryJoin, without changing anything: the
// sandbox's libraries that set's take the place of, or Redis's error.
func (e *Engine) joinLibraries(set *libSet, policy string) ([]*library, *resp.Value) {
	if policy == "FLUSH" {
		return append([]*library(nil), e.libs...), nil
	}
	var replaced []*library
	for _, lib := range set.libs {
		old := e.library(lib.name)
		if old == nil {
			continue
		}
		if policy != "REPLACE" {
			v := resp.Err(fmt.Sprintf("ERR Library %s already exists", lib.name))
			return nil, &v
		}
		replaced = append(replaced, old)
	}
	for _, lib := range set.libs {
		for _, f := range lib.funcs {
			ref, ok := e.funcIndex[strings.ToLower(f.name)]
			if ok && !containsLib(replaced, ref.lib) {
				v := resp.Err(fmt.Sprintf("ERR Function %s already exists", f.name))
				return nil, &v
			}
		}
	}
	return replaced, nil
}

func containsLib(libs []*library, lib *library) bool {
	for _, l := range libs {
		if l == lib {
			return true
		}
	}
	return false
}

// preGALibrary reads a library as Redis 7.0's release candidates wrote
// it: its name, engine, optional description and code apart, which
// Redis 7.0 joins into a payload with its shebang line. failed names
// the part that could not be read.
func (r *payloadReader) preGALibrary() (code, failed string, err error) {
	name, err := r.string()
	if err != nil {
		return "", "library name", err
	}
	engine, err := r.string()
	if err != nil {
		return "", "engine name", err
	}
	hasDesc, _, err := r.length()
	if err != nil {
		return "", "library description indicator", err
	}
	if hasDesc != 0 {
		if _, err := r.string(); err != nil {
			return "", "library description", err
		}
	}
	blob, err := r.string()
	if err != nil {
		return "", "library blob", err
	}
	return "#!" + engine + " name=" + name + "\n" + blob, "", nil
}
