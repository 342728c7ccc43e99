package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/internal/testenv"
)

// topologyTimeout bounds how long StartSentinel and StartCluster wait for
// the group to settle: Sentinels find each other through hello messages
// sent every 2 s, and a cluster needs a few gossip rounds.
const topologyTimeout = 30 * time.Second

// pollInterval is how often the helpers ask the servers again while they
// wait for a state.
const pollInterval = 25 * time.Millisecond

// Sentinel is a master, its replica and three Sentinels monitoring them,
// all on loopback: enough for a real failover.
type Sentinel struct {
	MasterName string   // the name the Sentinels monitor the master under
	Sentinels  []string // the Sentinels' addresses, host:port
	Master     *Server  // the master as started; it stays the master until a failover
	Replica    *Server  // the replica as started
}

// StartSentinel starts a master, a replica of it and three Sentinels that
// monitor it as "mymaster" with quorum 2, and waits until a failover is
// possible: the replica is in sync and every Sentinel knows the master,
// the replica and the two other Sentinels. The data nodes keep an append
// only file, so that Stop on one is the crash of a node that has data.
// Everything is killed when the test ends. Without redis-server on PATH
// the test is skipped, or failed under CI=true.
func StartSentinel(t testing.TB) *Sentinel {
	t.Helper()
	bin := testenv.LookPath(t, "Debian: apt-get install redis-server", "redis-server")
	// The replica's first sync starts at once, not after the default 5 s
	// wait for other replicas to join it.
	master := launchRetry(t, bin, "--appendonly", "yes", "--repl-diskless-sync-delay", "0")
	replica := launchRetry(t, bin, "--appendonly", "yes",
		"--replicaof", "127.0.0.1", strconv.Itoa(master.Port))
	// A Sentinel finds the replicas in the master's INFO, which it asks
	// for as soon as it connects and then only every 10 s: a replica that
	// is linked first is known at once.
	waitFor(t, topologyTimeout, "replica "+replica.Addr+" linked to "+master.Addr, func(ctx context.Context) error {
		return replicaLinked(ctx, replica.Addr)
	})

	s := &Sentinel{MasterName: "mymaster", Master: master, Replica: replica}
	for range 3 {
		s.Sentinels = append(s.Sentinels, s.startOne(t, bin))
	}
	for _, addr := range s.Sentinels {
		waitFor(t, topologyTimeout, "sentinel "+addr+" ready for a failover", func(ctx context.Context) error {
			return s.ready(ctx, addr)
		})
	}
	return s
}

// launchRetry runs launchWith on a free port, trying a few ports because
// another process may take the port before redis-server binds it.
func launchRetry(t testing.TB, bin string, extraArgs ...string) *Server {
	t.Helper()
	var lastErr error
	for range 3 {
		port, err := freePort()
		if err != nil {
			t.Fatalf("redistest: %v", err)
		}
		srv, err := launchWith(t, bin, port, extraArgs...)
		if err == nil {
			return srv
		}
		lastErr = err
	}
	t.Fatalf("redistest: %v", lastErr)
	return nil
}

// startOne starts a Sentinel and returns its address. Each has its own
// config file, since a Sentinel rewrites it to record what it learns.
func (s *Sentinel) startOne(t testing.TB, bin string) string {
	t.Helper()
	var lastErr error
	for range 3 {
		port, err := freePort()
		if err != nil {
			t.Fatalf("redistest: %v", err)
		}
		dir := t.TempDir()
		conf := filepath.Join(dir, "sentinel.conf")
		// resolve-hostnames no keeps the Sentinels on addresses, which
		// is what the clients are given.
		text := fmt.Sprintf(`port %d
bind 127.0.0.1
dir %s
sentinel resolve-hostnames no
sentinel monitor %s 127.0.0.1 %d 2
sentinel down-after-milliseconds %[3]s 1000
sentinel failover-timeout %[3]s 5000
sentinel parallel-syncs %[3]s 1
`, port, dir, s.MasterName, s.Master.Port)
		if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
			t.Fatalf("redistest: %v", err)
		}
		srv, err := launchArgs(t, bin, port, []string{conf, "--sentinel"})
		if err == nil {
			return srv.Addr
		}
		lastErr = err
	}
	t.Fatalf("redistest: sentinel: %v", lastErr)
	return ""
}

// ready reports, as an error, what the Sentinel at addr still lacks for
// a failover: the master, a replica, or the two other Sentinels that make
// up the quorum and elect a leader.
func (s *Sentinel) ready(ctx context.Context, addr string) error {
	sc := redis.NewSentinelClient(nodeOptions(addr))
	defer sc.Close()
	if _, err := sc.GetMasterAddrByName(ctx, s.MasterName).Result(); err != nil {
		return fmt.Errorf("master: %w", err)
	}
	replicas, err := sc.Replicas(ctx, s.MasterName).Result()
	if err != nil {
		return fmt.Errorf("replicas: %w", err)
	}
	if len(replicas) == 0 {
		return fmt.Errorf("no replica known yet")
	}
	others, err := sc.Sentinels(ctx, s.MasterName).Result()
	if err != nil {
		return fmt.Errorf("sentinels: %w", err)
	}
	if len(others) != len(s.Sentinels)-1 {
		return fmt.Errorf("knows %d other sentinels, want %d", len(others), len(s.Sentinels)-1)
	}
	return nil
}

