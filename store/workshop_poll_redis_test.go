package store

import (
	"context"
	"errors"
	"testing"

	"github.com/alicebob/miniredis/v2"

	"github.com/locklab/locklab/internal/redistest"
	"github.com/locklab/locklab/workshop"
)

// TestRedisPredictGuardsTheStoredPrediction: a tally worked out from a
// prediction that has changed since it was read is refused and changes
// nothing, on miniredis and a real server, so a learner who changes their
// mind on two replicas at once still counts once.
func TestRedisPredictGuardsTheStoredPrediction(t *testing.T) {
	for name, addr := range map[string]func(t *testing.T) string{
		"miniredis":    func(t *testing.T) string { return miniredis.RunT(t).Addr() },
		"redis-server": func(t *testing.T) string { return redistest.Start(t) },
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			st := openRedisStore(t, addr(t))
			svc := newService(st)
			mustCreate(t, svc, workshop.Workshop{Code: "GUARD1", StartedAt: t0})
			mustJoin(t, svc, "GUARD1", alice, "Ann", t0)
			p, err := svc.OpenPoll(ctx, "GUARD1", pollSpec(), t0)
			if err != nil {
				t.Fatal(err)
			}
			if err := svc.Predict(ctx, "GUARD1", p.ID, alice, []string{"safe"}, t0); err != nil {
				t.Fatal(err)
			}
			r := st.b.(*redisBackend)
			// As if read before the first prediction: no stored one.
			err = r.run(ctx, predictScript, r.wsKeys("GUARD1"), p.ID, alice, toMillis(t0), ttlMillis(),
				"two-holders", "", "ok", predictAllowed, "two-holders", 1, workshop.AnsweredCounter, 1)
			if !errors.Is(err, errChanged) {
				t.Errorf("predict on a stale read = %v; want errChanged", err)
			}
			// A removal worked out before that prediction.
			err = r.run(ctx, removeScript, r.wsKeys("GUARD1"), alice, ttlMillis(), 0)
			if !errors.Is(err, errChanged) {
				t.Errorf("remove on a stale read = %v; want errChanged", err)
			}
			res, err := svc.Poll(ctx, "GUARD1", p.ID)
			if err != nil {
				t.Fatal(err)
			}
			if res.Joined != 1 || res.Answered != 1 || len(res.Counts) != 1 || res.Counts["safe"] != 1 {
				t.Errorf("poll after refused writes = %d joined, %d answered, %v; want 1, 1, safe 1", res.Joined, res.Answered, res.Counts)
			}
			if err := svc.Predict(ctx, "GUARD1", p.ID, alice, []string{"two-holders"}, t0); err != nil {
				t.Fatal(err)
			}
			if res, _ := svc.Poll(ctx, "GUARD1", p.ID); res.Answered != 1 || len(res.Counts) != 1 || res.Counts["two-holders"] != 1 {
				t.Errorf("poll after a change of mind = %d answered, %v; want 1, two-holders 1", res.Answered, res.Counts)
			}
		})
	}
}
