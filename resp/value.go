// Package resp models the replies Redis commands give and reads and writes
// them in the Redis serialization protocol (RESP), which is how miniredis
// hands replies back. The playground formats these values as redis-cli
// does; the race engine and package luaredis build them as replies.
package resp

import "strconv"

// Kind says which sort of reply a Value is.
type Kind uint8

// The reply kinds. RESP2 only produces Status through Array; the RESP3 kinds
// are here so that a formatter can show them, not because the playground
// speaks RESP3.
const (
	Status  Kind = iota + 1 // +OK
	Error                   // -ERR ...
	Integer                 // :1
	Bulk                    // $3\r\nabc
	Nil                     // $-1 or *-1
	Array                   // *2 ...
	Double                  // ,1.5 (RESP3)
	Map                     // %1 ... (RESP3), Elems holds keys and values in turn
	Set                     // ~2 ... (RESP3)
	Bool                    // #t (RESP3), Int is 0 or 1
)

// Value is one reply: a leaf (Str or Int) or an aggregate (Elems).
type Value struct {
	Kind  Kind
	Str   string  // Status, Error and Bulk text; Double as text
	Int   int64   // Integer, Bool
	Elems []Value // Array, Map, Set
}

// OK returns the +OK status reply.
func OK() Value { return Value{Kind: Status, Str: "OK"} }

// Null returns the nil reply.
func Null() Value { return Value{Kind: Nil} }

// Err returns an error reply with the message msg (with its code, as in
// "ERR syntax error").
func Err(msg string) Value { return Value{Kind: Error, Str: msg} }

// Int returns an integer reply.
func Int(n int64) Value { return Value{Kind: Integer, Int: n} }

// Str returns a bulk string reply.
func Str(s string) Value { return Value{Kind: Bulk, Str: s} }

// StatusValue returns a status reply such as +QUEUED.
func StatusValue(s string) Value { return Value{Kind: Status, Str: s} }

// Arr returns an array reply.
func Arr(elems ...Value) Value {
	if elems == nil {
		elems = []Value{}
	}
	return Value{Kind: Array, Elems: elems}
}

// IsError reports whether v is an error reply.
func (v Value) IsError() bool { return v.Kind == Error }

// String renders v compactly for test failure messages; it is not what
// redis-cli prints.
func (v Value) String() string {
	switch v.Kind {
	case Status:
		return "+" + v.Str
	case Error:
		return "-" + v.Str
	case Integer:
		return ":" + strconv.FormatInt(v.Int, 10)
	case Bulk:
		return strconv.Quote(v.Str)
	case Nil:
		return "nil"
	case Double:
		return "," + v.Str
	case Bool:
		if v.Int != 0 {
			return "#t"
		}
		return "#f"
	}
	s := "["
	for i, e := range v.Elems {
		if i > 0 {
			s += " "
		}
		s += e.String()
	}
	return s + "]"
}
