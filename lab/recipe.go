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
// The lock counts as taken when the first Acquire line answers OK or a
// positive integer; otherwise the client retries after a random delay
// (from the schedule's seed). A renewal counts only when the first Extend
// line answers OK or (integer) 1. After the first line of a part, each
// line runs only if the one before it answered OK, a positive integer or
// the client's own token, as client code that checks replies would (this
// is what makes a client-side "GET, then DEL if it is mine" a recipe).
// With Fencing, the integer reply of the last Acquire line is the
// fencing token sent with every write, and the storage rejects a token
// lower than one it has seen.
type Recipe struct {
	Acquire []string `json:"acquire"`
	Release []string `json:"release"`
	Extend  []string `json:"extend,omitempty"`
	Fencing bool     `json:"fencing"`
}

// The limits of a recipe: a lock is a few short lines.
const (
	// MaxLines is the most lines in one part of a recipe.
	MaxLines = 8
	// MaxLineBytes is the longest line, after placeholders are filled.
	MaxLineBytes = 4 << 10
)

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

// fill replaces the placeholders of line with v.
func fill(line string, v vars) string {
	if !strings.Contains(line, "{") {
		return line
	}
	// The values hold no braces, so the order of the replacements does
	// not matter; a Replacer would cost more to build than it saves.
	for _, r := range [...][2]string{{"{key}", v.key}, {"{token}", v.token}, {"{ttl}", v.ttl}, {"{ttl_s}", v.ttlS}} {
		line = strings.ReplaceAll(line, r[0], r[1])
	}
	return line
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
