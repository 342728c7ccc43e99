package playground

import (
	"context"
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/testenv"
)

// TestMirrorFollowsChanges types random commands, scripts that write,
// transactions, flushes and clock moves into a sandbox, applies the Changes
// of each to a Mirror, and checks after every line that the Mirror's
// Snapshot and its key listing are the sandbox's own. A write the tracking missed would show as
// a difference. It also checks that Writes grows with every change, as a
// Manager that shares sandboxes saves only when it does.
func TestMirrorFollowsChanges(t *testing.T) {
	n := 20_000
	if !testenv.SlowTier() {
		n = 2_000
	}
	names := allowedInSource(t)
	vocab := strings.Fields(`k l h s z k2 0 1 -1 2 3 10 1.5 a b c x y * NX XX GT LT PX EX KEEPTTL GET
		WITHSCORES LIMIT COUNT LEFT RIGHT BEFORE AFTER MIN MAX LOAD EXISTS FLUSH PERSIST CH 100 5000`)
	scripts := []string{
		`EVAL "redis.call('SET', KEYS[1], ARGV[1], 'PX', 3000) return redis.call('INCR', 'n')" 1 k v`,
		`EVAL "redis.call('RPUSH', 'l', 'a', 'b') redis.call('HSET', 'h', 'f', ARGV[1]) return 1" 0 v`,
		`EVAL "redis.call('DEL', 'k', 'l') return redis.call('ZADD', 'z', 2, 'b')" 0`,
		`EVAL "return redis.call('FLUSHDB')" 0`,
		`SCRIPT LOAD "return redis.call('SADD', 's', 'q')"`,
		`SCRIPT FLUSH`,
		`EVALSHA 0b9a1d3ef6dc3a11b1f5db0da5ac5c8d9d6c9d0e 0`,
		"MULTI", "EXEC", "DISCARD", "SET k v PX 1500", "PEXPIRE h 700", "RENAME k k2", "COPY l l2",
	}
	clock := newFakeClock()
	s := newTestSandbox(t, clock, Limits{Script: scriptLimitsForTests()})
	var m Mirror
	r := rand.New(rand.NewSource(2))
	for i := range n {
		var line string
		switch x := r.Intn(10); {
		case x < 3:
			line = scripts[r.Intn(len(scripts))]
		default:
			argv := []string{names[r.Intn(len(names))]}
			for range r.Intn(6) {
				argv = append(argv, vocab[r.Intn(len(vocab))])
			}
			line = strings.Join(argv, " ")
		}
		writes := s.Writes()
		s.Exec(context.Background(), ClientA, line)
		switch r.Intn(20) {
		case 0:
			s.Advance(time.Duration(r.Intn(2000)+1) * time.Millisecond)
		case 1:
			clock.Add(time.Duration(r.Intn(2000)) * time.Millisecond)
		}
		c, err := s.TakeChanges()
		if err != nil {
			t.Fatal(err)
		}
		if c.Changed() && s.Writes() == writes {
			t.Fatalf("after line %d %q: Writes() = %d as before, but the sandbox changed: %+v", i, line, writes, c)
		}
		m.Apply(c)
		want, _ := s.Snapshot()
		got := m.Snapshot(clock.Now())
		if !sameSnapshot(got, want) {
			t.Fatalf("after line %d %q the mirror has\n%+v\nthe sandbox\n%+v", i, line, got, want)
		}
		// The key inspector reads the mirror as it would the sandbox.
		wantKeys, _ := s.Keys()
		if gotKeys := m.Keys(clock.Now()); !reflect.DeepEqual(gotKeys, wantKeys) {
			t.Fatalf("after line %d %q the mirror lists\n%v\nthe sandbox\n%v", i, line, gotKeys, wantKeys)
		}
	}
	// The mirror restores the sandbox as it is.
	r2, err := RestoreSandbox(m.Snapshot(clock.Now()), SandboxOptions{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	want, _ := s.Keys()
	got, _ := r2.Keys()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("restored Keys() = %v; want %v", got, want)
	}
}

// sameSnapshot compares snapshots, keys in order, with values compared as
// sets where Redis has no order.
func sameSnapshot(a, b Snapshot) bool {
	if a.Offset != b.Offset || len(a.Keys) != len(b.Keys) || !reflect.DeepEqual(nilIfEmpty(a.Scripts), nilIfEmpty(b.Scripts)) {
		return false
	}
	for i := range a.Keys {
		x, y := a.Keys[i], b.Keys[i]
		if x.Key != y.Key || x.Type != y.Type || x.String != y.String ||
			!reflect.DeepEqual(nilIfEmpty(x.List), nilIfEmpty(y.List)) || !reflect.DeepEqual(nilIfEmpty(x.Set), nilIfEmpty(y.Set)) ||
			len(x.Hash) != len(y.Hash) || len(x.ZSet) != len(y.ZSet) ||
			len(x.Hash) > 0 && !reflect.DeepEqual(x.Hash, y.Hash) || len(x.ZSet) > 0 && !reflect.DeepEqual(x.ZSet, y.ZSet) {
			return false
		}
		// Both round TTLs up to a millisecond, from clocks a millisecond
		// apart at most.
		if (x.PTTLMS < 0) != (y.PTTLMS < 0) || x.PTTLMS-y.PTTLMS > 1 || y.PTTLMS-x.PTTLMS > 1 {
			return false
		}
	}
	return true
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

// TestTakeChanges checks what a few commands report: only the keys they
// wrote, deletions, a flush as a reset, scripts only when the cache
// changed, and nothing for reads.
func TestTakeChanges(t *testing.T) {
	clock := newFakeClock()
	s := newTestSandbox(t, clock, Limits{})
	take := func() Changes {
		t.Helper()
		c, err := s.TakeChanges()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	take() // a new sandbox reports itself empty
	exec := func(line string) {
		t.Helper()
		if _, err := s.Exec(context.Background(), ClientA, line); err != nil {
			t.Fatalf("Exec(%q): %v", line, err)
		}
	}
	exec("SET a 1")
	exec("SET b 2 PX 1500")
	if c := take(); c.Reset || len(c.Keys) != 2 || c.Keys[1].Key != "b" || c.Keys[1].PTTLMS != 1500 {
		t.Errorf("after two SETs: %+v; want keys a and b, b with 1500 ms", c)
	}
	exec("GET a")
	exec("KEYS *")
	if c := take(); c.Changed() {
		t.Errorf("after reads: %+v; want no change", c)
	}
	exec("DEL a")
	if c := take(); len(c.Keys) != 0 || !reflect.DeepEqual(c.Deleted, []string{"a"}) {
		t.Errorf("after DEL a: %+v; want a deleted", c)
	}
	exec(`EVAL "return redis.call('SET', 'c', 'x')" 0`)
	c := take()
	if len(c.Keys) != 1 || c.Keys[0].Key != "c" || !c.ScriptsChanged || len(c.Scripts) != 1 {
		t.Errorf("after EVAL: %+v; want key c and the script", c)
	}
	exec(`EVAL "return redis.call('SET', 'c', 'x')" 0`)
	if c := take(); c.ScriptsChanged {
		t.Errorf("after the same EVAL again: %+v; want the scripts unchanged", c)
	}
	exec("FLUSHDB")
	exec("SET d 1")
	if c := take(); !c.Reset || len(c.Keys) != 1 || c.Keys[0].Key != "d" {
		t.Errorf("after FLUSHDB and SET d: %+v; want a reset with d", c)
	}
	s.Advance(time.Second)
	if c := take(); !c.OffsetChanged || c.Offset != time.Second {
		t.Errorf("after Advance: %+v; want the offset", c)
	}
}
