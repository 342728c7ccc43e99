package store

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	bolt "go.etcd.io/bbolt"
)

const testTTL = 30 * 24 * time.Hour

// TestRedisProgressExpires: a learner's hash lives testTTL after their
// last read or write, and reading a learner who saved nothing creates no
// key.
func TestRedisProgressExpires(t *testing.T) {
	ctx := context.Background()
	m := miniredis.RunT(t)
	s, err := OpenRedis("redis://"+m.Addr(), ProgressTTL(testTTL))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Progress(ctx, bob); err != nil {
		t.Fatal(err)
	}
	if keys := m.Keys(); len(keys) != 0 {
		t.Errorf("keys after reading a learner who saved nothing = %q; want none", keys)
	}
	if _, err := s.RecordAnswer(ctx, alice, "locks", "q1", true); err != nil {
		t.Fatal(err)
	}
	m.FastForward(testTTL - time.Hour)
	if _, err := s.Progress(ctx, alice); err != nil { // a read renews the TTL
		t.Fatal(err)
	}
	m.FastForward(testTTL - time.Hour)
	if l, _ := s.Progress(ctx, alice); len(l["locks"].Right) != 1 {
		t.Fatalf("after two idle spells shorter than the TTL = %+v; want the answer kept", l)
	}
	m.FastForward(testTTL + time.Second)
	if keys := m.Keys(); len(keys) != 0 {
		t.Errorf("keys after the TTL without a visit = %q; want none", keys)
	}
}

// TestBoltProgressExpires: the sweep drops learners last seen more than
// the TTL ago, a read renews the last-seen time, and a read of a learner
// who saved nothing writes nothing.
func TestBoltProgressExpires(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s, err := OpenBolt(t.TempDir(), ProgressTTL(testTTL), Clock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b := s.b.(*boltBackend)
	records := func() (learners, seen int) {
		_ = b.db.View(func(tx *bolt.Tx) error {
			learners = tx.Bucket(learnersBucket).Stats().BucketN - 1
			seen = tx.Bucket(seenBucket).Stats().KeyN
			return nil
		})
		return learners, seen
	}
	if _, err := s.Progress(ctx, bob); err != nil {
		t.Fatal(err)
	}
	if l, sn := records(); l != 0 || sn != 0 {
		t.Errorf("after reading a learner who saved nothing: %d learners, %d seen; want none", l, sn)
	}
	for _, id := range []string{alice, bob} {
		if _, err := s.RecordAnswer(ctx, id, "locks", "q1", true); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(testTTL / 2)
	if _, err := s.Progress(ctx, alice); err != nil { // alice comes back
		t.Fatal(err)
	}
	now = now.Add(testTTL/2 + time.Hour)
	if n := s.Sweep(now); n != 1 {
		t.Errorf("sweep dropped %d learners; want 1 (bob)", n)
	}
	if l, _ := s.Progress(ctx, alice); len(l["locks"].Right) != 1 {
		t.Errorf("alice after the sweep = %+v; want her answer kept", l)
	}
	if l, _ := s.Progress(ctx, bob); len(l) != 0 {
		t.Errorf("bob after the sweep = %+v; want nothing", l)
	}
	if l, sn := records(); l != 1 || sn != 1 {
		t.Errorf("after the sweep: %d learners, %d seen; want 1 and 1", l, sn)
	}
}

// TestBoltSweepIsBounded: one sweep looks at sweepBatch learners at most
// and the next goes on from there, so every learner is seen in turn.
func TestBoltSweepIsBounded(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s, err := OpenBolt(t.TempDir(), ProgressTTL(testTTL), Clock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = sweepBatch + sweepBatch/2
	b := s.b.(*boltBackend)
	if err := b.db.Update(func(tx *bolt.Tx) error {
		for i := range n {
			id := []byte(learnerN(i))
			if _, err := tx.Bucket(learnersBucket).CreateBucket(id); err != nil {
				return err
			}
			if err := tx.Bucket(seenBucket).Put(id, unixBytes(now)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	later := now.Add(testTTL + time.Hour)
	if got := s.Sweep(later); got != sweepBatch {
		t.Errorf("first sweep dropped %d; want %d", got, sweepBatch)
	}
	if got := s.Sweep(later); got != n-sweepBatch {
		t.Errorf("second sweep dropped %d; want the other %d", got, n-sweepBatch)
	}
	if got := s.Sweep(later); got != 0 {
		t.Errorf("third sweep dropped %d; want 0", got)
	}
}

func learnerN(i int) string {
	const digits = "0123456789"
	id := []byte("learner-00000000000000")
	for j := len(id) - 1; i > 0; j-- {
		id[j] = digits[i%10]
		i /= 10
	}
	return string(id)
}
