package lock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redlock is the Redlock algorithm over independent Redis instances (not
// replicas of each other). It is safe for concurrent use if its
// Options.Random is.
type Redlock struct {
	nodes   []redis.Scripter
	opts    Options
	scripts scripts
}

// NewRedlock returns a Redlock over nodes; use an odd number, typically 5.
func NewRedlock(nodes []redis.Scripter, opts Options) *Redlock {
	return &Redlock{nodes: nodes, opts: opts.withDefaults(), scripts: newScripts()}
}

// Quorum returns the number of nodes that must grant the lock: a majority.
func (r *Redlock) Quorum() int { return Quorum(len(r.nodes)) }

// Quorum returns the majority of n nodes, the votes a Redlock client needs.
func Quorum(n int) int { return n/2 + 1 }

// DriftRule names the drift allowance Drift computes, for learners.
const DriftRule = "1% of the TTL plus 2 ms (drift factor 0.01)"

// Drift is the allowance for clock drift between the nodes and the
// client: ttl/100 + 2ms, as the reference Redlock implementations
// compute it (drift factor 0.01).
func Drift(ttl time.Duration) time.Duration { return driftFor(ttl) }

// Validity is what is left of a Redlock lock taken with ttl after the
// attempt took elapsed: ttl - elapsed - Drift(ttl). The lock is held only
// if a majority granted it and this is positive.
func Validity(ttl, elapsed time.Duration) time.Duration {
	return ttl - elapsed - driftFor(ttl)
}

// Acquire sets the same random token with SET NX PX on every node, each call
// bounded by Options.NodeTimeout. It holds the lock if a majority granted it
// and the validity, ttl minus the time the attempt took minus the drift
// allowance (ttl/100 + 2ms), is positive. Otherwise it releases the key on
// every node and, if retries are left, tries again after a random delay. The
// error wraps ErrNotAcquired, joined with the errors of unreachable nodes.
func (r *Redlock) Acquire(ctx context.Context, key string, ttl time.Duration) (*Lock, error) {
	ms, err := checkArgs(key, ttl)
	if err == nil && len(r.nodes) == 0 {
		err = errors.New("no nodes")
	}
	if err != nil {
		return nil, fmt.Errorf("redlock acquire %q: %w", key, err)
	}
	token, err := newToken(r.opts.Random)
	if err != nil {
		return nil, fmt.Errorf("redlock acquire %q: %w", key, err)
	}
	l := &Lock{
		key: key, token: token, ttl: ttl, nodes: r.nodes, quorum: r.Quorum(),
		redlock: true, opts: r.opts, scripts: r.scripts,
	}
	drift := driftFor(ttl)
	for attempt := 0; ; attempt++ {
		start := r.opts.Clock.Now()
		rs := callAll(ctx, r.nodes, l.nodeTimeout(), func(ctx context.Context, c redis.Scripter) (int64, error) {
			if err := r.scripts.setNX.Run(ctx, c, []string{key}, token, ms).Err(); err != nil {
				if errors.Is(err, redis.Nil) {
					return 0, nil
				}
				return 0, err
			}
			return 1, nil
		})
		got, errs := tally(rs)
		validity := Validity(ttl, r.opts.Clock.Now().Sub(start))
		if got >= l.quorum && validity > 0 {
			l.until = start.Add(ttl - drift)
			return l, nil
		}
		// Release everywhere, also where no answer came back: the SET may
		// have arrived even if its reply did not.
		_ = l.Release(context.WithoutCancel(ctx))
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("redlock acquire %q: %w", key, err)
		}
		if attempt >= r.opts.Retries {
			return nil, fmt.Errorf("redlock acquire %q: got %d of %d nodes (need %d), validity %v: %w",
				key, got, len(r.nodes), l.quorum, validity, errors.Join(append([]error{ErrNotAcquired}, errs...)...))
		}
		if err := r.opts.Clock.Sleep(ctx, r.opts.retryDelay()); err != nil {
			return nil, fmt.Errorf("redlock acquire %q: %w", key, err)
		}
	}
}

// driftFor is the allowance for clock drift between the nodes and us.
func driftFor(ttl time.Duration) time.Duration {
	return ttl/100 + 2*time.Millisecond
}
