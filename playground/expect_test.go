package playground

import "testing"

func TestReplyMatches(t *testing.T) {
	for _, tt := range []struct {
		printed, reply string
		want           bool
	}{
		{"OK", "OK", true},
		{"OK", "OK ", false},
		{"(integer) 1", "(integer) 2", false},
		{"@1 (… ms) OK", "@1 (0.12 ms) OK", true},
		{"@1 (… ms) OK", "@1 (12 ms) OK", true},
		{"@1 (… ms) OK", "@1 (x ms) OK", false},
		{"@1 (… ms) OK", "@1 (0.12 ms) OK\nmore", false},
		{"held for … ms = TTL 30000 ms", "held for 29697 ms = TTL 30000 ms", true},
		{"held for … ms = TTL 30000 ms", "held for 29697 ms = TTL 10000 ms", false},
		{"a.b (… ms)", "aXb (1 ms)", false}, // the rest is literal
	} {
		if got := ReplyMatches(tt.printed, tt.reply); got != tt.want {
			t.Errorf("ReplyMatches(%q, %q) = %v; want %v", tt.printed, tt.reply, got, tt.want)
		}
	}
}
