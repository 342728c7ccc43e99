package lock

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNotAcquired means the lock is held by someone else (on a majority of
// nodes, for a Redlock) and every attempt failed.
var ErrNotAcquired = errors.New("lock not acquired")

// ErrNotHeld means a Release or Extend found that the lock was no longer
// ours: its TTL had run out, and maybe another client holds it now.
var ErrNotHeld = errors.New("lock not held")

// Locker hands out locks stored in one Redis (or one cluster). It is safe for
// concurrent use if its Options.Random is.
type Locker struct {
	client  redis.Scripter
	opts    Options
	scripts scripts
}

// New returns a Locker that keeps its locks in client. Any go-redis v9 client
// works, including a Ring or a ClusterClient (see the package comment about
// hash tags).
func New(client redis.Scripter, opts Options) *Locker {
	return &Locker{client: client, opts: opts.withDefaults(), scripts: newScripts()}
}

// Acquire takes the lock named key for ttl, retrying as Options say. The
// returned Lock carries a fencing token that is higher than that of every
// earlier grant of key. Acquire returns an error wrapping ErrNotAcquired if
// the lock stayed taken, or the context's error if ctx ended while waiting.
func (l *Locker) Acquire(ctx context.Context, key string, ttl time.Duration) (*Lock, error) {
	ms, err := checkArgs(key, ttl)
	if err != nil {
		return nil, fmt.Errorf("acquire %q: %w", key, err)
	}
	token, err := newToken(l.opts.Random)
	if err != nil {
		return nil, fmt.Errorf("acquire %q: %w", key, err)
	}
	keys := []string{key, l.opts.FenceKey(key)}
	for attempt := 0; ; attempt++ {
		start := l.opts.Clock.Now()
		r := callAll(ctx, []redis.Scripter{l.client}, l.opts.NodeTimeout, func(ctx context.Context, c redis.Scripter) (int64, error) {
			return l.scripts.acquire.Run(ctx, c, keys, token, ms).Int64()
		})[0]
		switch {
		case r.err == nil:
			return &Lock{
				key: key, token: token, fence: r.n, ttl: ttl, until: start.Add(ttl),
				nodes: []redis.Scripter{l.client}, quorum: 1, opts: l.opts, scripts: l.scripts,
			}, nil
		case !errors.Is(r.err, redis.Nil):
			return nil, fmt.Errorf("acquire %q: %w", key, r.err)
		case attempt >= l.opts.Retries:
			return nil, fmt.Errorf("acquire %q: %w", key, ErrNotAcquired)
		}
		if err := l.opts.Clock.Sleep(ctx, l.opts.retryDelay()); err != nil {
			return nil, fmt.Errorf("acquire %q: %w", key, err)
		}
	}
}

// Lock is a granted lock. Its methods may be called from several goroutines,
// for example Extend from a renewal loop while the work runs.
type Lock struct {
	key, token string
	fence      int64
	nodes      []redis.Scripter
	quorum     int
	redlock    bool
	opts       Options
	scripts    scripts

	mu    sync.Mutex
	ttl   time.Duration
	until time.Time
}

// Key returns the name of the locked key.
func (l *Lock) Key() string { return l.key }

// Token returns the random value stored in the key; only its holder knows it.
func (l *Lock) Token() string { return l.token }

// Fence returns the fencing token of this grant: it grows with every grant
// of the same key. Pass it along with each write so the storage can reject
// writes from an older holder. A Redlock's Lock has no fencing token and
// returns 0.
func (l *Lock) Fence() int64 { return l.fence }

// TTL returns the time to live set by the last successful Acquire or Extend.
func (l *Lock) TTL() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ttl
}

// Until returns the time, on the Options clock, after which the holder must
// assume the lock is gone: the start of the last successful Acquire or
// Extend plus the TTL (minus the clock drift allowance, for a Redlock).
// Checking it before a write narrows the window for a late write; it cannot
// close it, because the holder may pause right after the check.
func (l *Lock) Until() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.until
}

// Release deletes the lock if it is still ours. It returns an error wrapping
// ErrNotHeld if the key had expired or belongs to another client now (for a
// Redlock: if fewer than a majority of nodes still held our token).
func (l *Lock) Release(ctx context.Context) error {
	rs := callAll(ctx, l.nodes, l.nodeTimeout(), func(ctx context.Context, c redis.Scripter) (int64, error) {
		return l.scripts.release.Run(ctx, c, []string{l.key}, l.token).Int64()
	})
	held, errs := tally(rs)
	if held >= l.quorum {
		return nil
	}
	return l.failure("release", held, errs)
}

