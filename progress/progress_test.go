package progress

import (
	"reflect"
	"testing"
)

// TestParse reads flags as the stores keep them: a started flag, right
// answers (sorted whatever order they came in), unknown flags skipped.
func TestParse(t *testing.T) {
	for _, tt := range []struct {
		name  string
		flags []string
		want  Progress
	}{
		{"none", nil, Progress{}},
		{"started", []string{StartedFlag("locks")}, Progress{"locks": {Started: true}}},
		{"right, sorted", []string{RightFlag("locks", "q2"), StartedFlag("locks"), RightFlag("locks", "q1")},
			Progress{"locks": {Started: true, Right: []string{"q1", "q2"}}}},
		{"two topics", []string{StartedFlag("a"), RightFlag("b", "q")},
			Progress{"a": {Started: true}, "b": {Right: []string{"q"}}}},
		{"unknown flags", []string{"noslash", "locks/other", "lab/solved/x"}, Progress{}},
	} {
		if got := Parse(tt.flags); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: Parse(%q) = %v; want %v", tt.name, tt.flags, got, tt.want)
		}
	}
}

// TestParseClipsRight checks that appending to a parsed topic's answers
// never writes into the slice the parser made, which caches share.
func TestParseClipsRight(t *testing.T) {
	p := Parse([]string{RightFlag("locks", "q1"), RightFlag("locks", "q2"), StartedFlag("locks")})
	r := p["locks"].Right
	if cap(r) != len(r) {
		t.Errorf("Parse: cap(Right) = %d, len %d; want them equal", cap(r), len(r))
	}
}
