package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/locklab/locklab/progress"
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
	db  boltDB
	ttl time.Duration
	now func() time.Time
	// maxSize caps the bytes the file's records may use (size.go); 0 is
	// no cap.
	maxSize int64
	// sweepMu guards where each sweep goes on from (sweep.go).
	sweepMu                sync.Mutex
	learnerCursor, carryAt []byte
	// flags keeps what list read (boltcache.go).
	flags flagCache
	// dir is the data directory, file the progress file as opened
	// (ready.go).
	dir  string
	file os.FileInfo
}

// OpenBolt opens (or creates) the progress file in dir.
func OpenBolt(dir string, opts ...Option) (*Store, error) {
	o := newOptions(opts)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("store: data directory %s: %w", dir, err)
	}
	path := BoltFile(dir)
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("store: open the progress file: %w", err) // err names the path
	}
	db := boltDB{DB: bdb, fault: o.writeFault}
	counted := false
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{learnersBucket, metaBucket, []byte(workshopsBucket), []byte(workshopIndexBucket), seenBucket, carryBucket, carryByBucket, idleBucket, keptBucket} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		counted = tx.Bucket(metaBucket).Get(sizeKey) != nil
		return nil
	})
	if err == nil && !counted {
		err = countLearners(db)
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store: init %s: %w", path, err)
	}
	file, err := os.Stat(path)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store: %w", err)
	}
	return &Store{b: &boltBackend{db: db, ttl: o.progressTTL, now: o.now, maxSize: o.maxSize, dir: dir, file: file}, name: "bolt " + path}, nil
}

// boltDB is the progress file. Its writes report a full disk (or a full
// quota) as ErrUnavailable, which the learner is told is a moment's
// trouble, as it is: bbolt rolls the transaction back, so nothing saved
// before is lost, and the next write after space is freed succeeds. Every
// write to the file, the workshops' too, goes through Update or Batch here.
type boltDB struct {
	*bolt.DB
	// fault, if set (by tests only), is asked at the end of every write
	// transaction; its error fails the transaction as a failed commit
	// would, so tests can fill the disk without a disk.
	fault func() error
}

// Update runs fn in a write transaction (bolt.DB.Update).
func (d boltDB) Update(fn func(*bolt.Tx) error) error {
	return diskError(d.DB.Update(d.faulty(fn)))
}

// Batch runs fn in a write transaction shared with concurrent callers
// (bolt.DB.Batch).
func (d boltDB) Batch(fn func(*bolt.Tx) error) error {
	return diskError(d.DB.Batch(d.faulty(fn)))
}

func (d boltDB) faulty(fn func(*bolt.Tx) error) func(*bolt.Tx) error {
	if d.fault == nil {
		return fn
	}
	return func(tx *bolt.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		return d.fault()
	}
}

// noSpace are the errors of a write that failed for want of space: a
// full disk, a full quota, a file at its size limit.
var noSpace = []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT, syscall.EFBIG}

// diskError marks a write that failed for want of space as
// ErrUnavailable, keeping the cause for the log; any other error is
// returned as it is. bbolt returns a failed write's error as it is, but
// a failed resize or sync of the file only as text ("file resize error:
// no space left on device"), so the text is matched too.
func diskError(err error) error {
	if err == nil {
		return nil
	}
	for _, e := range noSpace {
		if errors.Is(err, e) || strings.Contains(err.Error(), e.Error()) {
			return fmt.Errorf("%w: the disk is full: %w", ErrUnavailable, err)
		}
	}
	return err
}

// add uses Batch: concurrent writers share one transaction and one fsync,
// and each returns only after that fsync, so an answer is still durable
// before it is acknowledged.
func (b *boltBackend) add(_ context.Context, learner string, flags ...string) error {
	return b.write(learner, false, flags)
}

// addKept is add for a learner whose progress is kept however full the
// file is (one who carried it from another device): the size cap never
// drops them nor refuses them.
func (b *boltBackend) addKept(_ context.Context, learner string, flags ...string) error {
	return b.write(learner, true, flags)
}

// write adds flags to the learner and dates them now. A learner new to
// the file is room the size cap must make first (makeRoom): if it cannot,
// an anonymous newcomer is refused with ErrFull and nothing is written.
func (b *boltBackend) write(learner string, keep bool, flags []string) error {
	now := b.now()
	var dropped []string
	defer func() {
		// After the write, and after a failed one.
		b.flags.forget(learner)
		for _, id := range dropped {
			b.flags.forget(id)
		}
	}()
	return b.db.Batch(func(tx *bolt.Tx) error {
		dropped = dropped[:0] // Batch may run fn again, alone
		id := []byte(learner)
		if tx.Bucket(learnersBucket).Bucket(id) == nil {
			need := learnerBytes(id)
			for _, f := range flags {
				need += flagBytes([]byte(f))
			}
			var err error
			if dropped, err = b.makeRoom(tx, dropped, need, keep); err != nil {
				return err
			}
		}
		if err := addFlags(tx, id, flags); err != nil {
			return err
		}
		if keep {
			if err := keepLearner(tx, id, keptCarried); err != nil {
				return err
			}
		}
		return touch(tx, id, now)
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
		return progress.Parse(e.flags), nil
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
	// A read answers with what it read even when the new last-seen time
	// cannot be written (a full disk): the next read tries again.
	_ = b.db.Batch(func(tx *bolt.Tx) error {
		if tx.Bucket(learnersBucket).Bucket([]byte(learner)) == nil {
			return nil // swept in between
		}
		return touch(tx, []byte(learner), now)
	})
	return cachedFlags{flags: flags}, nil
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
	// Read first: a secret kept already is had without a write, so a
	// full disk does not stop the instructor's sign-in.
	err := b.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(metaBucket).Get(secretKey); v != nil {
			out = append([]byte(nil), v...)
		}
		return nil
	})
	if err != nil || out != nil {
		return out, err
	}
	err = b.db.Update(func(tx *bolt.Tx) error {
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

// eachLearner calls fn with each learner's flags, in the order of their
// ids, all read in one read transaction: a consistent snapshot of the
// whole file, taken while the server goes on writing. bbolt grows its
// file only between read transactions, so a slow fn holds back writes
// that need a larger file: fn should write somewhere fast.
func (b *boltBackend) eachLearner(ctx context.Context, fn func(learner string, flags []string) error) error {
	return b.db.View(func(tx *bolt.Tx) error {
		learners := tx.Bucket(learnersBucket)
		c := learners.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if v != nil {
				continue // a value, not a learner's bucket
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			var flags []string
			err := learners.Bucket(k).ForEach(func(f, _ []byte) error {
				flags = append(flags, string(f))
				return nil
			})
			if err != nil {
				return err
			}
			if len(flags) == 0 {
				continue
			}
			if err := fn(string(k), flags); err != nil {
				return err
			}
		}
		return nil
	})
}
