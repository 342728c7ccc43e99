package playground

import (
	"fmt"
	"strings"
)

// MaxNodes is how many Redis nodes a learner's sandbox may have: five, as
// Redlock uses. Node 1 is the sandbox every learner has; nodes 2 to 5
// exist once a line, a clock jump or a restart uses them.
const MaxNodes = 5

// Target is where a typed line goes: one of the learner's Redis nodes,
// every node in turn, or the fenced storage service.
type Target struct {
	// Node is 1 to MaxNodes; 0 for All and Storage.
	Node    int
	All     bool
	Storage bool
}

// TargetError is a line whose @ word names no target.
type TargetError struct{ Word string }

func (e *TargetError) Error() string {
	return fmt.Sprintf("(the playground's targets are @1 to @%d, @all and @storage; %q is none of them)", MaxNodes, e.Word)
}

// SplitTarget reads the target a line starts with, as the terminal takes
// it: "@3 SET k v" goes to node 3, "@all SET k v" to every node in turn,
// "@storage WRITE 34 x" to the storage service, and a line without an @
// word to node 1. rest is the line after the @ word. No Redis command
// starts with @, so the word is never part of a command.
func SplitTarget(line string) (t Target, rest string, err error) {
	s := strings.TrimLeft(line, " \t")
	if !strings.HasPrefix(s, "@") {
		return Target{Node: 1}, line, nil
	}
	word, rest := s, ""
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		word, rest = s[:i], s[i+1:]
	}
	switch w := strings.ToLower(word); {
	case w == "@all":
		t.All = true
	case w == "@storage":
		t.Storage = true
	case len(w) == 2 && w[1] >= '1' && int(w[1]-'0') <= MaxNodes:
		t.Node = int(w[1] - '0')
	default:
		return Target{}, "", &TargetError{Word: shorten(word, 24)}
	}
	return t, strings.TrimLeft(rest, " \t"), nil
}

// Prefix returns the @ word that sends a line to t, "" for node 1.
func (t Target) Prefix() string {
	switch {
	case t.All:
		return "@all"
	case t.Storage:
		return "@storage"
	case t.Node > 1:
		return fmt.Sprintf("@%d", t.Node)
	}
	return ""
}
