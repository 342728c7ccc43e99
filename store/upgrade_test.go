package store

import (
	"context"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/workshop"
)

// A workshop saved by a version without hash tags is found, whole, after
// the upgrade; a key already renamed, or under its new name already, is
// left alone.
func TestUpgradeRenamesWorkshopKeys(t *testing.T) {
	m := miniredis.RunT(t)
	old := openRedisStore(t, m.Addr())
	s := newService(old)
	mustCreate(t, s, workshop.Workshop{Code: "OLD123", Title: "Before", StartedAt: t0})
	mustJoin(t, s, "OLD123", alice, "Ann", t0)
	// Give the keys the names an earlier version used.
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer rdb.Close()
	var legacy []string
	for _, k := range m.Keys() {
		if to, ok := untagged(k); ok {
			if err := rdb.Rename(context.Background(), k, to).Err(); err != nil {
				t.Fatal(err)
			}
			legacy = append(legacy, to)
		}
	}
	if len(legacy) < 3 {
		t.Fatalf("legacy keys = %q; want the workshop's hash, members and nicknames at least", legacy)
	}
	if _, err := s.Get(context.Background(), "OLD123"); err == nil {
		t.Fatal("Get before the upgrade found the workshop; the test did not rename its keys")
	}
	// A clash: the new name is taken, so the old key stays.
	m.Set("locklab:ws:CLASH", "old")
	m.Set("locklab:ws:{CLASH}", "new")

	n, err := old.Upgrade(context.Background())
	if err != nil || n != len(legacy) {
		t.Fatalf("Upgrade() = %d, %v; want %d renamed", n, err, len(legacy))
	}
	w, err := s.Get(context.Background(), "OLD123")
	if err != nil || w.Title != "Before" {
		t.Fatalf("Get after the upgrade = %+v, %v; want the workshop", w, err)
	}
	if ps := mustParticipants(t, s, "OLD123"); len(ps) != 1 || ps[0].Nickname != "Ann" {
		t.Errorf("participants after the upgrade = %+v; want Ann", ps)
	}
	if v, _ := m.Get("locklab:ws:CLASH"); v != "old" {
		t.Errorf("the old key whose new name was taken = %q; want it kept", v)
	}
	if v, _ := m.Get("locklab:ws:{CLASH}"); v != "new" {
		t.Errorf("the key already under the new name = %q; want it untouched", v)
	}
	if n, err := old.Upgrade(context.Background()); err != nil || n != 0 {
		t.Errorf("a second Upgrade() = %d, %v; want nothing to do", n, err)
	}
}

// untagged is the name an earlier version gave a workshop key.
func untagged(key string) (string, bool) {
	const base = "locklab:ws:{"
	if len(key) <= len(base) || key[:len(base)] != base {
		return "", false
	}
	rest := key[len(base):]
	for i := range len(rest) {
		if rest[i] == '}' {
			return "locklab:ws:" + rest[:i] + rest[i+1:], true
		}
	}
	return "", false
}

func TestTaggedWorkshopKey(t *testing.T) {
	const base = "locklab:ws:"
	for _, tt := range []struct{ key, want string }{
		{"locklab:ws:ABC", "locklab:ws:{ABC}"},
		{"locklab:ws:ABC:members", "locklab:ws:{ABC}:members"},
		{"locklab:ws:{ABC}", ""},
		{"locklab:ws:{ABC}:picks", ""},
		{"locklab:ws:", ""},
	} {
		got, ok := taggedWorkshopKey(base, tt.key)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("taggedWorkshopKey(%q) = %q, %v; want %q", tt.key, got, ok, tt.want)
		}
	}
}
