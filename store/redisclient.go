package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The Redis deployments the store runs on. One client type (go-redis's
// UniversalClient) serves all three, and every key a script or a
// transaction touches together shares a hash tag, so the same calls work
// on a cluster.
const (
	// ModeSingle is one Redis node: redis://[user:pass@]host:port/db.
	ModeSingle = "single"
	// ModeSentinel is a master found through Sentinel:
	// redis://sentinel1:26379?master_name=mymaster&addr=sentinel2:26379.
	// A URL with master_name is read this way without the mode being set.
	ModeSentinel = "sentinel"
	// ModeCluster is a Redis Cluster, given by seed nodes:
	// redis://node1:6379?addr=node2:6379&addr=node3:6379.
	ModeCluster = "cluster"
)

// RedisMode says which kind of Redis the URL names (ModeSingle,
// ModeSentinel or ModeCluster); "" reads a URL with master_name as
// Sentinel and any other as a single node.
func RedisMode(mode string) Option {
	return func(o *options) { o.redisMode = mode }
}

// Timeouts of every Redis client: an unreachable Redis turns into
// ErrUnavailable within a second instead of a hanging request.
const (
	dialTimeout  = 300 * time.Millisecond
	readTimeout  = time.Second
	writeTimeout = time.Second
	poolTimeout  = time.Second
	// poolSize is a replica's connections to each Redis node. go-redis's
	// default, ten per CPU, ran out with 1,000 learners on two replicas
	// of a 2-CPU host: every request waits on Redis a little, and each
	// open event stream asks it once a second. Connections are cheap for
	// Redis (it takes 10,000 by default).
	poolSize = 128
	// A Redis that refuses connections should fail a call in
	// milliseconds, not after go-redis's default five dial attempts.
	dialerRetries      = 2
	dialerRetryTimeout = 50 * time.Millisecond
)

// redisClient is a client for one of the deployments, with the name of
// what it connects to for logs (without the password).
type redisClient struct {
	redis.UniversalClient
	name, mode string
}

// newRedisClient opens a client for rawURL as mode says. The URL is
// checked here, so a wrong one stops the server at start with the reason.
// callTimeout is options.callTimeout (see limits).
func newRedisClient(rawURL, mode string, callTimeout time.Duration) (redisClient, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return redisClient{}, fmt.Errorf("store: REDIS_URL: %w", err)
	}
	q := u.Query()
	if err := checkAddrs(u.Host, q["addr"]); err != nil {
		return redisClient{}, err
	}
	if mode == "" {
		mode = ModeSingle
		if q.Has("master_name") {
			mode = ModeSentinel
		}
	}
	switch mode {
	case ModeSingle:
		if q.Has("addr") {
			return redisClient{}, fmt.Errorf("store: REDIS_URL gives several addresses (addr=): add master_name=NAME for Sentinel, or set LOCKLAB_REDIS_MODE=cluster for a Redis Cluster")
		}
		opt, err := redis.ParseURL(rawURL)
		if err != nil {
			return redisClient{}, fmt.Errorf("store: REDIS_URL: %w", err)
		}
		limits(&opt.DialTimeout, &opt.ReadTimeout, &opt.WriteTimeout, &opt.PoolTimeout, &opt.PoolSize, &opt.MaxRetries, &opt.DialerRetries, &opt.DialerRetryTimeout, &opt.ContextTimeoutEnabled, callTimeout)
		return redisClient{redis.NewClient(opt), "redis " + opt.Addr, mode}, nil
	case ModeSentinel:
		if q.Get("master_name") == "" {
			return redisClient{}, fmt.Errorf("store: REDIS_URL: Sentinel needs the master's name (master_name=NAME)")
		}
		opt, err := redis.ParseFailoverURL(rawURL)
		if err != nil {
			return redisClient{}, fmt.Errorf("store: REDIS_URL (Sentinel): %w", err)
		}
		limits(&opt.DialTimeout, &opt.ReadTimeout, &opt.WriteTimeout, &opt.PoolTimeout, &opt.PoolSize, &opt.MaxRetries, &opt.DialerRetries, &opt.DialerRetryTimeout, &opt.ContextTimeoutEnabled, callTimeout)
		return redisClient{redis.NewFailoverClient(opt), fmt.Sprintf("redis sentinel %s at %s", opt.MasterName, strings.Join(opt.SentinelAddrs, ",")), mode}, nil
	case ModeCluster:
		if q.Has("master_name") {
			return redisClient{}, fmt.Errorf("store: REDIS_URL: master_name is for Sentinel, not a cluster")
		}
		if u.Path != "" && u.Path != "/" && u.Path != "/0" {
			return redisClient{}, fmt.Errorf("store: REDIS_URL: a Redis Cluster has database 0 only, not %s", strings.TrimPrefix(u.Path, "/"))
		}
		u.Path = ""
		opt, err := redis.ParseClusterURL(u.String())
		if err != nil {
			return redisClient{}, fmt.Errorf("store: REDIS_URL (cluster): %w", err)
		}
		limits(&opt.DialTimeout, &opt.ReadTimeout, &opt.WriteTimeout, &opt.PoolTimeout, &opt.PoolSize, &opt.MaxRetries, &opt.DialerRetries, &opt.DialerRetryTimeout, &opt.ContextTimeoutEnabled, callTimeout)
		cc := redis.NewClusterClient(opt)
		cc.AddHook(reloadOnFailure{cc})
		return redisClient{cc, "redis cluster " + strings.Join(opt.Addrs, ","), mode}, nil
	}
	return redisClient{}, fmt.Errorf("store: LOCKLAB_REDIS_MODE %q: want %s, %s or %s", mode, ModeSingle, ModeSentinel, ModeCluster)
}

