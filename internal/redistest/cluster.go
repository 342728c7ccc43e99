package redistest

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/internal/testenv"
)

// busOffset is how far above a cluster node's port its cluster bus port
// lies; Redis fixes it at 10000.
const busOffset = 10000

// Cluster is a Redis Cluster on loopback, every node in its own process
// and directory.
type Cluster struct {
	Nodes []*Server // every node as started, masters and replicas
}

// StartCluster starts masters*(1+replicasPerMaster) cluster nodes, joins
// them with redis-cli --cluster create and waits until every node sees
// all 16384 slots served (cluster_state:ok) and every replica is in sync
// with its master. The nodes keep an append only file, so that Stop on
// one is the crash of a node that has data. They are killed when the test
// ends. Without redis-server or redis-cli on PATH the test is skipped, or
// failed under CI=true.
func StartCluster(t testing.TB, masters, replicasPerMaster int) *Cluster {
	t.Helper()
	bin := testenv.LookPath(t, "Debian: apt-get install redis-server", "redis-server")
	cli := testenv.LookPath(t, "Debian: apt-get install redis-tools", "redis-cli")
	c := &Cluster{}
	for range masters * (1 + replicasPerMaster) {
		c.Nodes = append(c.Nodes, startClusterNode(t, bin))
	}

	ctx, cancel := context.WithTimeout(context.Background(), topologyTimeout)
	defer cancel()
	args := append([]string{"--cluster", "create"}, c.Seeds()...)
	args = append(args, "--cluster-replicas", strconv.Itoa(replicasPerMaster), "--cluster-yes")
	if out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("redistest: redis-cli --cluster create: %v\n%s", err, out)
	}

	// A client asks one node for the slot map: every node must know every
	// other and see every slot served before the cluster is usable from
	// any seed.
	waitFor(t, topologyTimeout, "cluster ready", func(ctx context.Context) error {
		for _, n := range c.Nodes {
			if err := clusterOK(ctx, n.Addr, len(c.Nodes)); err != nil {
				return err
			}
			r, err := role(ctx, n.Addr)
			if err != nil {
				return err
			}
			if r != "master" {
				if err := replicaLinked(ctx, n.Addr); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return c
}

// startClusterNode starts one cluster node on a port whose bus port is
// free too, trying a few ports because another process may take one
// before redis-server binds it.
func startClusterNode(t testing.TB, bin string) *Server {
	t.Helper()
	var lastErr error
	for range 3 {
		port, err := clusterPort()
		if err != nil {
			t.Fatalf("redistest: %v", err)
		}
		// nodes.conf is relative to --dir, which launchWith makes
		// per node.
		srv, err := launchWith(t, bin, port,
			"--appendonly", "yes",
			"--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "1000",
			// A replica's first sync starts at once, not after the
			// default 5 s wait for other replicas to join it.
			"--repl-diskless-sync-delay", "0",
		)
		if err == nil {
			return srv
		}
		lastErr = err
	}
	t.Fatalf("redistest: cluster node: %v", lastErr)
	return nil
}

// clusterPort finds a free loopback port whose bus port, port+10000, is
// free as well and still a valid port.
func clusterPort() (int, error) {
	for range 100 {
		port, err := freePort()
		if err != nil {
			return 0, err
		}
		if port+busOffset > 65535 {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port+busOffset)))
		if err != nil {
			continue
		}
		l.Close()
		return port, nil
	}
	return 0, fmt.Errorf("no free port with a free cluster bus port")
}

// clusterOK reports, as an error, what keeps the node at addr from seeing
// a usable cluster: a state other than ok, unassigned slots, or, when
// known is above 0, a count of known nodes other than known.
func clusterOK(ctx context.Context, addr string, known int) error {
	c := redis.NewClient(nodeOptions(addr))
	defer c.Close()
	info, err := c.ClusterInfo(ctx).Result()
	if err != nil {
		return fmt.Errorf("CLUSTER INFO on %s: %w", addr, err)
	}
	if s := lineField(info, "cluster_state"); s != "ok" {
		return fmt.Errorf("%s: cluster_state:%s", addr, s)
	}
	if s := lineField(info, "cluster_slots_assigned"); s != "16384" {
		return fmt.Errorf("%s: cluster_slots_assigned:%s", addr, s)
	}
	if n := lineField(info, "cluster_known_nodes"); known > 0 && n != strconv.Itoa(known) {
		return fmt.Errorf("%s: cluster_known_nodes:%s, want %d", addr, n, known)
	}
	return nil
}

// Seeds returns every node's address.
func (c *Cluster) Seeds() []string {
	addrs := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		addrs[i] = n.Addr
	}
	return addrs
}