// Extend resets the lock's TTL to ttl if the lock is still ours, and moves
// Until accordingly. It returns an error wrapping ErrNotHeld if the lock was
// lost; the holder should then stop working on what the lock protects. A
// Redlock extends on every node and succeeds only with a majority and a
// positive validity, like Acquire.
func (l *Lock) Extend(ctx context.Context, ttl time.Duration) error {
	ms, err := checkArgs(l.key, ttl)
	if err != nil {
		return fmt.Errorf("extend %q: %w", l.key, err)
	}
	start := l.opts.Clock.Now()
	rs := callAll(ctx, l.nodes, l.nodeTimeout(), func(ctx context.Context, c redis.Scripter) (int64, error) {
		return l.scripts.extend.Run(ctx, c, []string{l.key}, l.token, ms).Int64()
	})
	held, errs := tally(rs)
	drift := time.Duration(0)
	if l.redlock {
		drift = driftFor(ttl)
		if validity := ttl - l.opts.Clock.Now().Sub(start) - drift; validity <= 0 {
			held = 0
		}
	}
	if held < l.quorum {
		return l.failure("extend", held, errs)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ttl, l.until = ttl, start.Add(ttl-drift)
	return nil
}

// failure builds the error of a Release or Extend that did not reach a
// quorum. On a single node, a failed call is reported as itself: we do not
// know whether the lock is still held.
func (l *Lock) failure(op string, held int, errs []error) error {
	if !l.redlock {
		if len(errs) > 0 {
			return fmt.Errorf("%s %q: %w", op, l.key, errs[0])
		}
		return fmt.Errorf("%s %q: %w", op, l.key, ErrNotHeld)
	}
	return fmt.Errorf("%s %q: held on %d of %d nodes, need %d: %w",
		op, l.key, held, len(l.nodes), l.quorum, errors.Join(append([]error{ErrNotHeld}, errs...)...))
}

func (l *Lock) nodeTimeout() time.Duration {
	if l.redlock && l.opts.NodeTimeout <= 0 {
		return DefaultNodeTimeout
	}
	return l.opts.NodeTimeout
}

// checkArgs validates a key and a TTL and returns the TTL in milliseconds,
// the unit of PX and PEXPIRE.
func checkArgs(key string, ttl time.Duration) (int64, error) {
	if key == "" {
		return 0, errors.New("empty key")
	}
	ms := ttl.Milliseconds()
	if ms < 1 {
		return 0, fmt.Errorf("ttl %v is shorter than 1ms", ttl)
	}
	return ms, nil
}

// newToken returns 128 random bits from r in hex.
func newToken(r io.Reader) (string, error) {
	var b [16]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return "", fmt.Errorf("read token: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// reply is the answer of one node: a count (1 for done, 0 for not ours) or
// an error.
type reply struct {
	n   int64
	err error
}

// callAll runs f on every node at once and returns the replies in node
// order. If timeout is positive, a node that has not answered by then counts
// as failed. The call is abandoned rather than cancelled: go-redis honours a
// context deadline on the socket only with ContextTimeoutEnabled, and the
// per-node bound must hold whatever the client's options.
func callAll(ctx context.Context, nodes []redis.Scripter, timeout time.Duration, f func(context.Context, redis.Scripter) (int64, error)) []reply {
	out := make([]reply, len(nodes))
	call := func(i int) {
		if timeout <= 0 {
			out[i].n, out[i].err = f(ctx, nodes[i])
			return
		}
		cctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		done := make(chan reply, 1)
		go func() {
			n, err := f(cctx, nodes[i])
			done <- reply{n, err}
		}()
		select {
		case out[i] = <-done:
		case <-cctx.Done():
			out[i].err = fmt.Errorf("node %d: %w", i, cctx.Err())
		}
	}
	if len(nodes) == 1 {
		call(0)
		return out
	}
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Go(func() { call(i) })
	}
	wg.Wait()
	return out
}

// tally counts the nodes that answered 1 and collects the errors.
func tally(rs []reply) (ok int, errs []error) {
	for _, r := range rs {
		switch {
		case r.err != nil:
			errs = append(errs, r.err)
		case r.n == 1:
			ok++
		}
	}
	return ok, errs
}
