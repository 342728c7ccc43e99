package lab

import (
	"errors"
	"fmt"
	"strings"

	"github.com/locklab/locklab/playground"
)

// Sentinel errors. The web layer maps them to statuses with errors.Is.
var (
	// ErrBadRecipe: the recipe cannot run (an empty acquire, a bad
	// placeholder, a line the playground refuses). The error is a
	// *LineError when one line is to blame.
	ErrBadRecipe = errors.New("lab: recipe cannot run")
	// ErrBudget: a check used up its Budget (schedules, lines or time)
	// before it was done; the message says which and what to change.
	ErrBudget = errors.New("lab: check budget spent")
	// ErrUnknownChallenge: no challenge has the id asked for.
	ErrUnknownChallenge = errors.New("lab: unknown challenge")
	// ErrBadSeed: a seed given to Replay does not name a schedule.
	ErrBadSeed = errors.New("lab: bad seed")
)

// Recipe is a learner's lock: redis-cli lines with placeholders, run by
// every client of a schedule. {key} is the lock key, {token} a value
// unique to each acquisition (unless the recipe writes a fixed value
// instead), {ttl} the TTL in milliseconds and {ttl_s} in seconds.
//
// Each part has one line whose reply decides it, and a rule for the
// replies that mean success (see Decide). By default the lock is taken
// when acquire line 1 answers OK or a positive integer, renewed when
// extend line 1 answers OK or (integer) 1, and released when the last
// release line answers OK or a positive integer. Lines run in order: one
// before the deciding line runs the next only if it answered OK, a
// positive integer or the client's own token, as client code that checks
// replies would; the deciding line goes on only when it succeeded (this
// is what makes a client-side "GET, then DEL if it is mine", or "GET,
// then SET if there is nothing", a recipe). An acquisition that does not
// succeed is tried again after a random delay.
//
// With Fencing, the storage rejects a write whose token is lower than one
// it has seen. The token is the integer reply of the last acquire line,
// or the element TokenFrom names.
//
// With Nodes 3 or 5 the recipe is a Redlock client over that many
// independent Redis nodes (see redlock.go): each part's lines run on
// every node in turn, with the same token, and a part succeeds on a
// node when its deciding line does there. The lock is taken when
// Quorum nodes (by default a majority, lock.Quorum) granted it within
// its validity, lock.Validity.
type Recipe struct {
	Acquire []string `json:"acquire"`
	Release []string `json:"release"`
	Extend  []string `json:"extend,omitempty"`
	Fencing bool     `json:"fencing"`
	// TakenWhen, RenewedWhen and ReleasedWhen name the deciding line of
	// acquire, extend and release and the replies that mean success;
	// nil keeps the default rule.
	TakenWhen    *Decide `json:"taken_when,omitempty"`
	RenewedWhen  *Decide `json:"renewed_when,omitempty"`
	ReleasedWhen *Decide `json:"released_when,omitempty"`
	// TokenFrom names where the fencing token is in acquire's replies.
	TokenFrom *TokenFrom `json:"token_from,omitempty"`
	// Nodes is how many independent Redis nodes the recipe runs on: 0 or
	// 1 is one node, 3 or 5 a Redlock client over that many.
	Nodes int `json:"nodes,omitempty"`
	// Quorum is how many nodes must grant the lock (and accept a
	// renewal, and a release) on several nodes; 0 is a majority,
	// lock.Quorum(Nodes). A smaller one takes the lock on a minority.
	Quorum int `json:"quorum,omitempty"`
}

// Decide is the line whose reply decides a part of a recipe, and the
// replies that mean success.
type Decide struct {
	// Line counts from 1; -1 is the last line.
	Line int `json:"line"`
	// Reply is a regular expression (RE2 syntax) matched against the
	// reply exactly as redis-cli prints it: ^OK$, ^\(nil\)$,
	// ^\(integer\) 0$. A reply of several lines is one string.
	Reply string `json:"reply"`
}

// TokenFrom names the fencing token in an acquire line's reply.
type TokenFrom struct {
	// Line counts from 1; -1 is the last line.
	Line int `json:"line"`
	// Element counts from 1 in a table (array) reply; 0 takes the whole
	// reply, which must be an integer or a string of digits.
	Element int `json:"element"`
}

// The limits of a recipe: a lock is a few short lines.
const (
	// MaxLines is the most lines in one part of a recipe.
	MaxLines = 8
	// MaxLineBytes is the longest line, after placeholders are filled.
	MaxLineBytes = 4 << 10
	// MaxTotalLines is the most lines of all parts together: every pair
	// of faults over every step is explored, so a check's work grows
	// with the square of the steps.
	MaxTotalLines = 8
	// MaxPatternBytes is the longest reply pattern of a Decide.
	MaxPatternBytes = 256
	// MaxElement is the highest element TokenFrom may name.
	MaxElement = 64
	// MaxNodeLines bounds a recipe on several nodes: its lines times its
	// nodes. Each line runs on every node, so a schedule runs that many
	// times more lines, and a job has that many more steps to strike.
	MaxNodeLines = 15
)

// NodeCounts are the numbers of Redis nodes a recipe may run on.
var NodeCounts = []int{1, 3, 5}

// Placeholders are the names a recipe line may use in braces.
var Placeholders = []string{"{key}", "{token}", "{ttl}", "{ttl_s}"}

// LineError is a recipe refused because of one line.
type LineError struct {
	Part   string `json:"part"`   // "acquire", "release" or "extend"
	Line   int    `json:"line"`   // 1-based
	Text   string `json:"text"`   // the line as written
	Reason string `json:"reason"` // why it cannot run
}

