package playground

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/resp"
)

// Exec runs one line typed by client, as redis-cli would send it, and
// returns what redis-cli would print. When the playground refuses the line
// (ErrNotAllowed, ErrLimit), the error is a *RefusedError and Result.Output
// still holds the (error) line to show. ErrUnknownClient and ErrClosed
// come with an empty Result.
func (s *Sandbox) Exec(ctx context.Context, client Client, line string) (res Result, err error) {
	res, _, err = s.ExecWithin(ctx, client, line, s.limits.footprint())
	return res, err
}

// ExecWithin runs a line as Exec does, but refuses writes that would
// leave more than allow bytes of data in the sandbox (counted as
// Limits.MaxDataBytes counts them, and never more than that limit) with an
// ErrLimit saying that the playground is full, and scripts that would do
// so with an (error) saying the same. It returns an upper bound of what
// the sandbox holds after the line: data, the commands its clients have
// queued in transactions, and scripts (source and estimated compiled
// code), which a Manager adds up to keep all its sandboxes within a
// budget.
func (s *Sandbox) ExecWithin(ctx context.Context, client Client, line string, allow int) (res Result, size int, err error) {
	c, err := s.connOf(client)
	if err != nil {
		return Result{}, 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return Result{}, 0, ErrClosed
	}
	s.allow = allow
	defer func() { s.allow, size = s.limits.footprint(), s.sizeBound+s.queuedBytes()+s.engine.ScriptBytes() }()
	res, err = s.execLocked(ctx, c, client, line)
	return res, size, err
}

// execLocked is Exec with s.mu held.
func (s *Sandbox) execLocked(ctx context.Context, c *conn, client Client, line string) (res Result, err error) {
	res.Client = Client(strings.ToUpper(string(client)))
	defer func() { res.ClockMS = s.clock().UnixMilli() }()
	if len(line) > s.limits.MaxLineBytes {
		ref := overLimit("ERR the playground takes lines of at most %s", sizeText(s.limits.MaxLineBytes))
		res.Output = "(error) " + ref.Msg
		return res, ref
	}
	argv, err := Tokenize(line)
	if err != nil {
		res.Output = "Invalid argument(s)"
		return res, nil
	}
	if len(argv) == 0 {
		return res, nil
	}
	repeat, argv, ok := splitRepeat(argv)
	if !ok {
		res.Output = "Invalid redis-cli repeat command option value."
		return res, nil
	}
	if out, clear, local := s.cliLocal(argv); local {
		res.Output, res.Clear = out, clear
		return res, nil
	}
	return s.execArgv(ctx, c, res, repeat, argv)
}