// URL returns the group in go-redis's ParseFailoverURL format: the first
// Sentinel in the host, the others as addr parameters.
func (s *Sentinel) URL() string {
	var b strings.Builder
	fmt.Fprintf(&b, "redis://%s?master_name=%s", s.Sentinels[0], s.MasterName)
	for _, a := range s.Sentinels[1:] {
		fmt.Fprintf(&b, "&addr=%s", a)
	}
	return b.String()
}

// CurrentMaster returns the master's address as the first Sentinel that
// answers gives it (SENTINEL GET-MASTER-ADDR-BY-NAME).
func (s *Sentinel) CurrentMaster(t testing.TB) string {
	t.Helper()
	var lastErr error
	for _, addr := range s.Sentinels {
		m, err := s.masterFrom(context.Background(), addr)
		if err == nil {
			return m
		}
		lastErr = err
	}
	t.Fatalf("redistest: no sentinel gives the master: %v", lastErr)
	return ""
}

// masterFrom asks the Sentinel at addr for the master's address.
func (s *Sentinel) masterFrom(ctx context.Context, addr string) (string, error) {
	sc := redis.NewSentinelClient(nodeOptions(addr))
	defer sc.Close()
	hp, err := sc.GetMasterAddrByName(ctx, s.MasterName).Result()
	if err != nil {
		return "", fmt.Errorf("sentinel %s: %w", addr, err)
	}
	if len(hp) != 2 {
		return "", fmt.Errorf("sentinel %s: master address %q", addr, hp)
	}
	return net.JoinHostPort(hp[0], hp[1]), nil
}

// WaitForFailover waits up to within until every Sentinel gives the same
// master address, other than from, and the server there answers ROLE as a
// master, and returns that address. Asking every Sentinel, not one, means
// a client may ask any of them and be sent to the new master.
func (s *Sentinel) WaitForFailover(t testing.TB, from string, within time.Duration) string {
	t.Helper()
	var master string
	waitFor(t, within, "failover away from "+from, func(ctx context.Context) error {
		var seen string
		for _, addr := range s.Sentinels {
			m, err := s.masterFrom(ctx, addr)
			if err != nil {
				return err
			}
			if m == from {
				return fmt.Errorf("sentinel %s still gives %s", addr, from)
			}
			if seen != "" && m != seen {
				return fmt.Errorf("sentinels disagree: %s and %s", seen, m)
			}
			seen = m
		}
		role, err := role(ctx, seen)
		if err != nil {
			return err
		}
		if role != "master" {
			return fmt.Errorf("%s is still a %s", seen, role)
		}
		master = seen
		return nil
	})
	return master
}

// role returns the first element of ROLE at addr: master, slave or
// sentinel.
func role(ctx context.Context, addr string) (string, error) {
	c := redis.NewClient(nodeOptions(addr))
	defer c.Close()
	v, err := c.Do(ctx, "ROLE").Slice()
	if err != nil {
		return "", fmt.Errorf("ROLE on %s: %w", addr, err)
	}
	if len(v) == 0 {
		return "", fmt.Errorf("ROLE on %s: empty reply", addr)
	}
	r, _ := v[0].(string)
	return r, nil
}

// replicaLinked reports, as an error, whether the replica at addr is not
// yet in sync with its master (master_link_status is not up).
func replicaLinked(ctx context.Context, addr string) error {
	info, err := infoField(ctx, addr, "replication", "master_link_status")
	if err != nil {
		return err
	}
	if info != "up" {
		return fmt.Errorf("%s: master_link_status:%s", addr, info)
	}
	return nil
}

// infoField returns field from the INFO section at addr.
func infoField(ctx context.Context, addr, section, field string) (string, error) {
	c := redis.NewClient(nodeOptions(addr))
	defer c.Close()
	info, err := c.Info(ctx, section).Result()
	if err != nil {
		return "", fmt.Errorf("INFO %s on %s: %w", section, addr, err)
	}
	return lineField(info, field), nil
}

// lineField finds "field:value" among the lines of an INFO or CLUSTER
// INFO reply and returns value, or "" when the field is missing.
func lineField(text, field string) string {
	for line := range strings.SplitSeq(text, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v
		}
	}
	return ""
}

// nodeOptions are the client options the helpers use to ask one server:
// short timeouts and no retries, since they poll again anyway and a dead
// node must not hold them up; RESP2 and no CLIENT SETINFO, which keeps
// the handshake to what every server and Sentinel answers.
func nodeOptions(addr string) *redis.Options {
	return &redis.Options{
		Addr:            addr,
		Protocol:        2,
		DisableIdentity: true,
		DialTimeout:     500 * time.Millisecond,
		ReadTimeout:     500 * time.Millisecond,
		WriteTimeout:    500 * time.Millisecond,
		MaxRetries:      -1,
		PoolSize:        1,
	}
}

// waitFor calls check every pollInterval until it returns nil, and fails
// the test with what was awaited and check's last error once within has
// passed.
func waitFor(t testing.TB, within time.Duration, what string, check func(context.Context) error) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := check(ctx)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("redistest: %s: not done after %v: %v", what, within, err)
		}
		time.Sleep(pollInterval)
	}
}
