package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Acknowledged answers survive a failover: with Sentinel or a cluster, a
// progress save is answered only once a replica of the Redis master has
// it too (WAIT 1), as Redis
// replicates asynchronously and a master that dies may take its last
// writes with it. A master that has no replica to wait for, or one too
// slow, must not make every save slow: when no replica acknowledges
// within replicaWait, the save still counts (it is on the master), the
// store warns, and it stops waiting for replicaPause.
const (
	replicaWait  = 100 * time.Millisecond
	replicaPause = time.Minute
)

// ErrNotReplicated is what the store warns of when a save was not
// acknowledged by a replica in time; saves to that master then stop
// waiting for a while.
var ErrNotReplicated = fmt.Errorf("a save was not copied to a Redis replica within %v: the master keeps it, but would lose it in a failover; saves stop waiting for a replica for %v", replicaWait, replicaPause)

// Warn has the Redis store call f when something is wrong that the
// request still succeeds despite, such as a save no replica confirmed.
// It may be called often; f decides what to log.
func Warn(f func(error)) Option {
	return func(o *options) { o.warn = f }
}

// replicaGate says whether saves wait for a replica: only where a
// replica may take over (Sentinel, Cluster; a single node has no
// failover), and not while the master they go to is paused, until the
// Unix ns stored for its address ("" for the one master of Sentinel).
type replicaGate struct {
	failover bool
	// wait is how long a save waits (replicaWait; tests on a loaded
	// machine give more).
	wait   time.Duration
	paused sync.Map // address -> int64
}

func (g *replicaGate) waits(node string, now time.Time) bool {
	if !g.failover {
		return false
	}
	until, ok := g.paused.Load(node)
	return !ok || now.UnixNano() >= until.(int64)
}

func (g *replicaGate) pause(node string, until time.Time) {
	g.paused.Store(node, until.UnixNano())
}

// write runs a script that changes what keys hold (keys share a slot)
// and, where a replica may take over, answers only once a replica has its
// writes too, as the constants above say. Its reply is the script's.
func (r *redisBackend) write(ctx context.Context, script *redis.Script, keys []string, args ...any) *redis.Cmd {
	now := r.now()
	if !r.replicas.failover {
		return script.Run(ctx, r.rdb, keys, args...)
	}
	node, addr := redis.Cmdable(r.rdb), ""
	if cc, ok := r.rdb.(*redis.ClusterClient); ok && len(keys) > 0 {
		// WAIT counts the replicas of the node it is sent to, over the
		// connection that wrote: the pipeline goes to the keys' master.
		m, err := cc.MasterForKey(ctx, keys[0])
		if err != nil {
			cmd := redis.NewCmd(ctx)
			cmd.SetErr(err)
			return cmd
		}
		node, addr = m, m.Options().Addr
	}
	if !r.replicas.waits(addr, now) {
		return script.Run(ctx, r.rdb, keys, args...)
	}
	wait := cmp.Or(r.replicas.wait, replicaWait)
	cmd, acked := scriptThenWait(ctx, node, script.EvalSha, keys, args, wait)
	if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
		// A master that never ran it (one just promoted, or restarted):
		// the script did not run, so sending it whole is safe.
		cmd, acked = scriptThenWait(ctx, node, script.Eval, keys, args, wait)
	}
	if cmd.Err() != nil && !errors.Is(cmd.Err(), redis.Nil) {
		return cmd
	}
	if n, err := acked.Int(); err != nil || n < 1 {
		r.replicas.pause(addr, now.Add(replicaPause))
		if r.warn != nil {
			r.warn(ErrNotReplicated)
		}
	}
	return cmd
}

// scriptThenWait sends a script and WAIT 1 in one pipeline, so on one
// connection, and returns both replies.
func scriptThenWait(ctx context.Context, node redis.Cmdable, send func(context.Context, redis.Scripter, []string, ...any) *redis.Cmd, keys []string, args []any, wait time.Duration) (cmd, acked *redis.Cmd) {
	_, _ = node.Pipelined(ctx, func(p redis.Pipeliner) error {
		cmd = send(ctx, p, keys, args...)
		acked = p.Do(ctx, "wait", 1, wait.Milliseconds())
		return nil
	})
	return cmd, acked
}
