package store

import (
	"context"
	"errors"
	"fmt"
	"os"

	bolt "go.etcd.io/bbolt"
)

// readyBackend is a back end that can tell whether it can be used now.
type readyBackend interface {
	ready(ctx context.Context) error
}

// Ready reports whether the store can be used now, as a readiness probe
// asks: Redis answers PING, or the data directory still holds the file
// the store opened, the file reads, and the directory takes a new file. A
// full disk is not reported: reads go on, and each write that needs room
// says so itself.
func (s *Store) Ready(ctx context.Context) error {
	rb, ok := s.b.(readyBackend)
	if !ok {
		return nil
	}
	if err := rb.ready(ctx); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return nil
}

func (r *redisBackend) ready(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, r.opTimeout)
	defer cancel()
	return unavailable(r.rdb.Ping(ctx).Err())
}

// ready checks the bolt file. A data directory removed or replaced under
// the server (a volume unmounted, a directory deleted) leaves bbolt
// writing to a file nobody will open again; one turned read-only refuses
// every write.
func (b *boltBackend) ready(ctx context.Context) error {
	now, err := os.Stat(b.db.Path())
	if err != nil {
		return fmt.Errorf("%w: the progress file: %v", ErrUnavailable, err)
	}
	if !os.SameFile(now, b.file) {
		return fmt.Errorf("%w: %s is no longer the file the server opened", ErrUnavailable, b.db.Path())
	}
	err = b.db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(metaBucket) == nil {
			return errors.New("the progress file has no meta bucket")
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%w: read the progress file: %v", ErrUnavailable, err)
	}
	f, err := os.CreateTemp(b.dir, ".ready-*")
	if err != nil {
		return fmt.Errorf("%w: the data directory takes no new file: %v", ErrUnavailable, err)
	}
	f.Close()
	if err := os.Remove(f.Name()); err != nil {
		return fmt.Errorf("%w: the data directory: %v", ErrUnavailable, err)
	}
	return nil
}
