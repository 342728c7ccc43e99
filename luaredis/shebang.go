package luaredis

import (
	"strconv"
	"strings"
)

// Redis 7 reads a first line starting with #! as the script's shebang:
// "#!lua" and options, of which only flags=a,b,... is known. The flags
// change how the script may run; in a sandbox only no-writes does
// anything (the script runs as EVAL_RO runs one), as the others are about
// memory limits, replicas and clusters. The shebang line is not Lua: the
// body after it is compiled, from its newline on, so that line numbers
// stay the script's.

// scriptFlags are the shebang flags of a script.
type scriptFlags struct {
	shebang  bool // the script has one: it is not in EVAL's compatible mode
	noWrites bool
}

// shebangFlags are the flags Redis 7.0 knows (scripts_flags_def).
var shebangFlags = []string{"no-writes", "allow-oom", "allow-stale", "no-cluster", "allow-cross-slot-keys"}

// shebangError is a script whose shebang Redis refuses; its message has
// no "Error compiling script" before it.
type shebangError struct{ msg string }

func (e *shebangError) Error() string { return e.msg }

// parseShebang is Redis's evalExtractShebangFlags: it returns the flags
// and the length of the shebang line, without its newline (0 without a
// shebang).
func parseShebang(src string) (scriptFlags, int, error) {
	if !strings.HasPrefix(src, "#!") {
		return scriptFlags{}, 0, nil
	}
	end := strings.IndexByte(src, '\n')
	if end < 0 {
		return scriptFlags{}, 0, &shebangError{"ERR Invalid script shebang"}
	}
	parts, ok := splitArgs(src[:end])
	if !ok || len(parts) == 0 {
		return scriptFlags{}, 0, &shebangError{"ERR Invalid engine in script shebang"}
	}
	if parts[0] != "#!lua" {
		return scriptFlags{}, 0, &shebangError{"ERR Unexpected engine in script shebang: " + parts[0]}
	}
	f := scriptFlags{shebang: true}
	for _, p := range parts[1:] {
		list, ok := strings.CutPrefix(p, "flags=")
		if !ok {
			return scriptFlags{}, 0, &shebangError{"ERR Unknown lua shebang option: " + p}
		}
		if list == "" {
			continue
		}
		for _, flag := range strings.Split(list, ",") {
			known := false
			for _, k := range shebangFlags {
				known = known || flag == k
			}
			if !known {
				return scriptFlags{}, 0, &shebangError{"ERR Unexpected flag in script shebang: " + flag}
			}
			f.noWrites = f.noWrites || flag == "no-writes"
		}
	}
	return f, end, nil
}

// splitArgs is Redis's sdssplitargs: words apart by spaces, in double
// quotes (with \n, \r, \t, \b, \a, \xHH and \<char> escapes) or single
// quotes (with \'); a closing quote must end its word. It is not ok for
// an unclosed quote or a quote followed by more of its word.
func splitArgs(line string) ([]string, bool) {
	var out []string
	i := 0
	for {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i >= len(line) {
			return out, true
		}
		var b strings.Builder
		inq, insq := false, false
		for done := false; !done; {
			switch {
			case inq:
				if i >= len(line) {
					return nil, false
				}
				c := line[i]
				switch {
				case c == '\\' && i+3 < len(line) && line[i+1] == 'x' && isHex(line[i+2]) && isHex(line[i+3]):
					n, _ := strconv.ParseUint(line[i+2:i+4], 16, 8)
					b.WriteByte(byte(n))
					i += 3
				case c == '\\' && i+1 < len(line):
					i++
					switch e := line[i]; e {
					case 'n':
						b.WriteByte('\n')
					case 'r':
						b.WriteByte('\r')
					case 't':
						b.WriteByte('\t')
					case 'b':
						b.WriteByte('\b')
					case 'a':
						b.WriteByte('\a')
					default:
						b.WriteByte(e)
					}
				case c == '"':
					if i+1 < len(line) && !isSpace(line[i+1]) {
						return nil, false
					}
					done = true
				default:
					b.WriteByte(c)
				}
			case insq:
				if i >= len(line) {
					return nil, false
				}
				c := line[i]
				switch {
				case c == '\\' && i+1 < len(line) && line[i+1] == '\'':
					i++
					b.WriteByte('\'')
				case c == '\'':
					if i+1 < len(line) && !isSpace(line[i+1]) {
						return nil, false
					}
					done = true
				default:
					b.WriteByte(c)
				}
			default:
				if i >= len(line) {
					done = true
					continue
				}
				switch c := line[i]; {
				case isSpace(c):
					done = true
				case c == '"':
					inq = true
				case c == '\'':
					insq = true
				default:
					b.WriteByte(c)
				}
			}
			if i < len(line) {
				i++
			}
		}
		out = append(out, b.String())
	}
}

// isSpace is C's isspace.
func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f'
}
