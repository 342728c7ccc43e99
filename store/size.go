package store

// The file store's size cap (MaxSize). The file counts the bytes its
// learners' records take, as bbolt lays them out, in one counter kept in
// the same transactions as the records; when a learner new to the file
// would take it past the cap, the longest idle anonymous learners are
// dropped first to make room, and the sweep brings it back under the cap
// when learners already saved have grown it. A learner is anonymous unless
// they carried their progress with a transfer code (made one, or adopted
// one) or joined a workshop: those are never dropped for room, only when
// they outlive the progress TTL like everyone.
//
// Dropping oldest first needs the learners in the order they were last
// seen: the idle index holds "<8 bytes of last-seen Unix seconds><id>" for
// each learner who is not kept, so the longest idle come first in key
// order and finding them costs a cursor step each, however many there are.

import (
	"bytes"
	"encoding/binary"
	"time"

	bolt "go.etcd.io/bbolt"
)

var (
	// idleBucket is the idle index: last-seen time and learner id in one
	// key, for every learner who is not kept.
	idleBucket = []byte("learners-by-idle")
	// keptBucket holds the learners the size cap never drops, with why.
	keptBucket = []byte("learners-kept")
	// sizeKey, in metaBucket, is the bytes the learners' records take
	// (8 bytes, big-endian); the file has been counted once it is there.
	sizeKey = []byte("learner-bytes")
)

// Why a learner is kept.
const (
	keptCarried  byte = 'c' // made a transfer code, or adopted one
	keptWorkshop byte = 'w' // joined a workshop
)

// What bbolt stores beside a record's own bytes: a leaf element header
// per key, and a bucket header and a page header for each learner's
// (inline) bucket.
const (
	leafHeader   = 16
	bucketHeader = 16
	pageHeader   = 16
)

// learnerBytes is what a learner takes besides their flags: their entry
// in the learners bucket with its bucket's headers, their last-seen time
// and their key in the idle index.
func learnerBytes(id []byte) int64 {
	entry := leafHeader + len(id) + bucketHeader + pageHeader
	seen := leafHeader + len(id) + 8
	idle := leafHeader + 8 + len(id)
	return int64(entry + seen + idle)
}

// flagBytes is what one flag takes.
func flagBytes(flag []byte) int64 { return int64(leafHeader + len(flag)) }

// lowWater is where the sweep stops dropping once the records are over
// the cap: a sixteenth under it, so that newcomers find room again for a
// while without each dropping someone.
func lowWater(max int64) int64 { return max - max/16 }

// Bounds on the work of making room, so that it is one short transaction
// whatever the file holds.
const (
	// roomVisits bounds the learners a newcomer's write looks at for
	// room (kept ones it passes over are taken out of the index, so they
	// are looked at once).
	roomVisits = 16
	// shrinkBatch and shrinkVisits bound one transaction of the sweep;
	// shrinkRounds the transactions of one sweep.
	shrinkBatch  = 1000
	shrinkVisits = 4 * shrinkBatch
	shrinkRounds = 20
)

func idleKey(seen, id []byte) []byte {
	k := make([]byte, 0, len(seen)+len(id))
	return append(append(k, seen...), id...)
}

func recordedSize(tx *bolt.Tx) int64 {
	v := tx.Bucket(metaBucket).Get(sizeKey)
	if len(v) != 8 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(v))
}

// grow adds n (which may be negative) to the recorded size.
func grow(tx *bolt.Tx, n int64) error {
	if n == 0 {
		return nil
	}
	return tx.Bucket(metaBucket).Put(sizeKey, binary.BigEndian.AppendUint64(nil, uint64(max(recordedSize(tx)+n, 0))))
}

// touch dates the learner's last visit now, and moves them in the idle
// index unless they are kept.
func touch(tx *bolt.Tx, id []byte, now time.Time) error {
	seen := tx.Bucket(seenBucket)
	t := unixBytes(now)
	old := seen.Get(id)
	if bytes.Equal(old, t) {
		return nil
	}
	if tx.Bucket(keptBucket).Get(id) == nil {
		idle := tx.Bucket(idleBucket)
		if old != nil {
			if err := idle.Delete(idleKey(old, id)); err != nil {
				return err
			}
		}
		if err := idle.Put(idleKey(t, id), nil); err != nil {
			return err
		}
	}
	return seen.Put(id, t)
}

