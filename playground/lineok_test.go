package playground

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckLine(t *testing.T) {
	for _, tt := range []struct {
		line string
		want error  // a sentinel, or nil
		text string // in the error, when it is not a sentinel
	}{
		{line: "SET k v NX PX 100"},
		{line: `EVAL "return 1" 0`},
		{line: "set k v"},
		{line: `GET "k`, want: ErrUnbalancedQuotes},
		{line: "SUBSCRIBE c", want: ErrNotAllowed},
		{line: "CONFIG GET maxmemory", want: ErrNotAllowed},
		{line: "SCRIPT DEBUG YES", want: ErrNotAllowed},
		{line: "GET " + strings.Repeat("k", 70<<10), want: ErrLimit},
		{line: "NOPE a", text: "unknown command 'NOPE'"},
		{line: "GET", text: "wrong number of arguments for 'get'"},
		{line: "  ", text: "blank"},
		{line: "3 INCR n", text: "repeat count"},
		{line: "help", text: "redis-cli command"},
	} {
		argv, err := CheckLine(tt.line)
		switch {
		case tt.want == nil && tt.text == "" && err != nil:
			t.Errorf("CheckLine(%.30q) = %v; want nil", tt.line, err)
		case tt.want == nil && tt.text == "" && len(argv) == 0:
			t.Errorf("CheckLine(%.30q) gave no arguments", tt.line)
		case tt.want != nil && !errors.Is(err, tt.want):
			t.Errorf("CheckLine(%.30q) = %v; want %v", tt.line, err, tt.want)
		case tt.text != "" && (err == nil || !strings.Contains(err.Error(), tt.text)):
			t.Errorf("CheckLine(%.30q) = %v; want an error saying %q", tt.line, err, tt.text)
		}
	}
}
