package race

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// dur writes a duration for learners: "10 s", "1.5 s", "250 ms".
func dur(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
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
	return "nodes " + strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// capital upper-cases the first letter: "client 1" starts a sentence as
// "Client 1".
func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
