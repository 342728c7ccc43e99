package playground

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/testenv"

	"github.com/redis/go-redis/v9"
)

// The lesson's lock cycle: take the lock with a token, release it with the
// compare-and-delete script.
const (
	acquireLine = "SET lock:invoice:7 3f9a1c NX PX 30000"
	releaseSrc  = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end"
)

// BenchmarkSandboxLockCycle runs the lesson's SET NX PX and release EVAL as
// typed lines in one sandbox, in process: tokenizing, running and
// formatting included.
func BenchmarkSandboxLockCycle(b *testing.B) {
	s, err := NewSandbox(SandboxOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		r, err := s.Exec(ctx, ClientA, acquireLine)
		if err != nil || r.Output != "OK" {
			b.Fatalf("acquire: %q, %v", r.Output, err)
		}
		r, err = s.Exec(ctx, ClientA, lessonRelease)
		if err != nil || r.Output != "(integer) 1" {
			b.Fatalf("release: %q, %v", r.Output, err)
		}
	}
}

// BenchmarkRealRedisLockCycle runs the same two commands with go-redis
// against a real redis-server on loopback.
func BenchmarkRealRedisLockCycle(b *testing.B) {
	addr := startRedis(b)
	rdb := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1})
	defer rdb.Close()
	ctx := context.Background()
	release := redis.NewScript(releaseSrc)
	if err := release.Load(ctx, rdb).Err(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		ok, err := rdb.SetNX(ctx, "lock:invoice:7", "3f9a1c", 30*time.Second).Result()
		if err != nil || !ok {
			b.Fatalf("acquire: %v, %v", ok, err)
		}
		n, err := rdb.Eval(ctx, releaseSrc, []string{"lock:invoice:7"}, "3f9a1c").Int()
		if err != nil || n != 1 {
			b.Fatalf("release: %v, %v", n, err)
		}
	}
}

// BenchmarkLockCycleRatio interleaves the two lock cycles above, so that
// both see the same load on the machine, and reports how many times faster
// the sandbox is than go-redis to a real server (ratio). A ratio of at
// least 1 means the playground answers no slower than Redis would.
func BenchmarkLockCycleRatio(b *testing.B) {
	addr := startRedis(b)
	rdb := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1})
	defer rdb.Close()
	s, err := NewSandbox(SandboxOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	var inSandbox, inRedis time.Duration
	for b.Loop() {
		start := time.Now()
		if r, _ := s.Exec(ctx, ClientA, acquireLine); r.Output != "OK" {
			b.Fatalf("acquire: %q", r.Output)
		}
		if r, _ := s.Exec(ctx, ClientA, lessonRelease); r.Output != "(integer) 1" {
			b.Fatalf("release: %q", r.Output)
		}
		mid := time.Now()
		if ok, err := rdb.SetNX(ctx, "lock:invoice:7", "3f9a1c", 30*time.Second).Result(); err != nil || !ok {
			b.Fatalf("acquire: %v, %v", ok, err)
		}
		if n, err := rdb.Eval(ctx, releaseSrc, []string{"lock:invoice:7"}, "3f9a1c").Int(); err != nil || n != 1 {
			b.Fatalf("release: %v, %v", n, err)
		}
		inSandbox += mid.Sub(start)
		inRedis += time.Since(mid)
	}
	ratio := float64(inRedis) / float64(inSandbox)
	b.ReportMetric(float64(inSandbox.Nanoseconds())/float64(b.N), "sandbox-ns/cycle")
	b.ReportMetric(float64(inRedis.Nanoseconds())/float64(b.N), "redis-ns/cycle")
	b.ReportMetric(ratio, "ratio")
	if ratio < 1 {
		b.Errorf("the sandbox lock cycle is slower than real Redis: ratio %.2f; want at least 1", ratio)
	}
}

// BenchmarkIdleSandboxes measures the heap that 10,000 idle sandboxes
// hold: a Manager gives each learner a sandbox that runs the lesson's lock
// cycle, then the learners go quiet and Sweep compacts the sandboxes, as it
// does after a minute without commands. It reports bytes per sandbox and
// MB for all of them.
func BenchmarkIdleSandboxes(b *testing.B) {
	for b.Loop() {
		perBox := idleSandboxBytes(b, 10_000)
		b.ReportMetric(perBox, "B/sandbox")
		b.ReportMetric(perBox*10_000/1e6, "MB/10k")
	}
}

// idleSandboxBytes gives n learners a sandbox through a Manager, runs the
// lock cycle in each, lets them idle until Sweep compacts them and returns
// the heap growth per sandbox after a GC.
func idleSandboxBytes(tb testing.TB, n int) float64 {
	tb.Helper()
	ctx := context.Background()
	clock := newFakeClock()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m := NewManager(Options{Now: clock.Now})
	defer m.Close()
	for i := range n {
		learner := fmt.Sprintf("learner-%d", i)
		for _, line := range []string{acquireLine, lessonRelease, "SET visited:" + learner + " yes"} {
			if _, err := m.Exec(ctx, learner, ClientA, line); err != nil {
				tb.Fatal(err)
			}
		}
	}
	clock.Add(2 * time.Minute)
	m.Sweep(clock.Now())
	if m.Len() != n {
		tb.Fatalf("Manager.Len() = %d after Sweep; want %d", m.Len(), n)
	}
	// Two collections: gopher-lua returns call-stack segments to a
	// sync.Pool, which lets go of them only at the second.
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
}

// TestIdleSandboxMemory checks the memory budget: 10,000 idle sandboxes
// must fit in 300 MB of heap. It measures 2,000 and scales up;
// BenchmarkIdleSandboxes measures all 10,000.
func TestIdleSandboxMemory(t *testing.T) {
	testenv.Slow(t, "load")
	per := idleSandboxBytes(t, 2000)
	t.Logf("%.0f bytes per idle sandbox, %.0f MB for 10,000", per, per*10_000/1e6)
	if per*10_000 > 300e6 {
		t.Errorf("10,000 idle sandboxes would take %.0f MB; want under 300 MB", per*10_000/1e6)
	}
}
