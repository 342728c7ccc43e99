package learnerid

import "testing"

func TestValid(t *testing.T) {
	for _, tt := range []struct {
		id   string
		want bool
	}{
		{"benchlearner0123456789", true},
		{"AZaz09-_AZaz09-_AZaz09", true},
		{New(), true},
		{"benchlearner012345678", false},
		{"benchlearner01234567890", false},
		{"benchlearner012345678=", false},
		{"benchlearner012345678é", false},
		{"benchlearner01234567+/", false},
		{"", false},
	} {
		if got := Valid(tt.id); got != tt.want {
			t.Errorf("Valid(%q) = %v; want %v", tt.id, got, tt.want)
		}
	}
}

func TestNewIsRandom(t *testing.T) {
	if a, b := New(), New(); a == b {
		t.Errorf("New() twice = %q; want two different ids", a)
	}
}
