package playground

import (
	"fmt"
	"strings"

	"github.com/locklab/locklab/resp"
)

// run executes one command for connection c: the checks Redis makes before
// it runs anything (unknown command, arity), the playground's refusals and
// limits, MULTI/EXEC/DISCARD, and then the command itself.
func (s *Sandbox) run(c *conn, argv []string) (resp.Value, *RefusedError) {
	name := strings.ToUpper(argv[0])
	cmd, errv, ref := s.check(argv)
	if ref != nil && c.multi && queuedBlocking(name) {
		// Queued, to run at EXEC without blocking (blockingtx.go).
		cmd, _ = lookupCommand(name)
		ref = nil
	}
	if ref != nil || errv != nil {
		if c.multi && name != "EXEC" && name != "DISCARD" {
			c.dirty = true // Redis discards a transaction with a rejected command
		}
		if ref != nil {
			return resp.Err(ref.Msg), ref
		}
		return *errv, nil
	}
	switch name {
	case "MULTI":
		if c.multi {
			return resp.Err("ERR MULTI calls can not be nested"), nil
		}
		c.multi, c.dirty, c.queue, c.queued = true, false, nil, 0
		return resp.OK(), nil
	case "EXEC":
		if !c.multi {
			return resp.Err("ERR EXEC without MULTI"), nil
		}
		return s.exec(c), nil
	case "DISCARD":
		if !c.multi {
			return resp.Err("ERR DISCARD without MULTI"), nil
		}
		s.endTx(c)
		return resp.OK(), nil
	case "WATCH":
		if c.multi {
			return resp.Err("ERR WATCH inside MULTI is not allowed"), nil
		}
	}
	if c.multi {
		if len(c.queue) >= s.limits.MaxQueued {
			c.dirty = true
			ref := overLimit("ERR the playground queues at most %d commands in a transaction", s.limits.MaxQueued)
			return resp.Err(ref.Msg), ref
		}
		n := argvBytes(argv)
		if c.queued+n > s.limits.MaxQueuedBytes {
			c.dirty = true
			ref := overLimit("ERR the playground queues at most %d bytes of commands in a transaction", s.limits.MaxQueuedBytes)
			return resp.Err(ref.Msg), ref
		}
		if ref := s.guard(cmd, argv); ref != nil {
			c.dirty = true
			return resp.Err(ref.Msg), ref
		}
		c.queue = append(c.queue, argv)
		c.queued += n
		return resp.StatusValue("QUEUED"), nil
	}
	return s.guarded(c, cmd, argv)
}

// guarded checks the limits of a command and runs it.
func (s *Sandbox) guarded(c *conn, cmd command, argv []string) (resp.Value, *RefusedError) {
	if ref := s.guard(cmd, argv); ref != nil {
		return resp.Err(ref.Msg), ref
	}
	name := strings.ToUpper(argv[0])
	argv = forwardRanges(name, argv)
	existed := name == "APPEND" && s.m.Exists(argv[1])
	wasHash := s.hashBefore(name, argv)
	v, ok := s.override(c, name, argv)
	if !ok {
		var carry func(resp.Value)
		if name == "RENAME" || name == "RENAMENX" || name == "COPY" {
			carry = s.carryFar(argv)
		}
		v = fixScores(name, argv, fixReply(name, s.dispatch(c, argv...)))
		s.afterDispatch(name, argv, v)
		setOrder(name, v)
		if len(s.hashOrders) > 0 {
			v = s.hashReplyOrder(name, argv, v)
		}
		if carry != nil {
			carry(v)
		}
	}
	if cmd.flags&flagWrite != 0 {
		s.noteEncoding(name, cmd, argv, existed)
		s.noteHashOrder(name, cmd, argv, v, wasHash)
	}
	s.account(cmd, argv)
	s.noteChange(name, cmd, argv)
	if s.replyOver && c != s.inner {
		// The command ran, but its reply was too large to keep: a
		// repeat prefix stops here.
		s.replyOver = false
		return v, overLimit("%s", v.Str)
	}
	return v, nil
}

