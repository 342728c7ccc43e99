package playground

import (
	"context"
	"fmt"
)

// Node applies op to the learner's node n (1 to MaxNodes), starting their
// sandbox, or that node, if they have none yet.
func (m *Manager) Node(ctx context.Context, learner string, n int, op NodeOp) (NodeChange, error) {
	for attempt := 0; ; attempt++ {
		s, _, err := m.get(learner, true)
		if err != nil {
			return NodeChange{}, err
		}
		var c NodeChange
		_, err = m.use(ctx, s, func(box Box) (err error) {
			ns, err := nodesOf(box)
			if err != nil {
				return err
			}
			c, err = ns.control(n, op)
			if err == nil {
				// A node that came back empty frees its data.
				m.mu.Lock()
				if !s.gone {
					m.setSizeLocked(s, ns.size())
				}
				m.mu.Unlock()
			}
			return err
		})
		if m.retry(err, attempt) {
			continue
		}
		return c, err
	}
}

// Nodes describes the learner's nodes; node 1 alone, running, for a
// learner without a sandbox.
func (m *Manager) Nodes(learner string) ([]NodeInfo, error) {
	for attempt := 0; ; attempt++ {
		s, err := m.find(learner)
		if err != nil {
			return nil, err
		}
		if s == nil {
			return FreshNodes(), nil
		}
		var info []NodeInfo
		_, err = m.use(context.Background(), s, func(box Box) error {
			ns, err := nodesOf(box)
			if err == nil {
				info, err = ns.info()
			}
			return err
		})
		if m.retry(err, attempt) {
			continue
		}
		return info, err
	}
}

// nodesOf returns the node set a Manager keeps as a learner's box.
func nodesOf(box Box) (*nodeSet, error) {
	ns, ok := box.(*nodeSet)
	if !ok {
		return nil, fmt.Errorf("playground: a learner's box is a %T, not their nodes", box)
	}
	return ns, nil
}
