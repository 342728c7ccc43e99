package playground

import (
	"fmt"
	"strings"
	"testing"

	"github.com/locklab/locklab/internal/testenv"
)

// adversarialShapes are lines built to make a tokenizer work hard: many
// empty quoted arguments (each once cost a buffer the size of the rest of
// the line), many escapes, quotes of both kinds nested in each other, and
// many one-byte words. Each is made n bytes long or a little more.
var adversarialShapes = []struct {
	name string
	unit string
}{
	{"empty single quotes", "'' "},
	{"empty double quotes", `"" `},
	{"hex escapes", `"\x41\x42\x43" `},
	{"backslash escapes", `"\n\t\"\\" `},
	{"single quote escapes", `'\'\'\'' `},
	{"nested quotes", `"'\"'\"'" '"\'"\'"' `},
	{"quote mid-word", `a"b" `},
	{"one-byte words", "a "},
	{"one long quoted argument", `"`},
}

// adversarialLine repeats unit to at least n bytes; the unit `"` stands
// for one quoted argument of n bytes.
func adversarialLine(unit string, n int) string {
	if unit == `"` {
		return `"` + strings.Repeat("a", n) + `"`
	}
	return strings.Repeat(unit, n/len(unit)+1)
}

// TestTokenizeCostIsLinear checks, without timing anything, that what
// Tokenize allocates grows with the line, not with its square: every
// adversarial shape at the JSON and form limits allocates a small multiple
// of the line's length. The quadratic tokenizer allocated gigabytes for
// the 64 KiB empty-quotes line.
func TestTokenizeCostIsLinear(t *testing.T) {
	for _, shape := range adversarialShapes {
		for _, n := range []int{64 << 10, 256 << 10} {
			t.Run(fmt.Sprintf("%s/%d", shape.name, n), func(t *testing.T) {
				line := adversarialLine(shape.unit, n)
				var err error
				got := testenv.Allocated(func() { _, err = Tokenize(line) })
				if err != nil {
					t.Fatalf("Tokenize(%s x %d) error = %v", shape.name, n, err)
				}
				// The arguments' strings, their headers in the slice (16 bytes
				// each, grown by append about fourfold over) and one shared buffer.
				if limit := uint64(64 * len(line)); got > limit {
					t.Errorf("Tokenize(%s, %d bytes) allocated %d bytes; want at most %d (64 per byte of input)", shape.name, len(line), got, limit)
				}
			})
		}
	}
}

// TestTokenizeAdversarialRoundTrip keeps the adversarial shapes as
// regression cases for what FuzzTokenize checks: what Tokenize splits can
// be quoted back and split again into the same arguments.
func TestTokenizeAdversarialRoundTrip(t *testing.T) {
	for _, shape := range adversarialShapes {
		line := adversarialLine(shape.unit, 4<<10)
		args, err := Tokenize(line)
		if err != nil {
			t.Fatalf("Tokenize(%s) error = %v", shape.name, err)
		}
		quoted := make([]string, len(args))
		for i, a := range args {
			quoted[i] = Quote(a)
		}
		again, err := Tokenize(strings.Join(quoted, " "))
		if err != nil || strings.Join(again, "\x00") != strings.Join(args, "\x00") {
			t.Errorf("%s: %d arguments re-split as %d (%v)", shape.name, len(args), len(again), err)
		}
	}
}

// BenchmarkTokenizeAdversarial tokenizes each adversarial shape at sizes
// from 4 KiB to 256 KiB: ns/op and B/op grow by about 4x a step when the
// cost is linear (they grew 16x a step when it was quadratic). Compare the
// sizes with benchstat or by eye: go test ./playground -run '^$' -bench TokenizeAdversarial.
func BenchmarkTokenizeAdversarial(b *testing.B) {
	for _, shape := range adversarialShapes {
		for _, n := range []int{4 << 10, 16 << 10, 64 << 10, 256 << 10} {
			line := adversarialLine(shape.unit, n)
			b.Run(fmt.Sprintf("%s/%dKiB", shape.name, n>>10), func(b *testing.B) {
				b.SetBytes(int64(len(line)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := Tokenize(line); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
