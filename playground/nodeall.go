package playground

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/lock"
)

// execAll runs a line on every node in turn, as a Redlock client sends
// its SET to each instance, and prints each node's reply with the time it
// took. For a lock acquire (SET with NX and a TTL) it adds the verdict a
// Redlock client reaches: how many nodes said OK, whether that is a
// majority, and the validity left, by the lock package's own rule.
func (ns *nodeSet) execAll(ctx context.Context, client Client, line string, allow int) (Result, int, error) {
	res := ns.answer(client, "")
	var out strings.Builder
	var first error
	size := ns.total()
	oks := 0
	start := time.Now()
	// The line gets one deadline in all, as a repeat count's does: five
	// nodes must not make it five times as long.
	// A node's own deadline comes first, and says so; this one, a little
	// later, cuts a node sent the line near the end.
	timeout := ns.cfg.limits.Script.Timeout
	ctx, cancel := context.WithDeadline(ctx, start.Add(timeout+timeout/10))
	defer cancel()
	for n := 1; n <= MaxNodes; n++ {
		if n > 1 {
			out.WriteByte('\n')
		}
		// A node is not sent the line once the deadline is all but
		// spent: it would only be stopped at once.
		if time.Until(start.Add(timeout)) < timeout/100 {
			fmt.Fprintf(&out, "@%d (not sent: this line used up its %v)", n, timeout)
			continue
		}
		began := time.Now()
		r, sz, err := ns.execNode(ctx, n, client, line, allow, true)
		took := time.Since(began)
		if err != nil && r.Output == "" {
			return Result{}, -1, err
		}
		if err != nil && first == nil {
			first = err
		}
		if sz < 0 {
			size = -1
		} else if size >= 0 {
			size = sz
		}
		res.ScriptTime += r.ScriptTime
		res.RunTime += r.RunTime
		res.Stopped = res.Stopped || r.Stopped
		if ns.down[n-1] {
			fmt.Fprintf(&out, "@%d %s", n, r.Output)
			continue
		}
		if r.Output == "OK" {
			oks++
		}
		fmt.Fprintf(&out, "@%d (%s)", n, msText(took))
		if strings.Contains(r.Output, "\n") {
			out.WriteString("\n" + r.Output)
		} else if r.Output != "" {
			out.WriteString(" " + r.Output)
		}
	}
	if ttl, ok := acquireTTL(line); ok {
		out.WriteByte('\n')
		out.WriteString(redlockVerdict(oks, MaxNodes, ttl, time.Since(start)))
	}
	res.Output = out.String()
	res.ClockMS = ns.nodes[0].Now().UnixMilli()
	return res, size, first
}

// msText prints a duration in milliseconds, to a hundredth below 10 ms.
func msText(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	if ms < 10 {
		return strconv.FormatFloat(ms, 'f', 2, 64) + " ms"
	}
	return strconv.FormatInt(d.Milliseconds(), 10) + " ms"
}

// acquireTTL reports whether line is a lock acquire, SET key value NX
// with PX or EX, and its TTL.
func acquireTTL(line string) (time.Duration, bool) {
	argv, err := Tokenize(line)
	if err != nil || len(argv) < 5 || !strings.EqualFold(argv[0], "SET") {
		return 0, false
	}
	nx := false
	var ttl time.Duration
	for i := 3; i < len(argv); i++ {
		switch strings.ToUpper(argv[i]) {
		case "NX":
			nx = true
		case "PX", "EX":
			if i+1 >= len(argv) {
				return 0, false
			}
			v, err := strconv.ParseInt(argv[i+1], 10, 64)
			if err != nil || v <= 0 || v > int64(24*time.Hour/time.Millisecond) {
				return 0, false
			}
			unit := time.Millisecond
			if strings.EqualFold(argv[i], "EX") {
				unit = time.Second
			}
			ttl = time.Duration(v) * unit
			i++
		}
	}
	return ttl, nx && ttl > 0
}

// redlockVerdict says what a Redlock client concludes from ok grants of
// n nodes after an attempt that took spent, with the lock package's
// quorum and validity rules.
func redlockVerdict(ok, n int, ttl, spent time.Duration) string {
	quorum := lock.Quorum(n)
	drift := lock.Drift(ttl)
	validity := lock.Validity(ttl, spent)
	calc := fmt.Sprintf("TTL %s − %s spent − %s drift allowance, %s", msText(ttl), msText(spent), msText(drift), lock.DriftRule)
	switch {
	case ok < quorum:
		return fmt.Sprintf("Redlock: %d of %d nodes said OK, fewer than the majority of %d: the lock is not held; release it on every node and retry later.", ok, n, quorum)
	case validity <= 0:
		return fmt.Sprintf("Redlock: %d of %d nodes said OK, a majority, but no validity is left: %s. The lock is not held.", ok, n, calc)
	}
	return fmt.Sprintf("Redlock: %d of %d nodes said OK, a majority (%d needed): the lock is held for %s = %s.", ok, n, quorum, msText(validity), calc)
}