// keepLearner marks a saved learner as one the size cap never drops. A
// learner with nothing saved is left alone: there is nothing to keep.
func keepLearner(tx *bolt.Tx, id []byte, why byte) error {
	if tx.Bucket(learnersBucket).Bucket(id) == nil {
		return nil
	}
	kept := tx.Bucket(keptBucket)
	if kept.Get(id) != nil {
		return nil
	}
	if old := tx.Bucket(seenBucket).Get(id); old != nil {
		if err := tx.Bucket(idleBucket).Delete(idleKey(old, id)); err != nil {
			return err
		}
	}
	return kept.Put(id, []byte{why})
}

// addFlags puts the learner's flags that are new and counts their bytes,
// with the learner's own if the learner is new.
func addFlags(tx *bolt.Tx, id []byte, flags []string) error {
	learners := tx.Bucket(learnersBucket)
	var n int64
	lb := learners.Bucket(id)
	if lb == nil {
		var err error
		if lb, err = learners.CreateBucket(id); err != nil {
			return err
		}
		n += learnerBytes(id)
	}
	for _, f := range flags {
		if k, _ := lb.Cursor().Seek([]byte(f)); bytes.Equal(k, []byte(f)) {
			continue // kept already: no bytes more
		}
		if err := lb.Put([]byte(f), nil); err != nil {
			return err
		}
		n += flagBytes([]byte(f))
	}
	return grow(tx, n)
}

// dropLearner deletes a learner and everything kept about them, and
// counts the bytes freed.
func dropLearner(tx *bolt.Tx, id []byte) error {
	learners := tx.Bucket(learnersBucket)
	if lb := learners.Bucket(id); lb != nil {
		n := learnerBytes(id)
		if err := lb.ForEach(func(k, _ []byte) error { n += flagBytes(k); return nil }); err != nil {
			return err
		}
		if err := learners.DeleteBucket(id); err != nil {
			return err
		}
		if err := grow(tx, -n); err != nil {
			return err
		}
	}
	seen := tx.Bucket(seenBucket)
	if old := seen.Get(id); old != nil {
		if err := tx.Bucket(idleBucket).Delete(idleKey(old, id)); err != nil {
			return err
		}
	}
	if err := seen.Delete(id); err != nil {
		return err
	}
	return tx.Bucket(keptBucket).Delete(id)
}

// participant reports whether the learner is a member of any workshop.
// It looks in each workshop's members: a cost in workshops, paid only for
// a learner about to be dropped for room, once (a participant is then
// kept).
func participant(tx *bolt.Tx, id []byte) bool {
	root := tx.Bucket([]byte(workshopsBucket))
	if root == nil {
		return false
	}
	c := root.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v != nil {
			continue
		}
		if mb := root.Bucket(k).Bucket([]byte(wsMembersBucket)); mb != nil && mb.Get(id) != nil {
			return true
		}
	}
	return false
}

// evict drops the longest idle anonymous learners, oldest first, until
// the recorded size is at most target, n are dropped, or visits learners
// were looked at. Kept learners it meets (and carriers or participants
// not marked yet, whom it marks) leave the index. It returns the ids it
// dropped, appended to out.
func evict(tx *bolt.Tx, out []string, target int64, n, visits int) ([]string, error) {
	type keep struct {
		id  []byte
		why byte
	}
	var gone, stale [][]byte
	var keeps []keep
	freed := int64(0)
	size := recordedSize(tx)
	kept, carryBy, learners := tx.Bucket(keptBucket), tx.Bucket(carryByBucket), tx.Bucket(learnersBucket)
	c := tx.Bucket(idleBucket).Cursor()
	for k, _ := c.First(); k != nil && visits > 0 && len(gone) < n && size-freed > target; k, _ = c.Next() {
		visits--
		if len(k) <= 8 {
			stale = append(stale, bytes.Clone(k))
			continue
		}
		id := bytes.Clone(k[8:])
		switch {
		case kept.Get(id) != nil || learners.Bucket(id) == nil:
			// Kept, or gone: the key should not be in the index.
			stale = append(stale, bytes.Clone(k))
		case carryBy.Get(id) != nil:
			keeps = append(keeps, keep{id, keptCarried})
		case participant(tx, id):
			keeps = append(keeps, keep{id, keptWorkshop})
		default:
			gone = append(gone, id)
			freed += learnerBytes(id)
			if lb := learners.Bucket(id); lb != nil {
				_ = lb.ForEach(func(f, _ []byte) error { freed += flagBytes(f); return nil })
			}
		}
	}
	// Deleting while a cursor walks a bucket skips keys; so delete after.
	idle := tx.Bucket(idleBucket)
	for _, k := range stale {
		if err := idle.Delete(k); err != nil {
			return out, err
		}
	}
	for _, k := range keeps {
		if err := keepLearner(tx, k.id, k.why); err != nil {
			return out, err
		}
	}
	for _, id := range gone {
		if err := dropLearner(tx, id); err != nil {
			return out, err
		}
		out = append(out, string(id))
	}
	return out, nil
}

