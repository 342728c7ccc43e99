package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/locklab/locklab/limit"
)

func sandboxCopies(t *testing.T, s *Store) *SandboxCopies {
	t.Helper()
	c, ok := s.SandboxCopies()
	if !ok {
		t.Fatalf("%s: SandboxCopies() = false; want copies in Redis", s.Name())
	}
	return c
}

func TestSandboxCopies(t *testing.T) {
	ctx := context.Background()
	for name, open := range backends(t) {
		if name == "bolt" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			c := sandboxCopies(t, open(t))
			if v, err := c.Version(ctx, alice, time.Minute); err != nil || v != "" {
				t.Errorf("Version with no copy = %q, %v; want \"\"", v, err)
			}
			if v, data, err := c.Load(ctx, alice); err != nil || v != "" || data != nil {
				t.Errorf("Load with no copy = %q, %q, %v; want nothing", v, data, err)
			}
			// Copies are bytes, kept as they are.
			first := []byte("\x00\xffcopy\r\n")
			v1, saved, err := c.Save(ctx, alice, "", first, time.Minute)
			if err != nil || !saved || v1 == "" {
				t.Fatalf("Save = %q, %v, %v", v1, saved, err)
			}
			if v, err := c.Version(ctx, alice, time.Minute); err != nil || v != v1 {
				t.Errorf("Version = %q, %v; want %q", v, err, v1)
			}
			if v, data, err := c.Load(ctx, alice); err != nil || v != v1 || string(data) != string(first) {
				t.Errorf("Load = %q, %q, %v; want %q, %q", v, data, err, v1, first)
			}
			v2, saved, err := c.Save(ctx, alice, v1, []byte("second"), time.Minute)
			if err != nil || !saved || v2 == v1 {
				t.Errorf("second Save = %q, %v, %v; want a new version, not %q", v2, saved, err, v1)
			}
			// A replica that saved v1, or saw no copy, and did not see v2
			// since, saves nothing.
			for _, base := range []string{v1, "", "nonsense"} {
				if v, saved, err := c.Save(ctx, alice, base, []byte("late"), time.Minute); err != nil || saved || v != "" {
					t.Errorf("Save over %q after v2 = %q, %v, %v; want nothing saved", base, v, saved, err)
				}
			}
			if v, data, _ := c.Load(ctx, alice); v != v2 || string(data) != "second" {
				t.Errorf("Load after late saves = %q, %q; want %q, \"second\"", v, data, v2)
			}
			// LoadNewer: the copy only when it is not the one named.
			for _, tt := range []struct{ have, wantData string }{{v2, ""}, {v1, "second"}, {"", "second"}} {
				if v, data, err := c.LoadNewer(ctx, alice, tt.have, time.Minute); err != nil || v != v2 || string(data) != tt.wantData {
					t.Errorf("LoadNewer(have %q) = %q, %q, %v; want %q, %q", tt.have, v, data, err, v2, tt.wantData)
				}
			}
			if v, data, err := c.LoadNewer(ctx, bob, "", time.Minute); err != nil || v != "" || data != nil {
				t.Errorf("LoadNewer with no copy = %q, %q, %v; want nothing", v, data, err)
			}
			if v, _ := c.Version(ctx, bob, time.Minute); v != "" {
				t.Errorf("bob's Version = %q; want none, copies are per learner", v)
			}
			if _, _, err := c.Save(ctx, "bad id", "", []byte("x"), time.Minute); !errors.Is(err, ErrBadLearner) {
				t.Errorf("Save for a malformed id = %v; want ErrBadLearner", err)
			}
			if _, _, err := c.Save(ctx, alice, v2, make([]byte, maxSandboxCopy+1), time.Minute); err == nil {
				t.Error("Save of an oversized copy = nil error")
			}
			if v, _ := c.Version(ctx, alice, time.Minute); v != v2 {
				t.Errorf("Version after a refused Save = %q; want %q still", v, v2)
			}
		})
	}
}

// TestSandboxCopiesExpire: a copy lasts its ttl after the last Save or
// Version, as Version is called whenever the learner is active.
func TestSandboxCopiesExpire(t *testing.T) {
	ctx := context.Background()
	m := miniredis.RunT(t)
	s, err := OpenRedis("redis://" + m.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c := sandboxCopies(t, s)
	v, _, err := c.Save(ctx, alice, "", []byte("x"), 30*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	m.FastForward(20 * time.Minute)
	if got, _ := c.Version(ctx, alice, 30*time.Minute); got != v {
		t.Fatalf("Version after 20 minutes = %q; want %q", got, v)
	}
	m.FastForward(20 * time.Minute)
	if got, _ := c.Version(ctx, alice, 30*time.Minute); got != v {
		t.Errorf("Version 20 minutes after the last Version = %q; want %q", got, v)
	}
	m.FastForward(20 * time.Minute)
	if got, _, _ := c.LoadNewer(ctx, alice, v, 30*time.Minute); got != v {
		t.Errorf("LoadNewer 20 minutes after the last Version = %q; want %q", got, v)
	}
	m.FastForward(20 * time.Minute)
	if got, _ := c.Version(ctx, alice, 30*time.Minute); got != v {
		t.Errorf("Version 20 minutes after the last LoadNewer = %q; want %q", got, v)
	}
	m.FastForward(31 * time.Minute)
	if got, _ := c.Version(ctx, alice, 30*time.Minute); got != "" {
		t.Errorf("Version after 31 idle minutes = %q; want the copy gone", got)
	}
}

// TestSandboxCopiesOutage: with Redis down, calls fail with
// ErrUnavailable, after a run of failures without calling Redis, and
// work again once a probe finds it back.
func TestSandboxCopiesOutage(t *testing.T) {
	ctx := context.Background()
	m := miniredis.RunT(t)
	s, err := OpenRedis("redis://" + m.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c := sandboxCopies(t, s)
	addr := m.Addr()
	m.Close()
	for i := range breakerFailures + 2 {
		_, err := c.Version(ctx, alice, time.Minute)
		if open := i >= breakerFailures; !errors.Is(err, ErrUnavailable) || strings.Contains(err.Error(), limit.ErrOpen.Error()) != open {
			t.Errorf("Version %d with Redis down = %v; want ErrUnavailable, from the open breaker %v", i+1, err, open)
		}
	}
	if err := m.StartAddr(addr); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(sandboxBreaker.Backoff + 5*time.Second)
	for {
		_, _, err = c.Save(ctx, alice, "", []byte("x"), time.Minute)
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Errorf("Save after Redis came back: %v", err)
	}
}

func TestNoSandboxCopiesWithBolt(t *testing.T) {
	s, err := OpenBolt(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok := s.SandboxCopies(); ok {
		t.Error("bolt store: SandboxCopies() = true; want false, one server has nothing to share")
	}
}
