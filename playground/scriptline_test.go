package playground

import "testing"

func TestRunsScript(t *testing.T) {
	for _, tt := range []struct {
		line string
		want bool
	}{
		{`EVAL "return 1" 0`, true},
		{`  evalsha abc 0`, true},
		{`"\x45VAL" "return 1" 0`, true},
		{`'eval' 'return 1' 0`, true},
		{`SCRIPT LOAD "return 1"`, true},
		{`fcall f 0`, true},
		{`SET k v`, false},
		{`GET EVAL`, false},
		{`"EVAL`, false}, // unbalanced quotes: refused by Exec anyway
		{``, false},
	} {
		if got := RunsScript(tt.line); got != tt.want {
			t.Errorf("RunsScript(%q) = %v; want %v", tt.line, got, tt.want)
		}
	}
}
