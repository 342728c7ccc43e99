package race

import (
	"strconv"
	"time"

	"github.com/locklab/locklab/sim"
)

// Seconds writes a moment of a run as the transcript does: "0 s",
// "0.5 s", "12.25 s". The pages write every time of a run with it.
func Seconds(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Milliseconds())/1000, 'f', -1, 64) + " s"
}

// msDur is n milliseconds.
func msDur(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// times writes a count of times: "once", "twice", "9 times".
func times(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return strconv.Itoa(n) + " times"
}

// nodeList writes node numbers as "node 3", "nodes 4 and 5" or
// "nodes 1, 2 and 3".
func nodeList(ids []int) string {
	if len(ids) == 0 {
		return "no node"
	}
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(id)
	}
	if len(s) == 1 {
		return "node " + s[0]
	}
	return "nodes " + sim.JoinAnd(s)
}