// check makes Redis's own checks (unknown command, unknown subcommand,
// arity) and the playground's refusals, in that order, as Redis rejects an
// unknown command before anything else.
func (s *Sandbox) check(argv []string) (command, *resp.Value, *RefusedError) {
	if len(argv) > s.limits.MaxArgs {
		return command{}, nil, overLimit("ERR the playground takes at most %d arguments in a command", s.limits.MaxArgs)
	}
	for _, a := range argv {
		if len(a) > s.limits.MaxValueBytes {
			return command{}, nil, overLimit("ERR the playground takes values of at most %d bytes", s.limits.MaxValueBytes)
		}
	}
	name := strings.ToUpper(argv[0])
	cmd, ok := lookupCommand(name)
	if !ok {
		v := resp.Err(unknownCommand(argv))
		return command{}, &v, nil
	}
	if !cmd.arityOK(len(argv)) {
		v := resp.Err(fmt.Sprintf("ERR wrong number of arguments for '%s' command", cmd.name))
		return command{}, &v, nil
	}
	if !allowed(name) {
		return command{}, nil, notAllowed("ERR the playground does not support %s: %s", name, refusal(name, cmd))
	}
	if name == "SELECT" && selectRefused(argv[1]) {
		return command{}, nil, notAllowed("ERR the playground does not support SELECT %s: %s", argv[1], refusal(name, cmd))
	}
	if name == "COMMAND" && len(argv) == 1 {
		return command{}, nil, notAllowed("ERR the playground does not support COMMAND: %s", subRefusal("COMMAND"))
	}
	if name == "SCRIPT" || name == "OBJECT" || name == "CLIENT" || name == "FUNCTION" || name == "COMMAND" {
		sub, ok := lookupCommand(name + "|" + strings.ToUpper(argv[1]))
		if !ok {
			v := resp.Err(fmt.Sprintf("ERR unknown subcommand '%.128s'. Try %s HELP.", resp.OneLine(argv[1]), name))
			return command{}, &v, nil
		}
		if !sub.arityOK(len(argv)) {
			v := resp.Err(fmt.Sprintf("ERR wrong number of arguments for '%s' command", sub.name))
			return command{}, &v, nil
		}
		if strings.EqualFold(sub.name, "command|getkeys") {
			if _, ref := commandGetKeys(argv); ref != nil {
				return command{}, nil, ref
			}
		}
		switch full := strings.ToUpper(sub.name); full {
		case "SCRIPT|LOAD", "SCRIPT|EXISTS", "SCRIPT|FLUSH", "SCRIPT|KILL", "OBJECT|IDLETIME",
			"OBJECT|ENCODING", "OBJECT|REFCOUNT", "OBJECT|FREQ", "OBJECT|HELP", "CLIENT|SETNAME", "CLIENT|GETNAME",
			"FUNCTION|LOAD", "FUNCTION|LIST", "FUNCTION|DELETE", "FUNCTION|FLUSH", "FUNCTION|STATS", "FUNCTION|KILL", "FUNCTION|HELP",
			"FUNCTION|DUMP", "FUNCTION|RESTORE", "COMMAND|GETKEYS", "COMMAND|COUNT", "COMMAND|HELP":
		default:
			return command{}, nil, notAllowed("ERR the playground does not support %s %s: %s",
				name, strings.ToUpper(argv[1]), subRefusal(full))
		}
	}
	return cmd, nil, nil
}

func subRefusal(full string) string {
	if strings.HasPrefix(full, "CLIENT|") {
		return refusal("CLIENT", command{})
	}
	switch full {
	case "SCRIPT|DEBUG":
		return "the Lua debugger needs its own connection mode"
	case "COMMAND", "COMMAND|INFO", "COMMAND|DOCS", "COMMAND|LIST", "COMMAND|GETKEYSANDFLAGS":
		return "it describes Redis's command table, which the playground keeps only in part; COMMAND COUNT and COMMAND GETKEYS work, and help <command> describes one"
	}
	return "type help to see what the playground supports"
}

// unknownCommand is Redis 7's error for a command it does not know; it
// quotes the first arguments up to about 128 bytes.
func unknownCommand(argv []string) string {
	var args strings.Builder
	for _, a := range argv[1:] {
		if args.Len() >= 128 {
			break
		}
		fmt.Fprintf(&args, "'%.*s' ", 128-args.Len(), a)
	}
	name := argv[0]
	if len(name) > 128 {
		name = name[:128]
	}
	return resp.OneLine(fmt.Sprintf("ERR unknown command '%s', with args beginning with: %s", name, args.String()))
}

