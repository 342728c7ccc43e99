package playground

import (
	"regexp"
	"strings"
)

// VariesMark stands, in a reply a lesson prints, for a number that
// differs from one run to the next, such as the milliseconds a node took
// to answer an @all line.
const VariesMark = "…"

// ReplyPattern returns a regular expression that matches every reply a
// lesson's printed reply stands for, and "" when the printed reply has no
// VariesMark (then only the same text matches). A mark matches any number
// ("0.12", "29697"); the rest must be as printed. The expression is in
// the syntax Go's regexp and JavaScript's RegExp share, so that the page
// and the tests judge a reply alike.
func ReplyPattern(printed string) string {
	if !strings.Contains(printed, VariesMark) {
		return ""
	}
	parts := strings.Split(printed, VariesMark)
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return "^" + strings.Join(parts, "[0-9][0-9.]*") + "$"
}

// ReplyMatches reports whether a reply is one a lesson's printed reply
// stands for (see ReplyPattern).
func ReplyMatches(printed, reply string) bool {
	p := ReplyPattern(printed)
	if p == "" {
		return reply == printed
	}
	ok, err := regexp.MatchString(p, reply)
	return err == nil && ok
}
