package sim

import (
	"context"
	"testing"
	"time"

	"github.com/locklab/locklab/playground"
)

func TestQueueOrder(t *testing.T) {
	var q Queue
	var got []string
	add := func(name string) func() { return func() { got = append(got, name) } }
	owner := new(int)
	q.At(10, add("b"))
	q.AtFor(owner, 10, add("mine"))
	q.At(5, add("a"))
	q.First(10, add("first"))
	q.First(10, add("second first"))
	q.Shift(owner, 5)
	q.At(15, add("c"))
	for {
		a, ok := q.Pop(0)
		if !ok {
			break
		}
		q.SetNow(a.At)
		a.Do()
	}
	want := []string{"a", "first", "second first", "b", "mine", "c"}
	if len(got) != len(want) {
		t.Fatalf("order = %v; want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order = %v; want %v", got, want)
		}
	}
	q.At(100, add("late"))
	if _, ok := q.Pop(50); ok {
		t.Error("Pop(50) returned an action due at 100")
	}
}

func TestStorageFences(t *testing.T) {
	s := Storage{Fencing: true}
	for _, tt := range []struct {
		fence int64
		ok    bool
	}{{33, true}, {34, true}, {33, false}, {34, true}, {0, false}} {
		if got := s.Write(tt.fence); got != tt.ok {
			t.Errorf("Write(%d) = %v; want %v", tt.fence, got, tt.ok)
		}
	}
	plain := Storage{}
	if !plain.Write(1) || !plain.Write(0) {
		t.Error("a storage without fencing refused a write")
	}
}

func TestNodeCrashRestartJump(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2024, 1, 1, 9, 0, 0, 0, time.UTC)
	n, err := NewNode(1, playground.SandboxOptions{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	set := func() {
		if res, err := n.Exec(ctx, []string{"SET", "k", "v", "PX", "2000"}); err != nil || res.Output != "OK" {
			t.Fatalf("SET = %q, %v", res.Output, err)
		}
	}
	set()
	if err := n.Crash(true); err != nil {
		t.Fatal(err)
	}
	if res, err := n.Exec(ctx, []string{"GET", "k"}); err != ErrDown || res.Output != DownReply {
		t.Errorf("GET while down = %q, %v; want the connection refused", res.Output, err)
	}
	now = now.Add(500 * time.Millisecond)
	if err := n.Restart(500 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if ki, ok := n.Key("k"); !ok || ki.PTTLMS != 1500 {
		t.Errorf("after a restart with data: %+v, %v; want k with 1500 ms", ki, ok)
	}
	if err := n.Crash(false); err != nil {
		t.Fatal(err)
	}
	if err := n.Restart(0); err != nil {
		t.Fatal(err)
	}
	if _, ok := n.Key("k"); ok {
		t.Error("after a restart without data the key is still there")
	}
	set()
	if err := n.Jump(-time.Second); err != nil {
		t.Fatal(err)
	}
	if ki, _ := n.Key("k"); ki.PTTLMS != 3000 {
		t.Errorf("after the clock went back 1 s: TTL %d; want 3000", ki.PTTLMS)
	}
	if err := n.Jump(4 * time.Second); err != nil {
		t.Fatal(err)
	}
	if _, ok := n.Key("k"); ok {
		t.Error("after the clock jumped 3 s past the TTL the key is still there")
	}
	set()
	c, err := n.Copy()
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := c.Exec(ctx, []string{"DEL", "k"}); res.Output != "(integer) 1" {
		t.Errorf("DEL on the copy = %q", res.Output)
	}
	c.Close()
	if _, ok := n.Key("k"); !ok {
		t.Error("a DEL on the copy deleted the node's key")
	}
	if err := n.Reset(); err != nil || n.Offset() != 0 {
		t.Fatalf("Reset = %v, offset %v", err, n.Offset())
	}
	if _, ok := n.Key("k"); ok {
		t.Error("Reset left a key")
	}
}

func TestDur(t *testing.T) {
	for d, want := range map[time.Duration]string{250 * time.Millisecond: "250 ms", 1500 * time.Millisecond: "1.5 s", 10 * time.Second: "10 s"} {
		if got := Dur(d); got != want {
			t.Errorf("Dur(%v) = %q; want %q", d, got, want)
		}
	}
}

// TestNodeRestartAgesData: a node that comes back with its data has lost
// the keys whose TTL ran out while it was down, the others have less
// left, and its clock is as it was.
func TestNodeRestartAgesData(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2024, 1, 1, 9, 0, 0, 0, time.UTC)
	n, err := NewNode(1, playground.SandboxOptions{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	for _, argv := range [][]string{{"SET", "short", "1", "PX", "500"}, {"SET", "long", "1", "PX", "2000"}, {"SET", "forever", "1"}} {
		if _, err := n.Exec(ctx, argv); err != nil {
			t.Fatal(err)
		}
	}
	if err := n.Crash(true); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Second)
	if err := n.Restart(time.Second); err != nil {
		t.Fatal(err)
	}
	if _, ok := n.Key("short"); ok {
		t.Error("a key whose TTL ran out while the node was down is back")
	}
	if ki, ok := n.Key("long"); !ok || ki.PTTLMS != 1000 {
		t.Errorf("long = %+v, %v; want 1000 ms left", ki, ok)
	}
	if ki, ok := n.Key("forever"); !ok || ki.PTTLMS != -1 {
		t.Errorf("forever = %+v, %v; want it without a TTL", ki, ok)
	}
	now = now.Add(500 * time.Millisecond)
	if ki, ok := n.Key("long"); !ok || ki.PTTLMS != 500 {
		t.Errorf("half a second after the restart, long = %+v, %v; want 500 ms left: the clock is as it was", ki, ok)
	}
	// A copy is a copy, and the next copy reuses its sandbox.
	for range 2 {
		c, err := n.Copy()
		if err != nil {
			t.Fatal(err)
		}
		if res, _ := c.Exec(ctx, []string{"DEL", "long"}); res.Output != "(integer) 1" {
			t.Errorf("DEL on the copy = %q", res.Output)
		}
		c.Close()
	}
	if _, ok := n.Key("long"); !ok {
		t.Error("a DEL on a copy deleted the node's key")
	}
}