func (e *LineError) Error() string {
	return fmt.Sprintf("%s line %d %q: %s", e.Part, e.Line, shorten(e.Text, 80), e.Reason)
}

// Unwrap makes every LineError match ErrBadRecipe.
func (e *LineError) Unwrap() error { return ErrBadRecipe }

// connCommands keep state on a connection between lines; a recipe's
// lines may be interrupted between any two, and clients share no
// connection, so they are refused (a script is the atomic step).
var connCommands = map[string]bool{"MULTI": true, "EXEC": true, "DISCARD": true, "WATCH": true, "UNWATCH": true}

// Validate reports why r cannot run: an empty acquire or release, too
// many or too long lines, a placeholder other than Placeholders, or a
// line the playground's tokenizer or allow-list refuses. The error
// matches ErrBadRecipe and names the line (a *LineError).
func (r Recipe) Validate() error {
	if len(r.Acquire) == 0 {
		return fmt.Errorf("recipe: acquire needs at least one line: %w", ErrBadRecipe)
	}
	if len(r.Release) == 0 {
		return fmt.Errorf("recipe: release needs at least one line: %w", ErrBadRecipe)
	}
	if n := len(r.Acquire) + len(r.Release) + len(r.Extend); n > MaxTotalLines {
		return fmt.Errorf("recipe: %d lines in all; at most %d (a lock is a few short lines; put steps that must not be interrupted in one EVAL): %w", n, MaxTotalLines, ErrBadRecipe)
	}
	if err := r.validateNodes(); err != nil {
		return err
	}
	for _, p := range r.parts() {
		if len(p.lines) > MaxLines {
			return fmt.Errorf("recipe: %s has %d lines; at most %d: %w", p.name, len(p.lines), MaxLines, ErrBadRecipe)
		}
		for i, line := range p.lines {
			if reason := checkLine(line); reason != "" {
				return &LineError{Part: p.name, Line: i + 1, Text: line, Reason: reason}
			}
		}
	}
	if _, err := compileRules(r); err != nil {
		return err
	}
	return nil
}

type part struct {
	name  string
	lines []string
}

func (r Recipe) parts() []part {
	return []part{{"acquire", r.Acquire}, {"release", r.Release}, {"extend", r.Extend}}
}

// checkLine returns why line cannot run, or "".
func checkLine(line string) string {
	if strings.TrimSpace(line) == "" {
		return "the line is blank"
	}
	if bad := badPlaceholder(line); bad != "" {
		return fmt.Sprintf("unknown placeholder %s; use %s (write a Lua table with spaces: { x })", bad, strings.Join(Placeholders, ", "))
	}
	filled := fill(line, vars{key: "lock:lab", token: "c1-0123456789abcdef", ttl: "2000", ttlS: "2"})
	if len(filled) > MaxLineBytes {
		return fmt.Sprintf("the line is longer than %d bytes", MaxLineBytes)
	}
	argv, err := playground.CheckLine(filled)
	switch {
	case errors.Is(err, playground.ErrUnbalancedQuotes):
		return "unbalanced quotes (redis-cli would say Invalid argument(s))"
	case err != nil:
		var ref *playground.RefusedError
		if errors.As(err, &ref) {
			return ref.Msg
		}
		return strings.TrimPrefix(err.Error(), "check line: ")
	}
	if name := strings.ToUpper(argv[0]); connCommands[name] {
		return fmt.Sprintf("%s keeps state on a connection between lines, and a schedule may interrupt a client between any two lines; do it in one EVAL instead", name)
	}
	return ""
}

// badPlaceholder returns the first "{name}" in line that is not one of
// Placeholders, or "". Only a brace around a bare lower-case name counts,
// so Lua tables ({}, {KEYS[1]}, { x }) are left alone.
func badPlaceholder(line string) string {
	for i := 0; i < len(line); i++ {
		if line[i] != '{' {
			continue
		}
		j := i + 1
		for j < len(line) && (line[j] >= 'a' && line[j] <= 'z' || line[j] == '_') {
			j++
		}
		if j == i+1 || j >= len(line) || line[j] != '}' {
			continue
		}
		name := line[i : j+1]
		ok := false
		for _, p := range Placeholders {
			ok = ok || name == p
		}
		if !ok {
			return name
		}
		i = j
	}
	return ""
}

// vars are the values of the placeholders for one acquisition.
type vars struct{ key, token, ttl, ttlS string }

// fill replaces the placeholders of line with v, in one pass: a check
// fills each line thousands of times.
func fill(line string, v vars) string {
	i := strings.IndexByte(line, '{')
	if i < 0 {
		return line
	}
	var b strings.Builder
	b.Grow(len(line) + 2*len(v.token))
	for i >= 0 {
		b.WriteString(line[:i])
		rest := line[i:]
		switch {
		case strings.HasPrefix(rest, "{key}"):
			b.WriteString(v.key)
			line = rest[len("{key}"):]
		case strings.HasPrefix(rest, "{token}"):
			b.WriteString(v.token)
			line = rest[len("{token}"):]
		case strings.HasPrefix(rest, "{ttl}"):
			b.WriteString(v.ttl)
			line = rest[len("{ttl}"):]
		case strings.HasPrefix(rest, "{ttl_s}"):
			b.WriteString(v.ttlS)
			line = rest[len("{ttl_s}"):]
		default:
			b.WriteByte('{')
			line = rest[1:]
		}
		i = strings.IndexByte(line, '{')
	}
	b.WriteString(line)
	return b.String()
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