// exec runs a queued transaction: atomically, since the sandbox runs one
// command at a time, and only if no WATCHed key changed. miniredis checks
// the WATCHes: an empty MULTI/EXEC on the client's own connection answers
// nil when one changed, and forgets the WATCHes either way, as EXEC does.
func (s *Sandbox) exec(c *conn) resp.Value {
	queue, dirty := c.queue, c.dirty
	c.multi, c.dirty, c.queue, c.queued = false, false, nil, 0
	if dirty {
		s.dispatch(c, "UNWATCH")
		return resp.Err("EXECABORT Transaction discarded because of previous errors.")
	}
	s.dispatch(c, "MULTI")
	if v := s.dispatch(c, "EXEC"); v.Kind == resp.Nil {
		return resp.Null()
	}
	out := make([]resp.Value, 0, len(queue))
	for i, argv := range queue {
		// The line's deadline holds for the commands of a transaction
		// too: once it has passed, the commands left are not run, and
		// their replies say why. Scripts stop at once by themselves.
		name := strings.ToUpper(argv[0])
		if !s.lineDeadline.IsZero() && !scripting[name] && !s.runNow().Before(s.lineDeadline) {
			out = append(out, resp.Err(fmt.Sprintf("ERR the playground did not run this command: the line used up its %v (command %d of %d)", s.limits.Script.Timeout, i+1, len(queue))))
			continue
		}
		if queuedBlocking(name) {
			out = append(out, s.runBlockingNow(c, name, argv))
			continue
		}
		cmd, _ := lookupCommand(name)
		v, _ := s.guarded(c, cmd, argv)
		out = append(out, v)
	}
	return resp.Arr(out...)
}

// scripting are the commands that run a script or function, which stops
// by itself once the line's deadline has passed.
var scripting = map[string]bool{"EVAL": true, "EVALSHA": true, "EVAL_RO": true, "EVALSHA_RO": true, "FCALL": true, "FCALL_RO": true}

// endTx drops a transaction and its WATCHes, as DISCARD does.
func (s *Sandbox) endTx(c *conn) {
	c.multi, c.dirty, c.queue, c.queued = false, false, nil, 0
	s.dispatch(c, "UNWATCH")
}

// scriptCaller runs the redis.call commands of scripts, with Redis's
// refusals for commands scripts may not run and the playground's limits.
type scriptCaller struct{ s *Sandbox }

func (sc scriptCaller) Call(argv []string, readOnly bool) (v resp.Value) {
	s := sc.s
	name := strings.ToUpper(argv[0])
	if s.broken != "" {
		return resp.Err("ERR the playground stopped this script: " + s.broken)
	}
	// gopher-lua would turn a panic into a Lua error and carry on, with
	// miniredis's lock perhaps still held; note it for runSafely instead.
	defer func() {
		if r := recover(); r != nil {
			if s.m.TryLock() {
				s.m.Unlock()
				v = resp.Err(fmt.Sprintf("ERR the playground failed to run %s (internal error: %v)", name, r))
				return
			}
			s.broken = fmt.Sprintf("it failed to run %s (internal error: %v)", name, r)
			v = resp.Err("ERR the playground stopped this script: " + s.broken)
		}
	}()
	cmd, ok := lookupCommand(name)
	flags := cmd.flags
	if len(argv) > 1 {
		// A subcommand's flags are its own (CLIENT GETNAME may not run
		// in a script, though CLIENT has no such flag).
		if sub, ok := lookupCommand(name + "|" + strings.ToUpper(argv[1])); ok {
			flags = sub.flags
		}
	}
	switch {
	case !ok:
		return resp.Err("ERR Unknown Redis command called from script")
	case !cmd.arityOK(len(argv)):
		return resp.Err("ERR Wrong number of args calling Redis command from script")
	case flags&flagNoScript != 0:
		return resp.Err("ERR This Redis command is not allowed from script")
	case readOnly && flags&flagWrite != 0:
		return resp.Err("ERR Write commands are not allowed from read-only scripts.")
	}
	if name == "SPUBLISH" {
		// Redis 7 lets scripts publish (a lock's release script may wake
		// its waiters). Nobody can subscribe to a sandbox, so no client
		// receives the message: Redis then answers 0, as PUBLISH does.
		return resp.Int(0)
	}
	if _, errv, ref := s.check(argv); ref != nil {
		return resp.Err(ref.Msg)
	} else if errv != nil {
		return *errv
	}
	v, _ = s.guarded(s.inner, cmd, argv)
	return v
}

// argvBytes is what a queued command holds: its arguments, with the
// overhead growth counts for each.
func argvBytes(argv []string) int {
	n := 0
	for _, a := range argv {
		n += len(a) + 8
	}
	return n
}

// queuedBytes is what both clients' transactions hold, and the hash field
// orders the sandbox notes (hashorder.go). It counts towards the sandbox's
// data for a Manager's budget, as it takes memory as data does.
func (s *Sandbox) queuedBytes() int { return s.conns[0].queued + s.conns[1].queued + s.orderBytes }
