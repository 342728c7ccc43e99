package lock

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/internal/fakeclock"
	"github.com/locklab/locklab/internal/redistest"
)

// server is one Redis under test: a client and a way to let a key's TTL run
// out without waiting for it.
type server struct {
	client *redis.Client
	expire func(t *testing.T, key string)
}

// backend starts servers of one kind. Every test case runs against each
// backend, so what passes on miniredis is checked on a real redis-server.
type backend struct {
	name  string
	start func(t *testing.T) server
}

func backends() []backend {
	return []backend{
		{name: "miniredis", start: startMini},
		{name: "redis-server", start: startReal},
	}
}

// forEachBackend runs f as a subtest per backend.
func forEachBackend(t *testing.T, f func(t *testing.T, b backend)) {
	t.Helper()
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) { f(t, b) })
	}
}

func startMini(t *testing.T) server {
	t.Helper()
	m := miniredis.RunT(t)
	return server{
		client: newClient(t, m.Addr()),
		expire: func(t *testing.T, key string) {
			t.Helper()
			ttl := m.TTL(key)
			if ttl <= 0 {
				t.Fatalf("expire(%q): key has no TTL", key)
			}
			m.FastForward(ttl)
		},
	}
}

func startReal(t *testing.T) server {
	t.Helper()
	c := newClient(t, redistest.Start(t))
	return server{
		client: c,
		// A PEXPIREAT in the past removes the key the way its TTL running
		// out would, without a sleep.
		expire: func(t *testing.T, key string) {
			t.Helper()
			if err := c.PExpireAt(context.Background(), key, time.UnixMilli(1)).Err(); err != nil {
				t.Fatalf("expire(%q): %v", key, err)
			}
		},
	}
}

func newClient(t *testing.T, addr string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// startN starts n servers of backend b and returns them with their clients
// as Redlock nodes.
func startN(t *testing.T, b backend, n int) ([]server, []redis.Scripter) {
	t.Helper()
	servers := make([]server, n)
	nodes := make([]redis.Scripter, n)
	for i := range servers {
		servers[i] = b.start(t)
		nodes[i] = servers[i].client
	}
	return servers, nodes
}

// deadAddr returns a loopback address where nothing listens.
func deadAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// silentAddr returns a loopback address that accepts connections and never
// answers, like a node stuck in a pause.
func silentAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return l.Addr().String()
}

// newFakeClock is the tests' shared fake clock, as a lock.Clock: Sleep
// returns at once, having moved the time on.
func newFakeClock() *fakeclock.Clock {
	return fakeclock.New(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC))
}

// get returns the value of key, or "" if it does not exist.
func get(t *testing.T, c redis.Scripter, key string) string {
	t.Helper()
	v, err := c.(redis.Cmdable).Get(context.Background(), key).Result()
	if err == redis.Nil {
		return ""
	}
	if err != nil {
		t.Fatalf("GET %s: %v", key, err)
	}
	return v
}

// pttl returns the remaining TTL of key.
func pttl(t *testing.T, c redis.Scripter, key string) time.Duration {
	t.Helper()
	d, err := c.(redis.Cmdable).PTTL(context.Background(), key).Result()
	if err != nil {
		t.Fatalf("PTTL %s: %v", key, err)
	}
	return d
}

// set stores value in key, the way another client's lock would.
func set(t *testing.T, c redis.Scripter, key, value string, ttl time.Duration) {
	t.Helper()
	if err := c.(redis.Cmdable).Set(context.Background(), key, value, ttl).Err(); err != nil {
		t.Fatalf("SET %s: %v", key, err)
	}
}
