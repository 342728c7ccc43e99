package resp

import (
	"strconv"
	"strings"
)

// AppendRESP appends v to dst in RESP2, the protocol a redis-cli without
// HELLO 3 speaks. RESP3 kinds are lowered as Redis lowers them for RESP2
// clients: doubles become bulk strings, maps and sets arrays, booleans 1 or
// nil. Newlines in status and error text become spaces, as Redis does, so
// that the reply stays one line.
func (v Value) AppendRESP(dst []byte) []byte {
	switch v.Kind {
	case Status:
		dst = append(dst, '+')
		dst = append(dst, OneLine(v.Str)...)
	case Error:
		dst = append(dst, '-')
		dst = append(dst, OneLine(v.Str)...)
	case Integer:
		dst = append(dst, ':')
		dst = strconv.AppendInt(dst, v.Int, 10)
	case Bulk, Double:
		dst = append(dst, '$')
		dst = strconv.AppendInt(dst, int64(len(v.Str)), 10)
		dst = append(dst, "\r\n"...)
		dst = append(dst, v.Str...)
	case Bool:
		if v.Int != 0 {
			dst = append(dst, ":1"...)
		} else {
			dst = append(dst, "$-1"...)
		}
	case Array, Map, Set:
		dst = append(dst, '*')
		dst = strconv.AppendInt(dst, int64(len(v.Elems)), 10)
		dst = append(dst, "\r\n"...)
		for _, e := range v.Elems {
			dst = e.AppendRESP(dst)
		}
		return dst
	default:
		dst = append(dst, "$-1"...)
	}
	return append(dst, "\r\n"...)
}

// OneLine is an error message as Redis sends it: a carriage return or
// newline in it (from a client's argument) becomes a space, so that the
// error stays one line of the protocol.
func OneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, s)
}
