package lab

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/locklab/locklab/playground"
)

// rules are a recipe's decisions, ready to apply: for each part, the
// deciding line (0-based) and whether a reply means success.
type rules struct {
	acquire, extend, release decision
	// tokenLine and tokenElem say where the fencing token is: acquire
	// line tokenLine (0-based), element tokenElem of a table (0: the
	// whole reply).
	tokenLine, tokenElem int
	// args are each part's lines, tokenized once: a check runs each line
	// thousands of times with only the placeholders' values changed.
	args map[string][][]string
}

// decision is one part's deciding line and its rule.
type decision struct {
	line    int            // 0-based
	pattern *regexp.Regexp // nil: the default rule, ok
	ok      func(reply string) bool
	custom  bool   // the recipe named the line or the replies
	text    string // the rule in words: "answers OK or a positive integer"
}

// success reports whether reply means the part succeeded.
func (d decision) success(reply string) bool {
	if d.pattern != nil {
		return d.pattern.MatchString(reply)
	}
	return d.ok(reply)
}

// compileRules checks r's decisions and token source against its parts
// and compiles them. Errors match ErrBadRecipe.
func compileRules(r Recipe) (*rules, error) {
	okOrPositive := func(reply string) bool {
		if reply == "OK" {
			return true
		}
		n, ok := intReply(reply)
		return ok && n > 0
	}
	okOrOne := func(reply string) bool { return reply == "OK" || reply == "(integer) 1" }
	out := &rules{
		acquire:   decision{line: 0, ok: okOrPositive, text: "answers OK or a positive integer"},
		extend:    decision{line: 0, ok: okOrOne, text: "answers OK or (integer) 1"},
		release:   decision{line: max(len(r.Release)-1, 0), ok: okOrPositive, text: "answers OK or a positive integer"},
		tokenLine: max(len(r.Acquire)-1, 0),
	}
	for _, d := range []struct {
		name  string
		n     int
		spec  *Decide
		field string
		into  *decision
	}{
		{"acquire", len(r.Acquire), r.TakenWhen, "taken_when", &out.acquire},
		{"extend", len(r.Extend), r.RenewedWhen, "renewed_when", &out.extend},
		{"release", len(r.Release), r.ReleasedWhen, "released_when", &out.release},
	} {
		if d.spec == nil {
			continue
		}
		line, err := lineIndex(d.spec.Line, d.n, d.field, d.name)
		if err != nil {
			return nil, err
		}
		if len(d.spec.Reply) > MaxPatternBytes {
			return nil, fmt.Errorf("recipe: %s.reply is %d bytes; at most %d: %w", d.field, len(d.spec.Reply), MaxPatternBytes, ErrBadRecipe)
		}
		if d.spec.Reply == "" {
			return nil, fmt.Errorf("recipe: %s.reply is empty; give a regular expression such as ^OK$: %w", d.field, ErrBadRecipe)
		}
		re, err := regexp.Compile(d.spec.Reply)
		if err != nil {
			return nil, fmt.Errorf("recipe: %s.reply %q is not a regular expression: %v: %w", d.field, d.spec.Reply, err, ErrBadRecipe)
		}
		*d.into = decision{line: line, pattern: re, custom: true, text: fmt.Sprintf("answers a reply that matches %s", d.spec.Reply)}
	}
	out.args = map[string][][]string{}
	for _, p := range r.parts() {
		for _, line := range p.lines {
			argv, err := playground.Tokenize(line)
			if err != nil {
				return nil, fmt.Errorf("recipe: %s line %q: %v: %w", p.name, shorten(line, 80), err, ErrBadRecipe)
			}
			out.args[p.name] = append(out.args[p.name], argv)
		}
	}
	if t := r.TokenFrom; t != nil {
		line, err := lineIndex(t.Line, len(r.Acquire), "token_from", "acquire")
		if err != nil {
			return nil, err
		}
		if t.Element < 0 || t.Element > MaxElement {
			return nil, fmt.Errorf("recipe: token_from.element %d: must be between 0 (the whole reply) and %d: %w", t.Element, MaxElement, ErrBadRecipe)
		}
		out.tokenLine, out.tokenElem = line, t.Element
	}
	return out, nil
}

// lineIndex turns a 1-based line number (or -1, the last) of a part of n
// lines into a 0-based index.
func lineIndex(line, n int, field, part string) (int, error) {
	switch {
	case n == 0:
		return 0, fmt.Errorf("recipe: %s names a line of %s, which has none: %w", field, part, ErrBadRecipe)
	case line == -1:
		return n - 1, nil
	case line < 1 || line > n:
		return 0, fmt.Errorf("recipe: %s.line %d: %s has lines 1 to %d (or -1 for the last): %w", field, line, part, n, ErrBadRecipe)
	}
	return line - 1, nil
}

// intReply reads "(integer) N".
func intReply(out string) (int64, bool) {
	v, ok := strings.CutPrefix(out, "(integer) ")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

// goesOn reports whether a client runs the next line after one that is
// not the deciding line answered reply: OK, a positive integer, or its
// own token.
func goesOn(reply, token string) bool {
	if reply == "OK" {
		return true
	}
	if n, ok := intReply(reply); ok {
		return n > 0
	}
	return reply == playground.Quote(token)
}

// fenceFrom reads a fencing token from reply: an integer, or a string of
// digits, or element elem (1-based) of a table reply as redis-cli prints
// it ("1) (integer) 7"). It returns 0 when there is none.
func fenceFrom(reply string, elem int) int64 {
	if elem > 0 {
		prefix := strconv.Itoa(elem) + ") "
		found := false
		for _, l := range strings.Split(reply, "\n") {
			// redis-cli right-aligns the numbers of a long table.
			if v, ok := strings.CutPrefix(strings.TrimLeft(l, " "), prefix); ok {
				reply, found = v, true
				break
			}
		}
		if !found {
			return 0
		}
	}
	if n, ok := intReply(reply); ok {
		return max(n, 0)
	}
	if len(reply) >= 2 && reply[0] == '"' && reply[len(reply)-1] == '"' {
		if n, err := strconv.ParseInt(reply[1:len(reply)-1], 10, 64); err == nil {
			return max(n, 0)
		}
	}
	return 0
}