// makeRoom makes room for a learner new to the file who will take need
// bytes: while that would take the records past the cap, it drops the
// longest idle anonymous learners. If it cannot, an anonymous newcomer is
// ErrFull; one to keep (carried progress) is let in regardless, as
// refusing them would lose what they saved elsewhere.
func (b *boltBackend) makeRoom(tx *bolt.Tx, dropped []string, need int64, keep bool) ([]string, error) {
	if b.maxSize <= 0 || recordedSize(tx)+need <= b.maxSize {
		return dropped, nil
	}
	dropped, err := evict(tx, dropped, b.maxSize-need, roomVisits, roomVisits)
	if err != nil {
		return dropped, err
	}
	if recordedSize(tx)+need > b.maxSize && !keep {
		return dropped, ErrFull
	}
	return dropped, nil
}

// shrink brings the records back to lowWater when learners already saved
// took them past the cap, in a few short transactions, and returns how
// many learners it dropped.
func (b *boltBackend) shrink() int {
	if b.maxSize <= 0 {
		return 0
	}
	dropped := 0
	for range shrinkRounds {
		var gone []string
		err := b.db.Update(func(tx *bolt.Tx) error {
			gone = gone[:0]
			if recordedSize(tx) <= b.maxSize {
				return nil
			}
			var err error
			gone, err = evict(tx, gone, lowWater(b.maxSize), shrinkBatch, shrinkVisits)
			return err
		})
		for _, id := range gone {
			b.flags.forget(id)
		}
		if err != nil || len(gone) == 0 {
			break
		}
		dropped += len(gone)
	}
	return dropped
}

// Size returns the bytes the file store's learners' records take, as the
// size cap counts them, and the cap; Redis has neither (0, 0).
func (s *Store) Size() (used, max int64) {
	b, ok := s.b.(*boltBackend)
	if !ok {
		return 0, 0
	}
	_ = b.db.View(func(tx *bolt.Tx) error {
		used = recordedSize(tx)
		return nil
	})
	return used, b.maxSize
}

// countBatch bounds the learners one transaction of countLearners reads.
const countBatch = 10_000

// countLearners counts the learners' bytes and builds the idle index of
// a file written before either was kept: once, at open, in transactions
// of countBatch learners; the count is written last, so an open that
// stops half-way starts over the next time.
func countLearners(db boltDB) error {
	var size int64
	var from []byte
	for done := false; !done; {
		err := db.Update(func(tx *bolt.Tx) error {
			learners, seen := tx.Bucket(learnersBucket), tx.Bucket(seenBucket)
			kept, idle := tx.Bucket(keptBucket), tx.Bucket(idleBucket)
			var n int64
			var last []byte
			next := scanFrom(learners.Cursor(), from)
			k, v := next()
			for i := 0; k != nil && i < countBatch; i++ {
				if v == nil { // a learner's bucket
					n += learnerBytes(k)
					if err := learners.Bucket(k).ForEach(func(f, _ []byte) error { n += flagBytes(f); return nil }); err != nil {
						return err
					}
					if t := seen.Get(k); t != nil && kept.Get(k) == nil {
						if err := idle.Put(idleKey(t, k), nil); err != nil {
							return err
						}
					}
				}
				last = bytes.Clone(k)
				k, v = next()
			}
			if k != nil {
				size, from = size+n, last
				return nil
			}
			done = true
			return tx.Bucket(metaBucket).Put(sizeKey, binary.BigEndian.AppendUint64(nil, uint64(size+n)))
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// scanFrom returns the keys of c in order after from (from the first if
// from is nil), one per call, and nil at the end.
func scanFrom(c *bolt.Cursor, from []byte) func() ([]byte, []byte) {
	started := false
	return func() ([]byte, []byte) {
		if started {
			return c.Next()
		}
		started = true
		if from == nil {
			return c.First()
		}
		k, v := c.Seek(from)
		if k != nil && bytes.Equal(k, from) {
			return c.Next()
		}
		return k, v
	}
}
