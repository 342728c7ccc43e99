package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

var (
	learnersBucket = []byte("learners")
	metaBucket     = []byte("meta")
	secretKey      = []byte("secret")
	// seenBucket holds when each learner was last seen (8 bytes, Unix
	// seconds), for the sweep that drops learners idle for the progress TTL.
	seenBucket = []byte("learners-seen")
)

// boltBackend keeps progress in one bbolt file. Every write is a
// transaction that bbolt fsyncs before it returns.
type boltBackend struct {
	db  *bolt.DB
	ttl time.Duration
	now func() time.Time
	// sweepMu guards where each sweep goes on from (sweep.go).
	sweepMu                sync.Mutex
	learnerCursor, carryAt []byte
	// flags keeps what list read (boltcache.go).
	flags flagCache
}

// OpenBolt opens (or creates) the progress file in dir.
func OpenBolt(dir string, opts ...Option) (*Store, error) {
	o := newOptions(opts)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("store: data directory %s: %w", dir, err)
	}
	path := filepath.Join(dir, "progress.db")
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("store: open the progress file: %w", err) // err names the path
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{learnersBucket, metaBucket, []byte(workshopsBucket), []byte(workshopIndexBucket), seenBucket, carryBucket, carryByBucket} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store: init %s: %w", path, err)
	}
	return &Store{b: &boltBackend{db: db, ttl: o.progressTTL, now: o.now}, name: "bolt " + path}, nil
}

// add uses Batch: concurrent writers share one transaction and one fsync,
// and each returns only after that fsync, so an answer is still durable
// before it is acknowledged.
func (b *boltBackend) add(_ context.Context, learner string, flags ...string) error {
	seen := unixBytes(b.now())
	defer b.flags.forget(learner) // after the write, and after a failed one
	return b.db.Batch(func(tx *bolt.Tx) error {
		lb, err := tx.Bucket(learnersBucket).CreateBucketIfNotExists([]byte(learner))
		if err != nil {
			return err
		}
		if err := tx.Bucket(seenBucket).Put([]byte(learner), seen); err != nil {
			return err
		}
		for _, f := range flags {
			if err := lb.Put([]byte(f), nil); err != nil {
				return err
			}
		}
		return nil
	})
}

// seenEvery is how stale a learner's last-seen time may get before a read
// writes a new one: reads stay reads (no fsync) on all but one page a day.
const seenEvery = 24 * time.Hour

func (b *boltBackend) list(_ context.Context, learner string) ([]string, error) {
	e, err := b.read(learner)
	return e.flags, err
}

// progress returns the learner's progress, parsed once for as long as
// their flags are kept (shared: callers only read it).
func (b *boltBackend) progress(_ context.Context, learner string) (Progress, error) {
	e, err := b.read(learner)
	if err != nil {
		return nil, err
	}
	if e.progress == nil {
		return parseFlags(e.flags), nil
	}
	return e.progress, nil
}

// read returns the learner's flags, from the cache while they are fresh;
// the entry's progress is nil when the read was not kept.
func (b *boltBackend) read(learner string) (cachedFlags, error) {
	now := b.now()
	e, ok, gen := b.flags.get(learner, now, seenEvery)
	if ok {
		return e, nil
	}
	var flags []string
	stale, found := false, false
	var seen time.Time
	err := b.db.View(func(tx *bolt.Tx) error {
		lb := tx.Bucket(learnersBucket).Bucket([]byte(learner))
		if lb == nil {
			return nil
		}
		found = true
		seen, ok = unixFrom(tx.Bucket(seenBucket).Get([]byte(learner)))
		stale = !ok || now.Sub(seen) > seenEvery
		return lb.ForEach(func(k, _ []byte) error {
			flags = append(flags, string(k))
			return nil
		})
	})
	if err != nil {
		return cachedFlags{flags: flags}, err
	}
	if !stale {
		if found {
			return b.flags.put(learner, gen, flags, seen), nil
		}
		return cachedFlags{}, nil
	}
	defer b.flags.forget(learner)
	err = b.db.Batch(func(tx *bolt.Tx) error {
		if tx.Bucket(learnersBucket).Bucket([]byte(learner)) == nil {
			return nil // swept in between
		}
		return tx.Bucket(seenBucket).Put([]byte(learner), unixBytes(now))
	})
	return cachedFlags{flags: flags}, err
}

func unixBytes(t time.Time) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(t.Unix()))
}

func unixFrom(v []byte) (time.Time, bool) {
	if len(v) != 8 {
		return time.Time{}, false
	}
	return time.Unix(int64(binary.BigEndian.Uint64(v)), 0), true
}

func (b *boltBackend) secret(_ context.Context, fresh []byte) ([]byte, error) {
	var out []byte
	err := b.db.Update(func(tx *bolt.Tx) error {
		mb := tx.Bucket(metaBucket)
		if v := mb.Get(secretKey); v != nil {
			out = append([]byte(nil), v...)
			return nil
		}
		out = append([]byte(nil), fresh...)
		return mb.Put(secretKey, out)
	})
	return out, err
}

func (b *boltBackend) close() error { return b.db.Close() }
