package playground

import (
	"bytes"
	"fmt"
	"io"
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

// sink is what formatTTY writes to: a strings.Builder, or a shownWriter
// that keeps only what is shown.
type sink interface {
	io.Writer
	io.StringWriter
	io.ByteWriter
}

func formatTTY(b sink, v resp.Value, prefix string) {
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

func formatAggregate(b sink, v resp.Value, prefix string) {
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

// shownWriter keeps at most maxLines whole lines and maxBytes bytes of
// what is written to it and counts the rest, so that a long reply (a KEYS
// * on a full sandbox, a script returning a huge table) neither floods the
// learner's page nor is ever held whole: it is cut as it is formatted.
// String ends with a line saying how much was left out.
type shownWriter struct {
	maxLines, maxBytes int
	kept               strings.Builder // the whole lines shown
	line               []byte          // the line being written, while it may still fit
	keptLines          int
	cut                bool // a line did not fit: the rest is only counted
	moreLines          int  // newlines left out
	moreBytes          int  // bytes left out
}

func newShownWriter(maxLines, maxBytes int) *shownWriter {
	return &shownWriter{maxLines: maxLines, maxBytes: maxBytes}
}

func (w *shownWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if w.cut {
			w.moreBytes += len(p)
			w.moreLines += bytes.Count(p, []byte{'\n'})
			break
		}
		i := bytes.IndexByte(p, '\n')
		part := p
		if i >= 0 {
			part = p[:i+1]
		}
		if w.keptLines >= w.maxLines || w.kept.Len()+len(w.line)+len(part) > w.maxBytes {
			// This line cannot be shown whole: from here on, only count.
			w.cut = true
			w.moreBytes += len(w.line)
			w.line = nil
			continue
		}
		w.line = append(w.line, part...)
		p = p[len(part):]
		if i >= 0 {
			w.kept.Write(w.line)
			w.line = w.line[:0]
			w.keptLines++
		}
	}
	return n, nil
}

func (w *shownWriter) WriteString(s string) (int, error) {
	if w.cut { // the common case of a long reply: no copy
		w.moreBytes += len(s)
		w.moreLines += strings.Count(s, "\n")
		return len(s), nil
	}
	return w.Write([]byte(s))
}

func (w *shownWriter) WriteByte(c byte) error {
	_, err := w.Write([]byte{c})
	return err
}

// String is what is shown: the lines kept and, when some were left out, a
// line saying how many.
func (w *shownWriter) String() string {
	if !w.cut {
		return w.kept.String() + string(w.line)
	}
	return fmt.Sprintf("%s... (reply cut by the playground: %d more lines, %d more bytes)\n",
		w.kept.String(), w.moreLines, w.moreBytes)
}
