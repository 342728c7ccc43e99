package playground

import (
	"context"
	"testing"
	"time"
)

// TestFarExpiry checks that TTLs beyond what a time.Duration holds are
// kept as Redis keeps them, across clock moves long enough to renew the
// stand-in miniredis counts down, across RENAME and COPY, and through a
// snapshot.
func TestFarExpiry(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	s, err := NewSandbox(SandboxOptions{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	run := func(line, want string) {
		t.Helper()
		res, _ := s.Exec(context.Background(), ClientA, line)
		if res.Output != want {
			t.Errorf("%s = %q; want %q", line, res.Output, want)
		}
	}
	const year = 365 * 24 * time.Hour
	run("SET k v EX 100000000000", "OK") // about 3,170 years
	run("TTL k", "(integer) 100000000000")
	run("SET near v EX 9460808000", "OK") // 300 years: handed back to miniredis later
	now = now.Add(150 * year)
	run("GET k", `"v"`)
	run("TTL k", "(integer) 95269600000")
	now = now.Add(150 * year)
	run("TTL k", "(integer) 90539200000")
	run("TTL near", "(integer) 8000")
	now = now.Add(8001 * time.Second)
	run("EXISTS near", "(integer) 0")
	run("RENAME k k2", "OK")
	run("TTL k2", "(integer) 90539191999")
	run("COPY k2 k3", "(integer) 1")
	run("TTL k3", "(integer) 90539191999")
	run("SET k3 v KEEPTTL", "OK")
	run("TTL k3", "(integer) 90539191999")
	run("SET k3 v", "OK")
	run("TTL k3", "(integer) -1")

	snap, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	r, err := RestoreSandbox(snap, SandboxOptions{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	res, _ := r.Exec(context.Background(), ClientA, "TTL k2")
	if want := "(integer) 90539191999"; res.Output != want {
		t.Errorf("after restore TTL k2 = %q; want %q", res.Output, want)
	}
	keys, err := r.Keys()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if k.Key == "k2" && k.PTTLMS != 90539191999000 {
			t.Errorf("Keys() gives k2 PTTL %d ms; want 90539191999000", k.PTTLMS)
		}
	}
}
