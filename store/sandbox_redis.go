package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// maxSandboxCopy bounds one copy of a sandbox. The playground bounds its
// copies by its own limits, well below this; it is a last guard for Redis.
const maxSandboxCopy = 16 << 20

// sandboxBackoff is how long SandboxCopies stops calling a Redis that
// failed: every playground command checks for a copy, and none should
// wait on a Redis that is down.
const sandboxBackoff = 2 * time.Second

// SandboxCopies keeps a copy of each learner's playground sandbox in
// Redis, so that every replica of the server can restore it: the sandbox
// follows the learner when a load balancer sends them to another replica.
// A copy is opaque bytes with a version, a random string that changes
// with every Save; it expires when the learner has been away for the ttl
// the caller gives. It has the methods of playground.SandboxCopies and is
// safe for concurrent use.
type SandboxCopies struct {
	rdb    *redis.Client
	prefix string

	mu        sync.Mutex
	downUntil time.Time
}

// SandboxCopies returns the store of sandbox copies and true when the
// store is Redis. The file store serves a single server, which has
// nothing to share.
func (s *Store) SandboxCopies() (*SandboxCopies, bool) {
	r, ok := s.b.(*redisBackend)
	if !ok {
		return nil, false
	}
	return &SandboxCopies{rdb: r.rdb, prefix: r.prefix + "sandbox:"}, true
}

// Fields of the hash that holds a learner's copy.
const (
	copyVersion = "v"
	copyData    = "data"
)

// Version returns the version of the learner's copy, "" if there is none,
// and keeps the copy for ttl more, in one round trip.
func (c *SandboxCopies) Version(ctx context.Context, learner string, ttl time.Duration) (string, error) {
	opCtx, cancel, err := c.begin(ctx, "version", learner)
	if err != nil {
		return "", err
	}
	defer cancel()
	var ver *redis.StringCmd
	_, err = c.rdb.Pipelined(opCtx, func(p redis.Pipeliner) error {
		ver = p.HGet(opCtx, c.prefix+learner, copyVersion)
		p.PExpire(opCtx, c.prefix+learner, ttl)
		return nil
	})
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", c.failed(ctx, "version", err)
	}
	return ver.Val(), nil
}

// Load returns the learner's copy and its version; "" if there is none.
func (c *SandboxCopies) Load(ctx context.Context, learner string) (string, []byte, error) {
	opCtx, cancel, err := c.begin(ctx, "load", learner)
	if err != nil {
		return "", nil, err
	}
	defer cancel()
	vals, err := c.rdb.HMGet(opCtx, c.prefix+learner, copyVersion, copyData).Result()
	if err != nil {
		return "", nil, c.failed(ctx, "load", err)
	}
	ver, _ := vals[0].(string)
	data, _ := vals[1].(string)
	if ver == "" {
		return "", nil, nil
	}
	return ver, []byte(data), nil
}

// Save replaces the learner's copy with data, kept for ttl, and returns
// its new version.
func (c *SandboxCopies) Save(ctx context.Context, learner string, data []byte, ttl time.Duration) (string, error) {
	if len(data) > maxSandboxCopy {
		return "", fmt.Errorf("store: save sandbox copy: %d bytes, more than %d", len(data), maxSandboxCopy)
	}
	opCtx, cancel, err := c.begin(ctx, "save", learner)
	if err != nil {
		return "", err
	}
	defer cancel()
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	ver := hex.EncodeToString(b)
	key := c.prefix + learner
	_, err = c.rdb.TxPipelined(opCtx, func(p redis.Pipeliner) error {
		p.HSet(opCtx, key, copyVersion, ver, copyData, data)
		p.PExpire(opCtx, key, ttl)
		return nil
	})
	if err != nil {
		return "", c.failed(ctx, "save", err)
	}
	return ver, nil
}

// begin checks the learner id and that Redis did not fail just now, and
// returns the context for one call.
func (c *SandboxCopies) begin(ctx context.Context, op, learner string) (context.Context, context.CancelFunc, error) {
	if err := checkLearner(learner); err != nil {
		return nil, nil, fmt.Errorf("store: %s sandbox copy: %w", op, err)
	}
	c.mu.Lock()
	down := time.Now().Before(c.downUntil)
	c.mu.Unlock()
	if down {
		return nil, nil, fmt.Errorf("store: %s sandbox copy: %w: recently unreachable", op, ErrUnavailable)
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	return ctx, cancel, nil
}

// failed notes that Redis failed, so that calls in the next moments fail
// at once, and returns the error to report. A call that failed because
// its caller gave up (ctx) says nothing about Redis.
func (c *SandboxCopies) failed(ctx context.Context, op string, err error) error {
	if ctx.Err() == nil {
		c.mu.Lock()
		c.downUntil = time.Now().Add(sandboxBackoff)
		c.mu.Unlock()
	}
	return fmt.Errorf("store: %s sandbox copy: %w", op, unavailable(err))
}
