package race

import (
	"context"
	"errors"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestNodeScriptCache checks the in-process link behaves as a Redis would
// for go-redis scripts: EVALSHA needs the script on that node, a crash
// forgets it, and replies convert as go-redis converts them.
func TestNodeScriptCache(t *testing.T) {
	ctx := context.Background()
	a, err := newNode(1, epoch)
	if err != nil {
		t.Fatal(err)
	}
	b, err := newNode(2, epoch)
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	defer b.close()
	la, lb := link{n: a}, link{n: b}
	incr := redis.NewScript(`return redis.call('INCRBY', KEYS[1], ARGV[1])`)

	if got, err := incr.Run(ctx, la, []string{"n"}, 5).Int64(); err != nil || got != 5 {
		t.Fatalf("Run on a = %d, %v; want 5", got, err)
	}
	// b has never seen the script: EVALSHA must fail there, and Run falls
	// back to EVAL.
	if err := incr.EvalSha(ctx, lb, []string{"n"}, 1).Err(); err == nil || !redis.HasErrorPrefix(err, "NOSCRIPT") {
		t.Errorf("EvalSha on b = %v; want NOSCRIPT", err)
	}
	if got, _ := incr.Run(ctx, lb, []string{"n"}, 2).Int64(); got != 2 {
		t.Errorf("Run on b = %d; want 2 (its own key)", got)
	}
	if ok, _ := incr.Exists(ctx, la).Result(); len(ok) != 1 || !ok[0] {
		t.Errorf("SCRIPT EXISTS on a = %v", ok)
	}
	if err := a.sn.Crash(false); err != nil {
		t.Fatal(err)
	}
	if err := a.sn.Restart(0); err != nil {
		t.Fatal(err)
	}
	if ok, _ := incr.Exists(ctx, la).Result(); len(ok) != 1 || ok[0] {
		t.Errorf("after a crash SCRIPT EXISTS on a = %v; want false", ok)
	}
	get := redis.NewScript(`return redis.call('GET', KEYS[1])`)
	if err := get.Run(ctx, la, []string{"missing"}).Err(); !errors.Is(err, redis.Nil) {
		t.Errorf("a nil reply = %v; want redis.Nil", err)
	}
	bad := redis.NewScript(`return redis.error_reply('BOOM no')`)
	if err := bad.Run(ctx, la, nil).Err(); err == nil || err.Error() != "BOOM no" {
		t.Errorf("an error reply = %v; want BOOM no", err)
	}
	arr := redis.NewScript(`return {1, 'two'}`)
	if v, err := arr.Run(ctx, la, nil).Slice(); err != nil || len(v) != 2 || v[0] != int64(1) || v[1] != "two" {
		t.Errorf("an array reply = %#v, %v", v, err)
	}
	a.up = false
	if err := incr.Run(ctx, la, []string{"n"}, 1).Err(); err == nil {
		t.Error("a script on a crashed node succeeded")
	}
}
