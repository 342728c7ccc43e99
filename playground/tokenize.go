package playground

import (
	"errors"
	"strings"
)

// ErrUnbalancedQuotes is returned by Tokenize for a line redis-cli would
// refuse with "Invalid argument(s)": an unclosed quote, or a closing quote
// followed by something other than a space.
var ErrUnbalancedQuotes = errors.New("playground: unbalanced quotes")

// Tokenize splits a line into arguments the way redis-cli does
// (sdssplitargs in Redis's sds.c). Arguments are separated by blanks;
// "double quotes" understand \n \r \t \b \a \xHH and a backslash before any
// other character; 'single quotes' understand only \'. Quotes can start in
// the middle of an argument ("a"b is not allowed, but a"b c" is ab c). A
// closing quote must be followed by a blank or the end of the line. A NUL
// byte ends the line, as it does for the C code. A blank line gives no
// arguments and no error.
//
// Its cost is linear in the line's length: quoted arguments are built in
// one buffer that all of them share, so a line of many short quoted
// arguments costs no more than one long one.
func Tokenize(line string) ([]string, error) {
	return tokenize(line, -1)
}

// tokenize is Tokenize that stops after the first limit arguments (all of
// them if limit < 0), for callers that only need the command's name.
func tokenize(line string, limit int) ([]string, error) {
	if i := strings.IndexByte(line, 0); i >= 0 {
		line = line[:i]
	}
	args := make([]string, 0, argsBound(line, limit))
	// buf holds the argument being built; it is reused for the next one
	// once the argument is copied out, so it only grows to the longest.
	var buf []byte
	p := 0
	for {
		for p < len(line) && isSpace(line[p]) {
			p++
		}
		if p == len(line) || len(args) == limit {
			if len(args) == 0 {
				return nil, nil // a blank line, as before
			}
			return args, nil
		}
		// Fast path: a word without quotes is a substring of the line.
		end := p
		for end < len(line) && !isTokenEnd(line[end]) && line[end] != '"' && line[end] != '\'' {
			end++
		}
		if end == len(line) || isTokenEnd(line[end]) {
			args = append(args, line[p:end])
			p = end
			if p < len(line) {
				p++
			}
			continue
		}
		cur := buf[:0]
		inq, insq := false, false
	token:
		for {
			var c byte // 0 stands for the end of the line, as in C
			if p < len(line) {
				c = line[p]
			}
			switch {
			case inq:
				switch {
				case c == '\\' && p+3 < len(line) && line[p+1] == 'x' && isHex(line[p+2]) && isHex(line[p+3]):
					cur = append(cur, unhex(line[p+2])<<4|unhex(line[p+3]))
					p += 3
				case c == '\\' && p+1 < len(line):
					p++
					cur = append(cur, unescape(line[p]))
				case c == '"':
					if p+1 < len(line) && !isSpace(line[p+1]) {
						return nil, ErrUnbalancedQuotes
					}
					p++
					break token
				case c == 0:
					return nil, ErrUnbalancedQuotes
				default:
					cur = append(cur, c)
				}
			case insq:
				switch {
				case c == '\\' && p+1 < len(line) && line[p+1] == '\'':
					p++
					cur = append(cur, '\'')
				case c == '\'':
					if p+1 < len(line) && !isSpace(line[p+1]) {
						return nil, ErrUnbalancedQuotes
					}
					p++
					break token
				case c == 0:
					return nil, ErrUnbalancedQuotes
				default:
					cur = append(cur, c)
				}
			default:
				switch c {
				case ' ', '\n', '\r', '\t', 0:
					if c != 0 {
						p++
					}
					break token
				case '"':
					inq = true
				case '\'':
					insq = true
				default:
					cur = append(cur, c)
				}
			}
			p++
		}
		args = append(args, string(cur))
		buf = cur
	}
}

// argsBound is at most how many arguments tokenize finds in line, so
// that it allocates their slice once: an argument starts at a non-blank
// byte at the start of the line or after a blank, so there are no more
// arguments than such bytes (a quoted argument with blanks has fewer).
func argsBound(line string, limit int) int {
	n := 0
	for i := 0; i < len(line) && n != limit; i++ {
		if !isSpace(line[i]) && (i == 0 || isSpace(line[i-1])) {
			n++
		}
	}
	return n
}

// isTokenEnd reports whether c ends an unquoted argument: fewer bytes than
// isSpace, as sdssplitargs only stops at these four.
func isTokenEnd(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t'
}

// isSpace is C's isspace in the C locale.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'a':
		return '\a'
	}
	return c
}
