package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

var (
	learnersBucket = []byte("learners")
	metaBucket     = []byte("meta")
	secretKey      = []byte("secret")
)

// boltBackend keeps progress in one bbolt file. Every write is a
// transaction that bbolt fsyncs before it returns.
type boltBackend struct{ db *bolt.DB }

// OpenBolt opens (or creates) the progress file in dir.
func OpenBolt(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("store: data directory %s: %w", dir, err)
	}
	path := filepath.Join(dir, "progress.db")
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{learnersBucket, metaBucket, []byte(workshopsBucket), []byte(workshopIndexBucket)} {
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
	return &Store{b: &boltBackend{db: db}, name: "bolt " + path}, nil
}

// add uses Batch: concurrent writers share one transaction and one fsync,
// and each returns only after that fsync, so an answer is still durable
// before it is acknowledged.
func (b *boltBackend) add(_ context.Context, learner string, flags ...string) error {
	return b.db.Batch(func(tx *bolt.Tx) error {
		lb, err := tx.Bucket(learnersBucket).CreateBucketIfNotExists([]byte(learner))
		if err != nil {
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

func (b *boltBackend) list(_ context.Context, learner string) ([]string, error) {
	var flags []string
	err := b.db.View(func(tx *bolt.Tx) error {
		lb := tx.Bucket(learnersBucket).Bucket([]byte(learner))
		if lb == nil {
			return nil
		}
		return lb.ForEach(func(k, _ []byte) error {
			flags = append(flags, string(k))
			return nil
		})
	})
	return flags, err
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
