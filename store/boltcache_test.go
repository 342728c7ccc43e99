package store

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestBoltCacheSeesWritesAndSweeps: the bolt store keeps what it read,
// and still answers every read with what was last written: after an
// answer, after a sweep that dropped the learner, and across concurrent
// writers and readers.
func TestBoltCacheSeesWritesAndSweeps(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s, err := OpenBolt(t.TempDir(), ProgressTTL(time.Hour), Clock(clock))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.RecordAnswer(ctx, bob, "locks", "q1", false); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second read is the kept one
		if l, _ := s.Progress(ctx, bob); !l["locks"].Started || len(l["locks"].Right) != 0 {
			t.Fatalf("bob after a wrong answer = %+v; want started, nothing right", l)
		}
	}
	if _, err := s.RecordAnswer(ctx, bob, "locks", "q1", true); err != nil {
		t.Fatal(err)
	}
	if l, _ := s.Progress(ctx, bob); len(l["locks"].Right) != 1 {
		t.Fatalf("bob after a right answer = %+v; want q1 right (a kept read must not hide a write)", l)
	}
	mu.Lock()
	now = now.Add(2 * time.Hour) // past the TTL, within a day: a kept read would still be fresh
	mu.Unlock()
	if n := s.Sweep(clock()); n != 1 {
		t.Fatalf("sweep dropped %d; want 1 (bob)", n)
	}
	if l, _ := s.Progress(ctx, bob); len(l) != 0 {
		t.Errorf("bob after the sweep = %+v; want nothing (a kept read must not outlive the sweep)", l)
	}

	// Writers and readers at once: every answer is in the last read.
	const n = 40
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if _, err := s.RecordAnswer(ctx, alice, "locks", fmt.Sprintf("q%d", i), true); err != nil {
				t.Error(err)
			}
		}()
		go func() {
			defer wg.Done()
			if _, err := s.Progress(ctx, alice); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if l, _ := s.Progress(ctx, alice); len(l["locks"].Right) != n {
		t.Errorf("alice after %d concurrent answers has %d right; want %d", n, len(l["locks"].Right), n)
	}
}

// BenchmarkBoltProgress reads a learner's progress, as every page a
// learner opens does.
func BenchmarkBoltProgress(b *testing.B) {
	ctx := context.Background()
	s, err := OpenBolt(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if _, err := s.RecordAnswer(ctx, alice, "locks", "q1", true); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Progress(ctx, alice); err != nil {
			b.Fatal(err)
		}
	}
}

// TestFlagCacheRefusesARacedReadAndStaysBounded: a read that a write
// overtook is not kept, a forgotten learner is read again, a stale entry
// is not served, and the cache starts over when full.
func TestFlagCacheRefusesARacedReadAndStaysBounded(t *testing.T) {
	var fc flagCache
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	_, ok, gen := fc.get("a", now, time.Hour)
	if ok {
		t.Fatal("an empty cache has a")
	}
	fc.forget("b") // a write to someone else, while a was read
	fc.put("a", gen, []string{"locks/started"}, now)
	if _, ok, _ := fc.get("a", now, time.Hour); ok {
		t.Fatal("a read made before a write was kept")
	}
	_, _, gen = fc.get("a", now, time.Hour)
	if e := fc.put("a", gen, []string{"locks/started", "locks/right/q1"}, now); !e.progress["locks"].Started || len(e.progress["locks"].Right) != 1 {
		t.Fatalf("put parsed %+v; want locks started, q1 right", e.progress)
	}
	e, ok, _ := fc.get("a", now.Add(time.Hour), time.Hour)
	if !ok || len(e.flags) != 2 || e.progress["locks"].Right[0] != "q1" {
		t.Fatalf("get = %+v, %v; want the kept read", e, ok)
	}
	if _, ok, _ := fc.get("a", now.Add(time.Hour+time.Second), time.Hour); ok {
		t.Error("an entry seen longer ago than fresh was served")
	}
	fc.forget("a")
	if _, ok, _ := fc.get("a", now, time.Hour); ok {
		t.Error("a forgotten learner was served")
	}
	for i := range maxCachedLearners + 10 {
		_, _, gen := fc.get("x", now, time.Hour)
		fc.put(fmt.Sprintf("learner-%d", i), gen, nil, now)
	}
	if n := fc.entries.Load().n; n > maxCachedLearners || n != 10 {
		t.Errorf("after %d puts the cache holds %d; want it started over (10)", maxCachedLearners+10, n)
	}
	if _, ok, _ := fc.get("learner-5", now, time.Hour); ok {
		t.Error("an entry from before the cache started over is still there")
	}
	if _, ok, _ := fc.get(fmt.Sprintf("learner-%d", maxCachedLearners+9), now, time.Hour); !ok {
		t.Error("the last put is not kept")
	}
}