// ExecArgs runs one command given as its arguments, as a line that
// tokenizes to argv would run (without a repeat count, and without the
// lines redis-cli answers itself), and returns what redis-cli would
// print. A caller that runs the same line many times with a few values
// changed, such as the lock lab, tokenizes it once.
func (s *Sandbox) ExecArgs(ctx context.Context, client Client, argv []string) (res Result, err error) {
	c, err := s.connOf(client)
	if err != nil {
		return Result{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return Result{}, ErrClosed
	}
	res.Client = Client(strings.ToUpper(string(client)))
	defer func() { res.ClockMS = s.clock().UnixMilli() }()
	if len(argv) == 0 {
		return res, nil
	}
	n := len(argv)
	for _, a := range argv {
		n += len(a)
	}
	if n > s.limits.MaxLineBytes {
		ref := overLimit("ERR the playground takes lines of at most %s", sizeText(s.limits.MaxLineBytes))
		res.Output = "(error) " + ref.Msg
		return res, ref
	}
	return s.execArgv(ctx, c, res, 1, argv)
}

// execArgv runs argv repeat times, under one deadline for the line.
func (s *Sandbox) execArgv(ctx context.Context, c *conn, base Result, repeat int, argv []string) (res Result, err error) {
	res = base
	if repeat > s.limits.MaxRepeat {
		ref := overLimit("ERR the playground repeats a command at most %d times", s.limits.MaxRepeat)
		res.Output = "(error) " + ref.Msg
		return res, ref
	}
	// A line gets one deadline in all, however many commands and scripts
	// it runs (a repeat prefix, a transaction): otherwise one line could
	// hold the sandbox and a CPU for minutes.
	start, stops := s.runNow(), s.engine.Stops()
	s.ctx, s.lineDeadline, s.scriptTime = ctx, start.Add(s.limits.Script.Timeout), 0
	defer func() {
		res.ScriptTime = s.scriptTime
		res.RunTime = s.runNow().Sub(start)
		res.Stopped = s.engine.Stops() != stops
		s.ctx, s.lineDeadline, s.scriptTime = nil, time.Time{}, 0
	}()
	out := newShownWriter(s.limits.MaxReplyLines, s.limits.MaxReplyBytes)
	for i := range repeat {
		s.replyLeft, s.replyOver = s.limits.MaxReplyBuildBytes, false
		v, ref := s.runSafely(c, argv)
		if i == 0 && ref == nil && v.IsError() && subscribes(argv[0]) {
			// redis-cli goes into its pub/sub mode before it sends the
			// command (once, however many times it repeats it), and
			// leaves it at an error.
			out.WriteString("Reading messages... (press Ctrl-C to quit)\n")
		}
		formatTTY(out, v, "")
		if ref != nil {
			err = ref
			break
		}
		// Once the line's deadline has passed, every repeat left would
		// only say so again.
		if left := repeat - i - 1; left > 0 && !s.runNow().Before(s.lineDeadline) {
			what := "this line"
			if s.scriptTime > 0 {
				what = "this line's scripts"
			}
			fmt.Fprintf(out, "(the playground did not run the other %d: %s used up its %v)\n", left, what, s.limits.Script.Timeout)
			break
		}
	}
	res.Output = strings.TrimSuffix(out.String(), "\n")
	return res, err
}

func (s *Sandbox) connOf(client Client) (*conn, error) {
	i, err := clientIndex(client)
	if err != nil {
		return nil, err
	}
	return s.conns[i], nil
}

// clientIndex maps "A" and "B", in either case, to 0 and 1.
func clientIndex(client Client) (int, error) {
	switch Client(strings.ToUpper(string(client))) {
	case ClientA:
		return 0, nil
	case ClientB:
		return 1, nil
	}
	return 0, fmt.Errorf("sandbox exec as %q: %w", client, ErrUnknownClient)
}

// splitRepeat handles redis-cli's repeat prefix: "3 INCR n" runs INCR n three
// times. Like redis-cli, a first argument that is wholly a number (strtol)
// is a repeat count when more arguments follow, and one below 1 is refused.
func splitRepeat(argv []string) (int, []string, bool) {
	if len(argv) < 2 {
		return 1, argv, true
	}
	n, isNum := strtol(argv[0])
	if !isNum {
		return 1, argv, true
	}
	if n <= 0 {
		return 0, nil, false
	}
	return int(min(n, 1<<30)), argv[1:], true
}

// cliLocal answers the lines redis-cli handles itself instead of sending
// them to Redis.
func (s *Sandbox) cliLocal(argv []string) (out string, clear, local bool) {
	name := strings.ToLower(argv[0])
	switch {
	case (name == "help" || name == "?") && len(argv) > 1:
		return commandHelp(argv[1:]), false, true
	case name == "help" || name == "?":
		return helpText + "\n" + s.limits.helpLine(), false, true
	case name == "quit" || name == "exit":
		return "(the playground keeps your session: there is nothing to quit)", false, true
	case name == "clear" && len(argv) == 1:
		return "", true, true
	case strings.HasPrefix(name, ":"), name == "restart", name == "connect" && len(argv) == 3:
		return "(redis-cli's " + argv[0] + " is not available in the playground)", false, true
	}
	return "", false, false
}

// runSafely runs one command for client c and turns a panic into an error
// reply, so that no input can take the process down. A panic inside
// miniredis can leave its lock held; then the sandbox's server is replaced
// by an empty one, as the old one's data cannot be read any more.
func (s *Sandbox) runSafely(c *conn, argv []string) (v resp.Value, ref *RefusedError) {
	defer func() {
		r := recover()
		if r == nil {
			if s.broken != "" {
				v = resp.Err(fmt.Sprintf("ERR the playground stopped your script: %s; your sandbox had to be emptied", s.broken))
				s.broken = ""
				s.replaceServer()
			}
			return
		}
		msg := fmt.Sprintf("ERR the playground failed to run %s (internal error: %v)", strings.ToUpper(argv[0]), r)
		if s.m.TryLock() {
			s.m.Unlock()
		} else {
			s.replaceServer()
			msg += "; your sandbox had to be emptied"
		}
		v, ref = resp.Err(msg), nil
	}()
	return s.runFrozen(func() (resp.Value, *RefusedError) { return s.run(c, argv) })
}

// subscribes reports whether redis-cli takes the command for one that
// subscribes.
func subscribes(name string) bool {
	return strings.EqualFold(name, "SUBSCRIBE") || strings.EqualFold(name, "PSUBSCRIBE") || strings.EqualFold(name, "SSUBSCRIBE")
}
