package playground

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// values is " v0 v1 ... v(n-1)" with prefix p.
func values(p string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, " %s%d", p, i)
	}
	return b.String()
}

// TestParityLPUSHMany compares with redis-cli + Redis 7.0.15 LPUSH and
// LPUSHX of hundreds of values on lists of hundreds, which the sandbox
// builds in one go rather than value by value (lpush.go): the order, the
// length, the TTL kept, and the errors of a key of another type.
func TestParityLPUSHMany(t *testing.T) {
	a := func(line string) parityCase { return parityCase{client: ClientA, line: line} }
	b := func(line string) parityCase { return parityCase{client: ClientB, line: line} }
	runParityCases(t, []parityCase{
		a("LPUSH l" + values("a", 400)),
		a("LRANGE l 0 4"),
		a("LRANGE l -3 -1"),
		a("EXPIRE l 1000"),
		b("LPUSH l" + values("b", 300)),
		a("TTL l"),
		a("LLEN l"),
		a("LRANGE l 0 2"),
		a("LINDEX l 300"),
		a("LPUSHX l" + values("c", 300)),
		a("LPUSHX nolist" + values("c", 300)),
		a("EXISTS nolist"),
		a("SET s x"),
		a("LPUSH s" + values("d", 300)),
		a("LPUSHX s" + values("d", 300)),
		a("WATCH l"),
		b("LPUSH l" + values("e", 300)),
		a("MULTI"),
		a("LLEN l"),
		a("EXEC"),
		a("MULTI"),
		a("LPUSH l" + values("f", 300)),
		a("LPUSH s" + values("f", 300)),
		a("EXEC"),
		a(`EVAL "local a = {} for i = 1, 7999 do a[i] = i end return redis.call('LPUSH', KEYS[1], unpack(a))" 1 l`),
		a("LRANGE l 0 2"),
		a("LLEN l"),
		a("DEL l"),
	})
}

// BenchmarkLPUSHLongList is one LPUSH of 990 values on a list of 20,000.
func BenchmarkLPUSHLongList(b *testing.B) {
	s, err := NewSandbox(SandboxOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	line := "LPUSH l" + strings.Repeat(" 1", 990)
	for b.Loop() {
		b.StopTimer()
		s.Exec(ctx, ClientA, "DEL l")
		for range 20 {
			s.Exec(ctx, ClientA, "RPUSH l"+strings.Repeat(" 1", 1000))
		}
		b.StartTimer()
		if res, _ := s.Exec(ctx, ClientA, line); res.Output != "(integer) 20990" {
			b.Fatal(res.Output)
		}
	}
}
