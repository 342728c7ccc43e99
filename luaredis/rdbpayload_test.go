package luaredis

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/locklab/locklab/internal/redistest"
)

// rdbTestStrings are strings of every kind LZF meets: too short to
// compress, incompressible, runs, repeats near and far (past the 8 KiB a
// reference reaches), long matches (past the 264 bytes one holds), and
// library code.
func rdbTestStrings() []string {
	rng := rand.New(rand.NewPCG(7, 11))
	random := func(n int, alphabet string) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	bin := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return string(b)
	}
	lib := "#!lua name=lib1\nlocal function add1(a)\n  return a + 1\nend\nredis.register_function('f1', function(keys, args) return add1(1) end)\nredis.register_function('f2', function(keys, args) return add1(2) end)\n"
	out := []string{
		"#!lua name=x\n", "0123456789abcdefghij", "0123456789abcdefghijk",
		"aaaaaaaaaaaaaaaaaaaaaaaaa", strings.Repeat("a", 20), strings.Repeat("a", 21), strings.Repeat("a", 22),
		strings.Repeat("a", 264), strings.Repeat("a", 265), strings.Repeat("a", 5000),
		strings.Repeat("ab", 100), strings.Repeat("abc", 1000), strings.Repeat("hello world ", 300),
		lib, strings.Repeat(lib, 40),
		random(100, "ab"), random(1000, "abc"), random(20000, "abcd"), random(3000, "abcdefghijklmnopqrstuvwxyz"),
		bin(50), bin(2000), bin(100000),
		random(9000, "xy") + random(9000, "pq") + random(9000, "xy"),
	}
	for n := 17; n < 40; n++ { // matches ending at or near maxLen
		out = append(out, strings.Repeat("q", n), "z"+strings.Repeat("q", n), strings.Repeat("qr", n/2)+"s")
	}
	for range 200 {
		out = append(out, random(21+rng.IntN(600), "abcde"[:1+rng.IntN(5)]))
	}
	return out
}

// TestRDBStringsAsRedisDumps compares appendRDBString, and so LZF, with
// what a real Redis 7.0 writes: DUMP of a string key is its type byte
// (0), the string as rdbSaveRawString writes it, and the footer.
// Each string goes to a key of its own and stays: liblzf does not clear
// its hash table between calls, so that no string sits where an earlier
// one did and could meet that string's positions.
func TestRDBStringsAsRedisDumps(t *testing.T) {
	addr := redistest.Start(t)
	rc := dialRedis(t, addr)
	compressed := 0
	for i, s := range rdbTestStrings() {
		key := fmt.Sprintf("k%d", i)
		rc.do("SET", key, s)
		got := rc.do("DUMP", key)
		want := appendFooter(appendRDBString([]byte{0}, s))
		if got.Str != string(want) {
			t.Fatalf("string %d (%d bytes, %q...): Redis dumps\n%q\nwe write\n%q", i, len(s), s[:min(len(s), 30)], got.Str, want)
		}
		if len(want) > 1 && want[1] == rdbEncLZF {
			compressed++
		}
	}
	if compressed < 100 {
		t.Errorf("only %d strings were compressed; the test means to cover LZF", compressed)
	}
}

// TestRedisCRC64 checks the CRC-64 with the check value of its
// specification, and the footer with one Redis wrote.
func TestRedisCRC64(t *testing.T) {
	if got := redisCRC64([]byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Errorf("crc64(123456789) = %#x, want 0xe9c6d914c4b8d9ca", got)
	}
	// FUNCTION DUMP of no libraries on Redis 7.0.15.
	if got, want := string(appendFooter(nil)), "\n\x00]\x9b\\@\x0f\x7f\xa2\xda"; got != want {
		t.Errorf("empty payload %q, want %q", got, want)
	}
	if !footerOK(appendFooter([]byte("x"))) || footerOK([]byte("x\n\x00]\x9b\\@\x0f\x7f\xa2\xda")) || footerOK([]byte("short")) {
		t.Error("footerOK accepts a wrong checksum or refuses a right one")
	}
	if footerOK(binaryVersion(11)) || !footerOK(binaryVersion(9)) {
		t.Error("footerOK takes a version newer than Redis 7.0's, or refuses an older one")
	}
}

// binaryVersion is an empty payload of RDB version v.
func binaryVersion(v byte) []byte {
	b := []byte{v, 0}
	return binary.LittleEndian.AppendUint64(b, redisCRC64(b))
}

// TestLZFRoundTrip decompresses what lzfCompress made, and checks that
// decompression never makes more than it is asked for, whatever the
// input.
func TestLZFRoundTrip(t *testing.T) {
	for i, s := range rdbTestStrings() {
		c, ok := lzfCompress([]byte(s), len(s)-4)
		if !ok {
			continue
		}
		out, st := lzfDecompress(c, len(s))
		if st != lzfExact || string(out) != s {
			t.Fatalf("string %d: round trip gives status %d, %d bytes", i, st, len(out))
		}
		if _, st := lzfDecompress(c, len(s)-1); st != lzfOver {
			t.Errorf("string %d: asked for one byte fewer, status %d, want lzfOver", i, st)
		}
		if _, st := lzfDecompress(c, len(s)+1); st != lzfShort {
			t.Errorf("string %d: asked for one byte more, status %d, want lzfShort", i, st)
		}
	}
	for _, bad := range [][]byte{{0x20, 0}, {0x05, 'a'}, {0xe0}, {0x00, 'a', 0x21, 0x05}} {
		if out, st := lzfDecompress(bad, 100); st != lzfCorrupt {
			t.Errorf("lzfDecompress(%q) = %q, status %d; want lzfCorrupt", bad, out, st)
		}
	}
	// A reference that repeats one byte 264 times, 1000 times over,
	// claims 264,000 bytes from 3,002: asked for 1,000 it stops there.
	bomb := append([]byte{0x00, 'a'}, bytes.Repeat([]byte{0xe0, 0xff, 0x00}, 1000)...)
	if out, st := lzfDecompress(bomb, 1000); st != lzfOver || out != nil {
		t.Errorf("bomb: %d bytes, status %d; want nothing and lzfOver", len(out), st)
	}
	if out, st := lzfDecompress(bomb, 1+1000*264); st != lzfExact || len(out) != 1+1000*264 {
		t.Errorf("bomb in full: %d bytes, status %d", len(out), st)
	}
}
