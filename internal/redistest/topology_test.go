package redistest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/internal/testenv"
)

// failoverWithin is how long the tests give a failover: with a 1 s down
// or node timeout it takes a few seconds, so this is a hang guard.
const failoverWithin = 15 * time.Second

// retryFor calls f every pollInterval until it returns nil or within has
// passed, and returns f's last error: a client that lost its node needs a
// moment to find the new one.
func retryFor(within time.Duration, f func(context.Context) error) error {
	deadline := time.Now().Add(within)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := f(ctx)
		cancel()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(pollInterval)
	}
}

func TestStartSentinel(t *testing.T) {
	testenv.Slow(t, "failover")
	s := StartSentinel(t)
	opt, err := redis.ParseFailoverURL(s.URL())
	if err != nil {
		t.Fatalf("ParseFailoverURL(%q) = %v", s.URL(), err)
	}
	rdb := redis.NewFailoverClient(opt)
	defer rdb.Close()
	ctx := context.Background()

	if got := s.CurrentMaster(t); got != s.Master.Addr {
		t.Fatalf("CurrentMaster = %s; want the master as started, %s", got, s.Master.Addr)
	}
	if err := rdb.Set(ctx, "k", "v1", 0).Err(); err != nil {
		t.Fatalf("SET before the failover: %v", err)
	}
	// Replication is asynchronous: without WAIT the crash could lose the
	// write and the test would check Redis, not the helper.
	if n, err := rdb.Do(ctx, "WAIT", 1, 2000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 = %d, %v; want 1 replica", n, err)
	}

	start := time.Now()
	s.Master.Stop()
	got := s.WaitForFailover(t, s.Master.Addr, failoverWithin)
	t.Logf("sentinel failover from %s to %s took %v", s.Master.Addr, got, time.Since(start))
	if got != s.Replica.Addr {
		t.Errorf("new master = %s; want the replica, %s", got, s.Replica.Addr)
	}

	err = retryFor(5*time.Second, func(ctx context.Context) error {
		if v, err := rdb.Get(ctx, "k").Result(); err != nil || v != "v1" {
			return fmt.Errorf("GET k = %q, %v; want v1", v, err)
		}
		if err := rdb.Set(ctx, "k", "v2", 0).Err(); err != nil {
			return fmt.Errorf("SET k: %w", err)
		}
		if v, err := rdb.Get(ctx, "k").Result(); err != nil || v != "v2" {
			return fmt.Errorf("GET k after SET = %q, %v; want v2", v, err)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("through the FailoverClient after the failover: %v", err)
	}
	t.Logf("client served again %v after the kill", time.Since(start))
}

func TestStartCluster(t *testing.T) {
	testenv.Slow(t, "failover")
	c := StartCluster(t, 3, 1)
	if len(c.Nodes) != 6 || len(c.Seeds()) != 6 {
		t.Fatalf("%d nodes, %d seeds; want 6", len(c.Nodes), len(c.Seeds()))
	}
	opt, err := redis.ParseClusterURL(c.URL())
	if err != nil {
		t.Fatalf("ParseClusterURL(%q) = %v", c.URL(), err)
	}
	if len(opt.Addrs) != 6 {
		t.Fatalf("ParseClusterURL(%q) gives %d addresses; want 6", c.URL(), len(opt.Addrs))
	}
	rdb := redis.NewClusterClient(opt)
	defer rdb.Close()
	ctx := context.Background()

	const keys = 100
	for i := range keys {
		if err := rdb.Set(ctx, fmt.Sprintf("k%d", i), i, 0).Err(); err != nil {
			t.Fatalf("SET k%d: %v", i, err)
		}
	}
	// As for Sentinel: the writes must reach the replicas before the crash.
	err = rdb.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		if n, err := m.Do(ctx, "WAIT", 1, 2000).Int(); err != nil || n != 1 {
			return fmt.Errorf("WAIT 1 on %s = %d, %v; want 1 replica", m.Options().Addr, n, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	victim := c.MasterFor(t, "k0")
	start := time.Now()
	victim.Stop()
	c.WaitHealthy(t, failoverWithin)
	t.Logf("cluster failover away from %s took %v", victim.Addr, time.Since(start))
	if now := c.MasterFor(t, "k0"); now == victim {
		t.Fatalf("MasterFor(k0) = %s after the failover; want another node", now.Addr)
	}

	// go-redis's ClusterClient reloads its slot map on MOVED, on READONLY
	// or once a minute (ClusterStateReloadInterval), not when a master
	// refuses connections: left alone it keeps dialling the dead node for
	// up to a minute. Ask for the reload a client would get on its own
	// later, and again whenever a read fails.
	rdb.ReloadState(ctx)
	for i := range keys {
		key := fmt.Sprintf("k%d", i)
		err := retryFor(5*time.Second, func(ctx context.Context) error {
			v, err := rdb.Get(ctx, key).Int()
			if err != nil {
				rdb.ReloadState(ctx)
			}
			if err != nil || v != i {
				return fmt.Errorf("GET %s = %d, %v; want %d", key, v, err, i)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("all %d keys read %v after the kill", keys, time.Since(start))
}
