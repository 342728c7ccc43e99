package playground

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestTokenize(t *testing.T) {
	for _, tt := range []struct {
		name string
		line string
		want []string
		err  error
	}{
		{"empty", "", nil, nil},
		{"blanks", " \t\v\f\r\n", nil, nil},
		{"words", "SET k v", []string{"SET", "k", "v"}, nil},
		{"extra blanks", "  SET   k\tv  ", []string{"SET", "k", "v"}, nil},
		{"double quotes", `SET k "a b"`, []string{"SET", "k", "a b"}, nil},
		{"empty quotes", `SET k ""`, []string{"SET", "k", ""}, nil},
		{"escapes", `"\n\r\t\b\a\"\\\q"`, []string{"\n\r\t\b\a\"\\q"}, nil},
		{"hex escape", `"\x41\x7a\xff\x00"`, []string{"Az\xff\x00"}, nil},
		{"short hex escape is literal x", `"\x4"`, []string{"x4"}, nil},
		{"bad hex escape is literal x", `"\xzz"`, []string{"xzz"}, nil},
		{"single quotes", `'a b'`, []string{"a b"}, nil},
		{"single quote escape", `'it\'s'`, []string{"it's"}, nil},
		{"no escapes in single quotes", `'a\nb\\ c'`, []string{`a\nb\\ c`}, nil},
		{"backslash before closing single quote escapes it", `'a\\'`, nil, ErrUnbalancedQuotes},
		{"double quotes in single", `'say "hi"'`, []string{`say "hi"`}, nil},
		{"single quotes in double", `"it's"`, []string{"it's"}, nil},
		{"quote starts mid-word", `a"b c"`, []string{"ab c"}, nil},
		{"quote after word then more", `ab'c d' e`, []string{"abc d", "e"}, nil},
		{"unclosed double", `SET "a`, nil, ErrUnbalancedQuotes},
		{"unclosed single", `SET 'a`, nil, ErrUnbalancedQuotes},
		{"text after closing double", `"a"b`, nil, ErrUnbalancedQuotes},
		{"text after closing single", `'a'b`, nil, ErrUnbalancedQuotes},
		{"quote after closing quote", `"a""b"`, nil, ErrUnbalancedQuotes},
		{"closing quote then tab", "\"a\"\tb", []string{"a", "b"}, nil},
		{"closing quote then vertical tab", "\"a\"\vb", []string{"a", "b"}, nil},
		{"backslash at the end in quotes", `"a\`, nil, ErrUnbalancedQuotes},
		{"vertical tab inside a word", "a\vb", []string{"a\vb"}, nil},
		{"NUL ends the line", "GET a\x00b c", []string{"GET", "a"}, nil},
		{"UTF-8 passes through", "SET k café", []string{"SET", "k", "café"}, nil},
		{
			"the lesson's release script",
			lessonRelease,
			[]string{"EVAL", "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end", "1", "lock:invoice:7", "3f9a1c"},
			nil,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Tokenize(tt.line)
			if !errors.Is(err, tt.err) {
				t.Fatalf("Tokenize(%q) error = %v; want %v", tt.line, err, tt.err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Tokenize(%q) = %q; want %q", tt.line, got, tt.want)
			}
		})
	}
}

// FuzzTokenize checks that no line panics, and that what Tokenize splits
// can be quoted back with Quote and split again into the same arguments.
func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"", "SET k v", `"a\x41" 'b\'c'`, `"unclosed`, lessonRelease, "a\"b c\" d", "\x00", "\"\\"} {
		f.Add(s)
	}
	// The adversarial shapes of the cost test, at the JSON body limit.
	for _, shape := range adversarialShapes {
		f.Add(adversarialLine(shape.unit, 64<<10))
	}
	f.Fuzz(func(t *testing.T, line string) {
		args, err := Tokenize(line)
		if err != nil {
			return
		}
		quoted := make([]string, len(args))
		for i, a := range args {
			quoted[i] = Quote(a)
		}
		requoted := strings.Join(quoted, " ")
		again, err := Tokenize(requoted)
		if err != nil {
			t.Fatalf("Tokenize(%q) = %v for the quoted form of %q", requoted, err, args)
		}
		if len(args) == 0 && len(again) == 0 {
			return
		}
		if !reflect.DeepEqual(again, args) {
			t.Errorf("Tokenize(%q) = %q; want %q", requoted, again, args)
		}
	})
}

// TestTokenizeAllocatesOnce checks that a line of plain words costs one
// allocation, its argument list: the words are substrings of the line,
// and argsBound sizes the list.
func TestTokenizeAllocatesOnce(t *testing.T) {
	for _, line := range []string{"SET lock:invoice:7 3f9a1c PX 30000", "  GET   k  ", "PING"} {
		if n := testing.AllocsPerRun(100, func() { tokenize(line, -1) }); n != 1 {
			t.Errorf("Tokenize(%q) allocates %v times; want 1", line, n)
		}
	}
	if n := testing.AllocsPerRun(100, func() { tokenize("", -1) }); n != 0 {
		t.Errorf("Tokenize of a blank line allocates %v times; want 0", n)
	}
	for _, tt := range []struct {
		line  string
		limit int
		want  int
	}{
		{"SET k v", -1, 3}, {"SET k v", 2, 2}, {`SET "a b" c`, -1, 4}, {" \t", -1, 0}, {"a\vb", -1, 2},
	} {
		if got := argsBound(tt.line, tt.limit); got != tt.want {
			t.Errorf("argsBound(%q, %d) = %d; want %d", tt.line, tt.limit, got, tt.want)
		}
	}
}
