package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// upgradeBackend is a back end that may hold data under the names an
// earlier version of Lock Lab gave it.
type upgradeBackend interface {
	upgrade(ctx context.Context) (int, error)
}

// Upgrade renames what an earlier version of Lock Lab stored under other
// names, so nothing saved before an upgrade is lost, and returns how many
// keys it renamed. It is safe to run on every start and from every
// replica at once: a key is renamed only if its new name is free.
func (s *Store) Upgrade(ctx context.Context) (int, error) {
	ub, ok := s.b.(upgradeBackend)
	if !ok {
		return 0, nil
	}
	n, err := ub.upgrade(ctx)
	if err != nil {
		return n, fmt.Errorf("store: upgrade: %w", err)
	}
	return n, nil
}

// upgrade gives workshops' keys their hash tag: <prefix>ws:<code>[:part]
// becomes <prefix>ws:{<code>}[:part]. Earlier versions ran on one node or
// a Sentinel group only, so a cluster has nothing to rename.
func (r *redisBackend) upgrade(ctx context.Context) (int, error) {
	if _, ok := r.rdb.(*redis.ClusterClient); ok {
		return 0, nil
	}
	base := r.prefix + "ws:"
	renamed := 0
	iter := r.rdb.Scan(ctx, 0, base+"*", 1000).Iterator()
	for iter.Next(ctx) {
		old := iter.Val()
		to, ok := taggedWorkshopKey(base, old)
		if !ok {
			continue
		}
		done, err := r.rdb.RenameNX(ctx, old, to).Result()
		if err != nil && !strings.Contains(err.Error(), "no such key") {
			return renamed, unavailable(err)
		}
		if done {
			renamed++
		}
	}
	return renamed, unavailable(iter.Err())
}

// taggedWorkshopKey is the tagged name of an untagged workshop key under
// base (base+code, or base+code+":"+part); ok is false for a key that
// already has its tag.
func taggedWorkshopKey(base, key string) (string, bool) {
	rest := strings.TrimPrefix(key, base)
	if rest == "" || strings.HasPrefix(rest, "{") {
		return "", false
	}
	code, part, _ := strings.Cut(rest, ":")
	if part != "" {
		part = ":" + part
	}
	return base + "{" + code + "}" + part, true
}
