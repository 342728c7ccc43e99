package resp

import (
	"errors"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want string
	}{
		{"+OK\r\n", "+OK"},
		{"-ERR bad\r\n", "-ERR bad"},
		{":-12\r\n", ":-12"},
		{"$3\r\na\nb\r\n", `"a\nb"`},
		{"$0\r\n\r\n", `""`},
		{"$-1\r\n", "nil"},
		{"*-1\r\n", "nil"},
		{"*0\r\n", "[]"},
		{"*2\r\n:1\r\n*1\r\n$1\r\nx\r\n", `[:1 ["x"]]`},
		{",1.5\r\n", ",1.5"},
		{"#t\r\n", "#t"},
		{"_\r\n", "nil"},
		{"%1\r\n+k\r\n+v\r\n", "[+k +v]"},
	} {
		v, rest, err := Parse([]byte(tt.in))
		if err != nil || len(rest) != 0 || v.String() != tt.want {
			t.Errorf("Parse(%q) = %v, %q, %v; want %s", tt.in, v, rest, err, tt.want)
		}
	}
	for _, in := range []string{"", "+OK", "$5\r\nab\r\n", ":x\r\n", "*2\r\n:1\r\n", "?\r\n", "*99999999\r\n", "$-2\r\n", "%7000000000000000000\r\n", "%4611686018427387904\r\n", "~9223372036854775807\r\n"} {
		if _, _, err := Parse([]byte(in)); !errors.Is(err, ErrProtocol) {
			t.Errorf("Parse(%q) error = %v; want ErrProtocol", in, err)
		}
	}
}

func TestAppendRESP(t *testing.T) {
	for _, tt := range []struct {
		v    Value
		want string
	}{
		{OK(), "+OK\r\n"},
		{Err("ERR two\r\nlines"), "-ERR two  lines\r\n"},
		{Int(7), ":7\r\n"},
		{Str("a\r\nb"), "$4\r\na\r\nb\r\n"},
		{Null(), "$-1\r\n"},
		{Arr(Str("x"), Arr()), "*2\r\n$1\r\nx\r\n*0\r\n"},
	} {
		if got := string(tt.v.AppendRESP(nil)); got != tt.want {
			t.Errorf("%v.AppendRESP() = %q; want %q", tt.v, got, tt.want)
		}
		back, _, err := Parse(tt.v.AppendRESP(nil))
		if err != nil {
			t.Errorf("Parse(%v.AppendRESP()) error = %v", tt.v, err)
		}
		if tt.v.Kind != Error && back.String() != tt.v.String() {
			t.Errorf("Parse(%v.AppendRESP()) = %v; want it back", tt.v, back)
		}
	}
}
