package sim

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The words of the fault vocabulary and of what follows from it, said
// the same way wherever a simulation tells learners: in the race, in a
// lock lab counterexample, and in the list of a schedule's faults.

// Dur writes a duration for learners: "10 s", "1.5 s", "250 ms".
func Dur(d time.Duration) string {
	if d < time.Second && d > -time.Second {
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	return strconv.FormatFloat(float64(d.Milliseconds())/1000, 'f', -1, 64) + " s"
}

// Capital upper-cases the first letter: "client 1" starts a sentence as
// "Client 1".
func Capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// JoinAnd lists words as a sentence does: "a", "a and b", "a, b and c".
func JoinAnd(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// PauseStarts says that who freezes for d; where, if set, says before
// what ("its write to the storage").
func PauseStarts(who string, d time.Duration, where string) string {
	if where != "" {
		where = " just before " + where
	}
	return fmt.Sprintf("%s freezes for %s%s (a garbage-collection pause, a swapped-out VM) and cannot notice time passing.", Capital(who), Dur(d), where)
}

// PauseEnds says that who runs again after a pause of d.
func PauseEnds(who string, d time.Duration) string {
	return fmt.Sprintf("%s runs again, %s later, and carries on where it stopped: nothing told it that time passed.", Capital(who), Dur(d))
}

// ReplyLate says that Redis answered who's what with reply, and that the
// reply reaches who d late.
func ReplyLate(who, what, reply string, d time.Duration) string {
	return fmt.Sprintf("Redis runs %s's %s and answers %s, but the reply is late (a slow network, say): %s waits %s for it, unaware.", who, what, reply, who, Dur(d))
}

// ClientCrashes says that who's process is gone.
func ClientCrashes(who string) string {
	return fmt.Sprintf("%s crashes: its process is gone and it will never release anything.", Capital(who))
}

// NodeCrashes says that node (Redis, "node 3") crashes, with or without
// persistence, for down.
func NodeCrashes(node string, persist bool, down time.Duration) string {
	if persist {
		return fmt.Sprintf("%s crashes. It writes every command to its append-only file (fsync always), so its data is on disk; it stays down %s.", Capital(node), Dur(down))
	}
	return fmt.Sprintf("%s crashes. It has no persistence, so every key is lost; it stays down %s.", Capital(node), Dur(down))
}

// NodeBack says that node is back, with its data or empty.
func NodeBack(node string, persist bool) string {
	if persist {
		return fmt.Sprintf("%s is back with its data; keys whose TTL ran out while it was down are gone.", Capital(node))
	}
	return fmt.Sprintf("%s is back, empty: no lock, and no fencing counter either.", Capital(node))
}

// ClockJumps says that node's clock jumps d ahead, or back for a
// negative d.
func ClockJumps(node string, d time.Duration) string {
	if d < 0 {
		return fmt.Sprintf("%s's clock jumps %s back (an NTP correction, an operator): every TTL on it runs out %s late.", Capital(node), Dur(-d), Dur(-d))
	}
	return fmt.Sprintf("%s's clock jumps %s ahead (an NTP correction, an operator): every TTL on it runs out %s early.", Capital(node), Dur(d), Dur(d))
}

// JumpShort writes a clock jump of d as a drawing labels it: "+10 s"
// ahead, "−250 ms" back.
func JumpShort(d time.Duration) string {
	if d < 0 {
		return "\u2212" + Dur(-d)
	}
	return "+" + Dur(d)
}

// KeyExpires says that holder's key ran out on node; holder may be "".
func KeyExpires(node, holder string, paused bool) string {
	switch {
	case holder == "":
		return fmt.Sprintf("The key's TTL runs out and %s deletes it.", node)
	case paused:
		return fmt.Sprintf("The TTL of %s's key runs out while %s is still paused; %s deletes the key.", holder, holder, node)
	}
	return fmt.Sprintf("The TTL of %s's key runs out and %s deletes it; %s is not told.", holder, node, holder)
}
