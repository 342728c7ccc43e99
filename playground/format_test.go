package playground

import (
	"strings"
	"testing"

	"github.com/locklab/locklab/resp"
)

func TestFormat(t *testing.T) {
	ints := func(n int) []resp.Value {
		var out []resp.Value
		for i := 1; i <= n; i++ {
			out = append(out, resp.Int(int64(i)))
		}
		return out
	}
	for _, tt := range []struct {
		name string
		v    resp.Value
		want string
	}{
		{"status", resp.OK(), "OK\n"},
		{"error", resp.Err("ERR syntax error"), "(error) ERR syntax error\n"},
		{"integer", resp.Int(-7), "(integer) -7\n"},
		{"bulk", resp.Str("3f9a1c"), "\"3f9a1c\"\n"},
		{"empty bulk", resp.Str(""), "\"\"\n"},
		{"bulk escapes", resp.Str("a\"b\\c\n\r\t\a\b\x00\x7f\xc3\xa9"), `"a\"b\\c\n\r\t\a\b\x00\x7f\xc3\xa9"` + "\n"},
		{"nil", resp.Null(), "(nil)\n"},
		{"double", resp.Value{Kind: resp.Double, Str: "1.5"}, "(double) 1.5\n"},
		{"true", resp.Value{Kind: resp.Bool, Int: 1}, "(true)\n"},
		{"empty array", resp.Arr(), "(empty array)\n"},
		{"empty map", resp.Value{Kind: resp.Map}, "(empty hash)\n"},
		{"empty set", resp.Value{Kind: resp.Set}, "(empty set)\n"},
		{"array", resp.Arr(resp.Str("a"), resp.Null(), resp.Int(3)), "1) \"a\"\n2) (nil)\n3) (integer) 3\n"},
		{
			"nested",
			resp.Arr(resp.Int(1), resp.Arr(resp.Int(3), resp.Str("x"), resp.Err("bad")), resp.Arr()),
			"1) (integer) 1\n2) 1) (integer) 3\n   2) \"x\"\n   3) (error) bad\n3) (empty array)\n",
		},
		{
			"index width",
			resp.Arr(append(ints(9), resp.Arr(resp.Int(1), resp.Arr(resp.Int(2), resp.Int(3))))...),
			" 1) (integer) 1\n 2) (integer) 2\n 3) (integer) 3\n 4) (integer) 4\n 5) (integer) 5\n" +
				" 6) (integer) 6\n 7) (integer) 7\n 8) (integer) 8\n 9) (integer) 9\n" +
				"10) 1) (integer) 1\n    2) 1) (integer) 2\n       2) (integer) 3\n",
		},
		{
			"map",
			resp.Value{Kind: resp.Map, Elems: []resp.Value{resp.Str("f"), resp.Str("v"), resp.Str("g"), resp.Arr(resp.Int(1), resp.Int(2))}},
			"1# \"f\" => \"v\"\n2# \"g\" => 1) (integer) 1\n   2) (integer) 2\n",
		},
		{"set", resp.Value{Kind: resp.Set, Elems: []resp.Value{resp.Str("a")}}, "1~ \"a\"\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Format(tt.v); got != tt.want {
				t.Errorf("Format(%v) = %q; want %q", tt.v, got, tt.want)
			}
		})
	}
}

// TestShownWriter checks the cut of long output, written at once and one
// byte at a time: where a write ends must not change what is shown.
func TestShownWriter(t *testing.T) {
	long := strings.Repeat("line\n", 10)
	for _, tt := range []struct {
		name               string
		out                string
		maxLines, maxBytes int
		want               string
	}{
		{"fits", "a\nb\n", 2, 100, "a\nb\n"},
		{"too many lines", long, 3, 1000, "line\nline\nline\n... (reply cut by the playground: 7 more lines, 35 more bytes)\n"},
		{"too many bytes", long, 100, 12, "line\nline\n... (reply cut by the playground: 8 more lines, 40 more bytes)\n"},
		{"one long line", "ab\n" + strings.Repeat("x", 50) + "\ncd\n", 100, 20, "ab\n... (reply cut by the playground: 2 more lines, 54 more bytes)\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newShownWriter(tt.maxLines, tt.maxBytes)
			w.WriteString(tt.out)
			if got := w.String(); got != tt.want {
				t.Errorf("shownWriter(%q, %d, %d) = %q; want %q", tt.out, tt.maxLines, tt.maxBytes, got, tt.want)
			}
			w = newShownWriter(tt.maxLines, tt.maxBytes)
			for i := 0; i < len(tt.out); i++ {
				w.WriteByte(tt.out[i])
			}
			if got := w.String(); got != tt.want {
				t.Errorf("shownWriter(%q, %d, %d) byte by byte = %q; want %q", tt.out, tt.maxLines, tt.maxBytes, got, tt.want)
			}
		})
	}
}

// FuzzFormat feeds arbitrary bytes to the RESP parser and formats whatever
// parses; neither may panic, and a bulk string must come out quoted on one
// line.
func FuzzFormat(f *testing.F) {
	for _, s := range []string{"+OK\r\n", "*2\r\n$1\r\na\r\n*1\r\n:1\r\n", "$-1\r\n", "%1\r\n+a\r\n+b\r\n", "$3\r\na\nb\r\n", "*-1\r\n", "*99999999\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, _, err := resp.Parse(b)
		if err != nil {
			return
		}
		out := Format(v)
		if !strings.HasSuffix(out, "\n") {
			t.Errorf("Format(%v) = %q; want a final newline", v, out)
		}
		if v.Kind == resp.Bulk && strings.Count(out, "\n") != 1 {
			t.Errorf("Format(%v) = %q; want one line", v, out)
		}
	})
}
