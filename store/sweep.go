package store

import (
	"bytes"
	"time"

	bolt "go.etcd.io/bbolt"
)

// sweepBatch bounds the records one sweep looks at in each bucket, so a
// sweep is one short transaction however many learners there are; each
// sweep goes on where the last stopped, so all are seen in turn.
const sweepBatch = 1000

// Sweep drops what has outlived its time at now: learners not seen for
// the progress TTL and transfer codes past their grace, at most
// sweepBatch of each; then, if learners already saved have grown the
// records past the size cap, the longest idle anonymous learners until
// they are back under it (size.go). It returns how many it dropped. Redis
// drops what expires by itself (key expiry) and keeps to its own
// maxmemory, so there Sweep does nothing. Call it now and then
// (cmd/locklab: once a minute); a failed sweep is tried again by the next
// one.
func (s *Store) Sweep(now time.Time) int {
	b, ok := s.b.(*boltBackend)
	if !ok {
		return 0
	}
	return b.sweep(now) + b.shrink()
}

func (b *boltBackend) sweep(now time.Time) int {
	b.sweepMu.Lock()
	defer b.sweepMu.Unlock()
	dropped, learners := 0, 0
	defer func() {
		if learners > 0 {
			b.flags.forgetAll()
		}
	}()
	err := b.db.Update(func(tx *bolt.Tx) error {
		n, next, err := sweepLearners(tx, b.learnerCursor, now.Add(-b.ttl), now)
		if err != nil {
			return err
		}
		m, nextCode, err := sweepCarry(tx, b.carryAt, now.Add(-carryGrace))
		if err != nil {
			return err
		}
		dropped, learners, b.learnerCursor, b.carryAt = n+m, n, next, nextCode
		return nil
	})
	if err != nil {
		return 0
	}
	return dropped
}

// scan visits up to sweepBatch keys of bk after from (from the start if
// from is nil) and returns the key to go on after, nil at the end.
func scan(bk *bolt.Bucket, from []byte, visit func(k, v []byte)) []byte {
	c := bk.Cursor()
	k, v := c.First()
	if from != nil {
		if k, v = c.Seek(from); k != nil && bytes.Equal(k, from) {
			k, v = c.Next()
		}
	}
	var last []byte
	for i := 0; k != nil && i < sweepBatch; i++ {
		visit(k, v)
		last = append([]byte(nil), k...)
		k, v = c.Next()
	}
	if k == nil {
		return nil
	}
	return last
}

// sweepLearners drops learners last seen before cutoff. A learner with no
// last-seen time (saved before it was kept) is given now.
func sweepLearners(tx *bolt.Tx, from []byte, cutoff, now time.Time) (int, []byte, error) {
	learners, seen := tx.Bucket(learnersBucket), tx.Bucket(seenBucket)
	var old, unseen [][]byte
	next := scan(learners, from, func(k, _ []byte) {
		t, ok := unixFrom(seen.Get(k))
		switch {
		case !ok:
			unseen = append(unseen, append([]byte(nil), k...))
		case t.Before(cutoff):
			old = append(old, append([]byte(nil), k...))
		}
	})
	// Deleting while a cursor walks a bucket skips keys; so delete after.
	for _, k := range unseen {
		if err := touch(tx, k, now); err != nil {
			return 0, nil, err
		}
	}
	for _, k := range old {
		if err := dropLearner(tx, k); err != nil {
			return 0, nil, err
		}
	}
	return len(old), next, nil
}

// sweepCarry drops codes that expired before cutoff, and the learner's
// pointer to one.
func sweepCarry(tx *bolt.Tx, from []byte, cutoff time.Time) (int, []byte, error) {
	codes, by := tx.Bucket(carryBucket), tx.Bucket(carryByBucket)
	type gone struct{ code, learner []byte }
	var old []gone
	next := scan(codes, from, func(k, v []byte) {
		r, ok := parseCarryRecord(v)
		if !ok || r.expires.Before(cutoff) {
			old = append(old, gone{append([]byte(nil), k...), []byte(r.learner)})
		}
	})
	for _, g := range old {
		if err := codes.Delete(g.code); err != nil {
			return 0, nil, err
		}
		if len(g.learner) > 0 && bytes.Equal(by.Get(g.learner), g.code) {
			if err := by.Delete(g.learner); err != nil {
				return 0, nil, err
			}
		}
	}
	return len(old), next, nil
}
