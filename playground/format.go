package playground

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/locklab/locklab/resp"
)

// Format renders a reply as redis-cli --no-raw prints it in a terminal
// (cliFormatReplyTTY in redis-cli.c), including the final newline: "OK\n",
// "(integer) 1\n", "\"3f9a1c\"\n", "1) \"a\"\n2) \"b\"\n" and so on.
func Format(v resp.Value) string {
	var b strings.Builder
	formatTTY(&b, v, "")
	return b.String()
}

func formatTTY(b *strings.Builder, v resp.Value, prefix string) {
	switch v.Kind {
	case resp.Error:
		b.WriteString("(error) ")
		b.WriteString(v.Str)
		b.WriteByte('\n')
	case resp.Status:
		b.WriteString(v.Str)
		b.WriteByte('\n')
	case resp.Integer:
		b.WriteString("(integer) ")
		b.WriteString(strconv.FormatInt(v.Int, 10))
		b.WriteByte('\n')
	case resp.Double:
		b.WriteString("(double) ")
		b.WriteString(v.Str)
		b.WriteByte('\n')
	case resp.Bulk:
		b.WriteString(Quote(v.Str))
		b.WriteByte('\n')
	case resp.Bool:
		if v.Int != 0 {
			b.WriteString("(true)\n")
		} else {
			b.WriteString("(false)\n")
		}
	case resp.Array, resp.Map, resp.Set:
		formatAggregate(b, v, prefix)
	default:
		b.WriteString("(nil)\n")
	}
}

func formatAggregate(b *strings.Builder, v resp.Value, prefix string) {
	if len(v.Elems) == 0 {
		switch v.Kind {
		case resp.Map:
			b.WriteString("(empty hash)\n")
		case resp.Set:
			b.WriteString("(empty set)\n")
		default:
			b.WriteString("(empty array)\n")
		}
		return
	}
	n := len(v.Elems)
	sep := ')'
	switch v.Kind {
	case resp.Map:
		n /= 2
		sep = '#'
	case resp.Set:
		sep = '~'
	}
	idxlen := len(strconv.Itoa(n))
	// Nested replies are indented by the width of the index plus ") ".
	inner := prefix + strings.Repeat(" ", idxlen+2)
	for i := 0; i < len(v.Elems); i++ {
		human := i + 1
		if v.Kind == resp.Map {
			human = i/2 + 1
		}
		// The first element follows the parent's index on the same line.
		if i > 0 {
			b.WriteString(prefix)
		}
		fmt.Fprintf(b, "%*d%c ", idxlen, human, sep)
		if v.Kind != resp.Map || i+1 == len(v.Elems) {
			formatTTY(b, v.Elems[i], inner)
			continue
		}
		// A map entry prints as "key => value" on one line.
		var key strings.Builder
		formatTTY(&key, v.Elems[i], inner)
		b.WriteString(strings.TrimSuffix(key.String(), "\n"))
		b.WriteString(" => ")
		i++
		formatTTY(b, v.Elems[i], inner)
	}
}

// Quote renders s as redis-cli does (sdscatrepr): in double quotes, with \\
// and \" escaped, \n \r \t \a \b as such, other bytes outside printable
// ASCII as \xHH.
func Quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\', '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		default:
			if c >= 0x20 && c < 0x7f {
				b.WriteByte(c)
			} else {
				fmt.Fprintf(&b, `\x%02x`, c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// truncateOutput keeps at most maxLines lines and maxBytes bytes of out and,
// when it cuts, ends with a line saying how much was left out. Long replies
// are cut so that a KEYS * on a full sandbox or a script returning a huge
// table cannot flood the learner's page.
func truncateOutput(out string, maxLines, maxBytes int) string {
	lines := strings.Count(out, "\n")
	if lines <= maxLines && len(out) <= maxBytes {
		return out
	}
	cut, kept := 0, 0
	for kept < maxLines {
		i := strings.IndexByte(out[cut:], '\n')
		if i < 0 || cut+i+1 > maxBytes {
			break
		}
		cut += i + 1
		kept++
	}
	return fmt.Sprintf("%s... (reply cut by the playground: %d more lines, %d more bytes)\n",
		out[:cut], lines-kept, len(out)-cut)
}