// URL returns the cluster in go-redis's ParseClusterURL format: the first
// node in the host, the others as addr parameters.
func (c *Cluster) URL() string {
	var b strings.Builder
	fmt.Fprintf(&b, "redis://%s", c.Nodes[0].Addr)
	for i, n := range c.Nodes[1:] {
		sep := "&"
		if i == 0 {
			sep = "?"
		}
		fmt.Fprintf(&b, "%saddr=%s", sep, n.Addr)
	}
	return b.String()
}

// live returns the nodes that were not stopped.
func (c *Cluster) live() []*Server {
	var out []*Server
	for _, n := range c.Nodes {
		if n.stop != nil {
			out = append(out, n)
		}
	}
	return out
}

// node returns the node at addr, or nil.
func (c *Cluster) node(addr string) *Server {
	for _, n := range c.Nodes {
		if n.Addr == addr {
			return n
		}
	}
	return nil
}

// MasterFor returns the node that a live node currently gives as master
// of key's slot (CLUSTER KEYSLOT, then CLUSTER SLOTS).
func (c *Cluster) MasterFor(t testing.TB, key string) *Server {
	t.Helper()
	ctx := context.Background()
	var lastErr error
	for _, n := range c.live() {
		addr, err := masterOfKey(ctx, n.Addr, key)
		if err != nil {
			lastErr = err
			continue
		}
		if s := c.node(addr); s != nil {
			return s
		}
		lastErr = fmt.Errorf("%s gives %s, which is not a node of the cluster", n.Addr, addr)
	}
	t.Fatalf("redistest: master for %q: %v", key, lastErr)
	return nil
}

// masterOfKey asks the node at addr which master serves key's slot.
func masterOfKey(ctx context.Context, addr, key string) (string, error) {
	cl := redis.NewClient(nodeOptions(addr))
	defer cl.Close()
	slot, err := cl.ClusterKeySlot(ctx, key).Result()
	if err != nil {
		return "", fmt.Errorf("CLUSTER KEYSLOT on %s: %w", addr, err)
	}
	ranges, err := cl.ClusterSlots(ctx).Result()
	if err != nil {
		return "", fmt.Errorf("CLUSTER SLOTS on %s: %w", addr, err)
	}
	for _, r := range ranges {
		if int64(r.Start) <= slot && slot <= int64(r.End) && len(r.Nodes) > 0 {
			return r.Nodes[0].Addr, nil
		}
	}
	return "", fmt.Errorf("%s: slot %d not served", addr, slot)
}

// WaitHealthy waits up to within until every live node reports
// cluster_state:ok and gives only live nodes as masters of the slots.
// The second condition is what makes it safe to call right after a kill:
// until the failure is detected, the survivors still report ok with the
// dead node serving its slots.
func (c *Cluster) WaitHealthy(t testing.TB, within time.Duration) {
	t.Helper()
	live := c.live()
	addrs := make([]string, len(live))
	for i, n := range live {
		addrs[i] = n.Addr
	}
	waitFor(t, within, "cluster healthy", func(ctx context.Context) error {
		for _, addr := range addrs {
			if err := clusterOK(ctx, addr, 0); err != nil {
				return err
			}
			if err := mastersLive(ctx, addr, addrs); err != nil {
				return err
			}
		}
		return nil
	})
}

// mastersLive reports, as an error, a slot range that the node at addr
// gives to a master outside live.
func mastersLive(ctx context.Context, addr string, live []string) error {
	cl := redis.NewClient(nodeOptions(addr))
	defer cl.Close()
	ranges, err := cl.ClusterSlots(ctx).Result()
	if err != nil {
		return fmt.Errorf("CLUSTER SLOTS on %s: %w", addr, err)
	}
	for _, r := range ranges {
		if len(r.Nodes) == 0 || !slices.Contains(live, r.Nodes[0].Addr) {
			return fmt.Errorf("%s: slots %d-%d served by %v", addr, r.Start, r.End, r.Nodes)
		}
	}
	return nil
}
