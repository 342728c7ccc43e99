package resp

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// ErrProtocol reports a reply that is not valid RESP.
var ErrProtocol = errors.New("resp: protocol error")

// maxDepth bounds how deeply Parse follows nested aggregates, so that a
// hostile or broken reply cannot exhaust the stack.
const maxDepth = 1000

// Parse reads one reply from the start of b and returns it with the bytes
// that follow it.
func Parse(b []byte) (Value, []byte, error) {
	return parse(b, 0)
}

func parse(b []byte, depth int) (Value, []byte, error) {
	if depth > maxDepth {
		return Value{}, nil, fmt.Errorf("%w: nested too deeply", ErrProtocol)
	}
	line, rest, err := readLine(b)
	if err != nil {
		return Value{}, nil, err
	}
	if len(line) == 0 {
		return Value{}, nil, fmt.Errorf("%w: empty line", ErrProtocol)
	}
	body := string(line[1:])
	switch line[0] {
	case '+':
		return Value{Kind: Status, Str: body}, rest, nil
	case '-':
		return Value{Kind: Error, Str: body}, rest, nil
	case ':':
		n, err := strconv.ParseInt(body, 10, 64)
		if err != nil {
			return Value{}, nil, fmt.Errorf("%w: bad integer %q", ErrProtocol, body)
		}
		return Value{Kind: Integer, Int: n}, rest, nil
	case ',':
		return Value{Kind: Double, Str: body}, rest, nil
	case '#':
		return Value{Kind: Bool, Int: boolInt(body == "t")}, rest, nil
	case '_':
		return Null(), rest, nil
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < -1 {
			return Value{}, nil, fmt.Errorf("%w: bad bulk length %q", ErrProtocol, body)
		}
		if n == -1 {
			return Null(), rest, nil
		}
		if len(rest) < n+2 || rest[n] != '\r' || rest[n+1] != '\n' {
			return Value{}, nil, fmt.Errorf("%w: short bulk string", ErrProtocol)
		}
		return Value{Kind: Bulk, Str: string(rest[:n])}, rest[n+2:], nil
	case '*', '~', '%', '>':
		n, err := strconv.Atoi(body)
		if err != nil || n < -1 {
			return Value{}, nil, fmt.Errorf("%w: bad aggregate length %q", ErrProtocol, body)
		}
		if n == -1 {
			return Null(), rest, nil
		}
		kind := Array
		switch line[0] {
		case '~':
			kind = Set
		case '%':
			kind = Map
			// Each element takes at least 4 bytes ("+\r\n" and a byte), so a
			// count beyond the data is refused before it is doubled (and
			// before it can overflow).
			if n > len(rest) {
				return Value{}, nil, fmt.Errorf("%w: aggregate longer than its data", ErrProtocol)
			}
			n *= 2
		}
		if n > len(rest) {
			return Value{}, nil, fmt.Errorf("%w: aggregate longer than its data", ErrProtocol)
		}
		v := Value{Kind: kind, Elems: make([]Value, n)}
		for i := range v.Elems {
			v.Elems[i], rest, err = parse(rest, depth+1)
			if err != nil {
				return Value{}, nil, err
			}
		}
		return v, rest, nil
	}
	return Value{}, nil, fmt.Errorf("%w: unknown type byte %q", ErrProtocol, line[0])
}

func readLine(b []byte) (line, rest []byte, err error) {
	i := bytes.Index(b, []byte("\r\n"))
	if i < 0 {
		return nil, nil, fmt.Errorf("%w: missing CRLF", ErrProtocol)
	}
	return b[:i], b[i+2:], nil
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
