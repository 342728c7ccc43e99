package race

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// node is one simulated Redis: a miniredis on the virtual clock, reached
// in memory (no sockets), plus the faults a scenario can inject.
type node struct {
	id     int
	m      *miniredis.Miniredis
	rdb    *redis.Client
	offset time.Duration // how far its clock is ahead of virtual time
	up     bool
}

// newNode starts a node whose clock reads start. With ClockTTL, keys
// expire as SetTime moves its clock, and only then.
func newNode(id int, start time.Time) *node {
	m := miniredis.NewMiniRedis()
	m.SetTime(start)
	m.ClockTTL(true)
	rdb := redis.NewClient(&redis.Options{
		// The address is never dialled (Dialer connects in memory); an IP
		// literal keeps go-redis from resolving it, and with maintenance
		// notifications off it does not try to classify the endpoint.
		Addr:                     "127.0.0.1:0",
		Dialer:                   func(context.Context, string, string) (net.Conn, error) { return m.Dial() },
		MaxRetries:               -1,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
	return &node{id: id, m: m, rdb: rdb, up: true}
}

func (n *node) close() {
	_ = n.rdb.Close()
	n.m.Close()
}

// link is one client's way to a node: it fails when the node is down or cut
// off from that client by the network.
type link struct {
	n   *node
	cut bool
}

// check returns why the node cannot be reached, or nil.
func (l link) check() error {
	switch {
	case l.cut:
		return fmt.Errorf("node %d: unreachable from this client", l.n.id)
	case !l.n.up:
		return fmt.Errorf("node %d: connection refused (crashed)", l.n.id)
	}
	return nil
}

func (l link) Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	if err := l.check(); err != nil {
		return failedCmd(ctx, err)
	}
	return l.n.rdb.Eval(ctx, script, keys, args...)
}

func (l link) EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	if err := l.check(); err != nil {
		return failedCmd(ctx, err)
	}
	return l.n.rdb.EvalSha(ctx, sha1, keys, args...)
}

func (l link) EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	if err := l.check(); err != nil {
		return failedCmd(ctx, err)
	}
	return l.n.rdb.EvalRO(ctx, script, keys, args...)
}

func (l link) EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	if err := l.check(); err != nil {
		return failedCmd(ctx, err)
	}
	return l.n.rdb.EvalShaRO(ctx, sha1, keys, args...)
}

func (l link) ScriptExists(ctx context.Context, hashes ...string) *redis.BoolSliceCmd {
	if err := l.check(); err != nil {
		c := redis.NewBoolSliceCmd(ctx)
		c.SetErr(err)
		return c
	}
	return l.n.rdb.ScriptExists(ctx, hashes...)
}

func (l link) ScriptLoad(ctx context.Context, script string) *redis.StringCmd {
	if err := l.check(); err != nil {
		c := redis.NewStringCmd(ctx)
		c.SetErr(err)
		return c
	}
	return l.n.rdb.ScriptLoad(ctx, script)
}

func failedCmd(ctx context.Context, err error) *redis.Cmd {
	c := redis.NewCmd(ctx)
	c.SetErr(err)
	return c
}
