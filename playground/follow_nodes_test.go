package playground

import (
	"context"
	"testing"
	"time"
)

// TestFollowNodesAcrossReplicas: a learner's five nodes, their states,
// clocks and the storage move with them from replica to replica, as one.
func TestFollowNodesAcrossReplicas(t *testing.T) {
	m1, m2, _, clock := newReplicas(t, Options{})
	ctx := context.Background()
	mustExec(t, m1, "ada", ClientA, "@3 SET lock a NX PX 30000")
	mustExec(t, m1, "ada", ClientA, "@storage WRITE 34 report")
	if _, err := m1.Node(ctx, "ada", 4, NodeOp{Action: NodeStop}); err != nil {
		t.Fatal(err)
	}
	if _, err := m1.Node(ctx, "ada", 5, NodeOp{Action: NodeClock, Jump: 7 * time.Second}); err != nil {
		t.Fatal(err)
	}
	clock.Add(10 * time.Second)
	wantOutput(t, m2, "replica 2", "ada", ClientB, "@3 PTTL lock", "(integer) 20000")
	wantOutput(t, m2, "replica 2", "ada", ClientB, "@4 PING", "Could not connect to Redis at node 4: Connection refused")
	wantOutput(t, m2, "replica 2", "ada", ClientB, "@storage WRITE 33 stale", "rejected: token 33 is lower than 34, which it has already seen")
	wantOutput(t, m2, "replica 2", "ada", ClientB, "@1 EXISTS lock", "(integer) 0")
	info, err := m2.Nodes("ada")
	if err != nil || info[4].SkewMS != 7000 || info[3].Up || !info[2].Used {
		t.Errorf("replica 2 Nodes = %+v, %v; want node 5 7 s ahead, node 4 down, node 3 used", info, err)
	}
	// And back, with a change made on replica 2.
	if _, err := m2.Node(ctx, "ada", 4, NodeOp{Action: NodeStart}); err != nil {
		t.Fatal(err)
	}
	wantOutput(t, m1, "replica 1", "ada", ClientA, "@4 PING", "PONG")
}
