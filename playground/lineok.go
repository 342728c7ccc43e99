package playground

import (
	"fmt"
	"strings"
)

// CheckLine reads line as Exec would and reports whether Exec would send
// its command to Redis, without running anything: it returns the
// arguments, or an error for a line redis-cli or the playground refuses.
// A line Tokenize cannot split gives ErrUnbalancedQuotes; a command
// Redis does not know, or one with the wrong number of arguments, gives
// an error with Redis's own text; a command the playground does not run
// gives a *RefusedError (ErrNotAllowed or ErrLimit), as Exec would. A
// blank line, redis-cli's own commands (help, clear) and a repeat prefix
// ("3 INCR n") are not commands and are refused too: callers that build
// programs from lines (the lock lab) want one command per line.
//
// It checks the default Limits; its cost is linear in the line.
func CheckLine(line string) ([]string, error) {
	limits := Limits{}.withDefaults()
	if len(line) > limits.MaxLineBytes {
		return nil, overLimit("ERR the playground takes lines of at most %s", sizeText(limits.MaxLineBytes))
	}
	argv, err := Tokenize(line)
	if err != nil {
		return nil, err
	}
	if len(argv) == 0 {
		return nil, fmt.Errorf("check line: the line is blank")
	}
	if len(argv) > 1 {
		if _, isNum := strtol(argv[0]); isNum {
			return nil, fmt.Errorf("check line: %q is a redis-cli repeat count; write the command once", argv[0])
		}
	}
	s := &Sandbox{limits: limits}
	if _, _, local := s.cliLocal(argv); local {
		return nil, fmt.Errorf("check line: %s is a redis-cli command, not one Redis runs", strings.ToLower(argv[0]))
	}
	_, errv, ref := s.check(argv)
	switch {
	case ref != nil:
		return nil, ref
	case errv != nil:
		return nil, fmt.Errorf("check line: %s", errv.Str)
	}
	return argv, nil
}