// checkAddrs refuses an address in REDIS_URL that no Redis can be at: a
// port missing from an addr= or out of range, or several hosts written
// in the URL's one host (redis://a:6379,b:6379), which go-redis would
// take as one strange name and fail to dial on every call, so that the
// mistake showed only as a replica that is never ready. The URL's own
// host may be left out (go-redis then uses localhost:6379), as redis-cli
// allows.
func checkAddrs(host string, more []string) error {
	check := func(what, addr string, needPort bool) error {
		if strings.Contains(addr, ",") {
			return fmt.Errorf("store: REDIS_URL: %s %q names several hosts: give each further one as addr=HOST:PORT", what, addr)
		}
		if addr == "" && !needPort {
			return nil
		}
		h, port, err := net.SplitHostPort(addr)
		switch {
		case err != nil && !needPort && strings.Contains(err.Error(), "missing port"):
			h, port = addr, "6379"
		case err != nil:
			return fmt.Errorf("store: REDIS_URL: %s %q: want HOST:PORT", what, addr)
		case port == "" && !needPort: // host: reads as host:6379
			port = "6379"
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("store: REDIS_URL: %s %q: the port must be a number from 1 to 65535", what, addr)
		}
		if h == "" && needPort {
			return fmt.Errorf("store: REDIS_URL: %s %q has no host", what, addr)
		}
		return nil
	}
	if err := check("the address", host, false); err != nil {
		return err
	}
	for _, a := range more {
		if err := check("addr=", a, true); err != nil {
			return err
		}
	}
	return nil
}

// limits sets a client's timeouts, pool and retries, the same whatever the
// deployment. There are no retries: many calls are scripts that count
// (answers, commands, limits), and one retried after a read timeout,
// though Redis had run it, would count twice. A failed call reports
// ErrUnavailable instead. A callTimeout above 0 replaces readTimeout.
func limits(dial, read, write, pool *time.Duration, size, retries, dialRetries *int, dialRetryTimeout *time.Duration, contextTimeouts *bool, callTimeout time.Duration) {
	*dial, *read, *write, *pool, *size = dialTimeout, cmp.Or(callTimeout, readTimeout), writeTimeout, poolTimeout, poolSize
	*retries, *dialRetries, *dialRetryTimeout = -1, dialerRetries, dialerRetryTimeout
	// Each call's context deadline bounds its reads and writes too, not
	// only its wait for a connection: without it go-redis waits on a
	// Redis that stopped answering for readTimeout whatever the caller's
	// deadline, and the breakers' own timeouts never end a call.
	*contextTimeouts = true
}

// reloadOnFailure has a cluster client read the cluster's slots again
// after a call fails. go-redis reloads them on a MOVED reply, or once a
// minute; a master that died answers nothing at all, so without this the
// client would go on calling it for up to a minute after a replica took
// its place. Reloads are coalesced by go-redis (one at a time, 200 ms
// apart), so a burst of failures costs a few.
type reloadOnFailure struct{ cc *redis.ClusterClient }

func (h reloadOnFailure) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h reloadOnFailure) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.after(ctx, err)
		return err
	}
}

func (h reloadOnFailure) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		h.after(ctx, err)
		return err
	}
}

// after asks for a reload unless err is no failure of the cluster: none,
// a missing key, or the caller going away.
func (h reloadOnFailure) after(ctx context.Context, err error) {
	if err == nil || errors.Is(err, redis.Nil) || errors.Is(err, context.Canceled) {
		return
	}
	h.cc.ReloadState(ctx)
}
