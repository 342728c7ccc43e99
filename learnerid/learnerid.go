// Package learnerid is the one rule for learner ids: the random id in a
// learner's cookie under which the store keeps their progress, sandbox
// copies and workshop answers. The web layer makes them and checks the
// cookie with Valid; the store checks every id it is given with the same
// rule, so that no id the web layer would refuse can name stored data.
package learnerid

import (
	"crypto/rand"
	"encoding/base64"
)

// Len is the length of an id: 16 random bytes (128 bits, too many to
// guess) in unpadded URL-safe base64.
const Len = 22

// New returns a fresh random id.
func New() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b)
}

// Valid reports whether id has the shape New gives: Len characters of
// unpadded URL-safe base64. It runs on every request, so it is a plain
// loop rather than a regular expression.
func Valid(id string) bool {
	if len(id) != Len {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_':
		default:
			return false
		}
	}
	return true
}
