package playground

import (
	"strconv"
	"strings"

	"github.com/locklab/locklab/resp"
)

// Blocking commands in a transaction. Redis queues BLPOP and its cousins
// after MULTI and runs them at EXEC without blocking, as a transaction
// cannot wait: each answers what its non-blocking cousin finds, or nil if
// every key is empty, as if its timeout had passed. The playground
// refuses them outside a transaction (refusal says why) and answers them
// inside one the same way.

// queuedBlocking reports whether argv is a blocking command that a
// transaction may queue.
func queuedBlocking(name string) bool {
	switch name {
	case "BLPOP", "BRPOP", "BRPOPLPUSH", "BLMOVE", "BLMPOP", "BZPOPMIN", "BZPOPMAX", "BZMPOP":
		return true
	}
	return false
}

// runBlockingNow runs a queued blocking command at EXEC, without
// blocking, on connection c.
func (s *Sandbox) runBlockingNow(c *conn, name string, argv []string) resp.Value {
	var timeout string
	switch name {
	case "BLMPOP", "BZMPOP":
		timeout = argv[1]
	default:
		timeout = argv[len(argv)-1]
	}
	if v, ok := checkTimeout(timeout); !ok {
		return v
	}
	run := func(argv ...string) resp.Value {
		cmd, _ := lookupCommand(strings.ToUpper(argv[0]))
		v, _ := s.guarded(c, cmd, argv)
		return v
	}
	switch name {
	case "BLPOP", "BRPOP", "BZPOPMIN", "BZPOPMAX":
		// The first key that has an element gives it, with its name.
		pop := nonBlocking(name)
		for _, key := range argv[1 : len(argv)-1] {
			v := run(pop, key)
			switch {
			case v.Kind == resp.Error:
				return v
			case v.Kind == resp.Nil || v.Kind == resp.Array && len(v.Elems) == 0:
				continue
			case v.Kind == resp.Array:
				return resp.Arr(append([]resp.Value{resp.Str(key)}, v.Elems...)...)
			default:
				return resp.Arr(resp.Str(key), v)
			}
		}
		return resp.Null()
	case "BLMPOP", "BZMPOP":
		// LMPOP and ZMPOP take the same arguments but the timeout.
		v := run(append([]string{nonBlocking(name)}, argv[2:]...)...)
		return v
	}
	// BRPOPLPUSH and BLMOVE: their cousins take the same arguments but
	// the timeout, and answer nil when the source is empty.
	return run(append([]string{nonBlocking(name)}, argv[1:len(argv)-1]...)...)
}

// checkTimeout checks a blocking command's timeout as Redis does when it
// runs: a number of seconds, not negative.
func checkTimeout(arg string) (resp.Value, bool) {
	f, err := strconv.ParseFloat(arg, 64)
	if err != nil || f != f {
		return resp.Err("ERR timeout is not a float or out of range"), false
	}
	if f < 0 {
		return resp.Err("ERR timeout is negative"), false
	}
	return resp.Value{}, true
}
