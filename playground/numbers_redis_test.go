package playground

import (
	"testing"

	"github.com/locklab/locklab/resp"
)

// TestLongDouble checks INCRBYFLOAT's arithmetic and printing, which
// follow x87 long double and ld2string (values from Redis 7.0.15).
func TestLongDouble(t *testing.T) {
	for _, tt := range []struct{ a, b, want string }{
		{"0.1", "0.2", "0.3"},
		{"0.3", "1e20", "100000000000000000000"},
		{"1.1", "2.2", "3.3"},
		{"-0.5", "0.5", "0"},
		{"10.5e3", "-10500", "0"},
		{"0", "0x10", "16"},
		{"0", "1.5e-7", "0.00000015"},
	} {
		a, okA := parseLongDouble(tt.a)
		b, okB := parseLongDouble(tt.b)
		if !okA || !okB {
			t.Fatalf("parseLongDouble(%q, %q) failed", tt.a, tt.b)
		}
		sum, ok := addLongDouble(a, b)
		if got := formatLongDouble(sum); !ok || got != tt.want {
			t.Errorf("%s + %s = %q; want %q", tt.a, tt.b, got, tt.want)
		}
	}
	for _, s := range []string{"", " 1", "1 ", "abc", "nan", "1e5000", "1e-5000", "1_000", "0b1", "1e"} {
		if _, ok := parseLongDouble(s); ok {
			t.Errorf("parseLongDouble(%q) ok; want refused as string2ld refuses it", s)
		}
	}
}

// TestScores checks how scores are read (strtod) and printed ("%.17g").
func TestScores(t *testing.T) {
	for _, tt := range []struct {
		in   string
		ok   bool
		want string
	}{
		{"0.1", true, "0.10000000000000001"},
		{"1.5e-7", true, "1.4999999999999999e-07"},
		{"123456789012345678", true, "1.2345678901234568e+17"},
		{"-0.0", true, "0"},
		{"+inf", true, "inf"},
		{"0x10", true, "16"},
		{"3", true, "3"},
		{"nan", false, ""},
		{"1e400", false, ""},
		{"1e-400", false, ""},
		{" 1", false, ""},
	} {
		s, ok := parseScore(tt.in)
		if ok != tt.ok {
			t.Errorf("parseScore(%q) ok = %v; want %v", tt.in, ok, tt.ok)
			continue
		}
		if !ok {
			continue
		}
		if got := score(resp.Str(s)).Str; got != tt.want {
			t.Errorf("score of %q prints %q; want %q", tt.in, got, tt.want)
		}
	}
}

// TestParseStringOpts checks SET's and GETEX's option rules.
func TestParseStringOpts(t *testing.T) {
	for _, tt := range []struct {
		args  []string
		getex bool
		ok    bool
	}{
		{[]string{"NX", "PX", "100"}, false, true},
		{[]string{"NX", "PX"}, false, false},
		{[]string{"KEEPTTL", "EX", "10"}, false, false},
		{[]string{"EX", "10", "KEEPTTL"}, false, false},
		{[]string{"EX", "10", "EX", "10"}, false, true},
		{[]string{"EX", "10", "PX", "10"}, false, false},
		{[]string{"NX", "XX"}, false, false},
		{[]string{"GET", "GET", "nx"}, false, true},
		{[]string{"PERSIST"}, true, true},
		{[]string{"PERSIST", "EX", "1"}, true, false},
		{[]string{"NX"}, true, false},
	} {
		if _, ok := parseStringOpts(tt.args, tt.getex); ok != tt.ok {
			t.Errorf("parseStringOpts(%q, getex %v) ok = %v; want %v", tt.args, tt.getex, ok, tt.ok)
		}
	}
}
