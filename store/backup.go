package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/locklab/locklab/learnerid"
)

// A backup is JSON Lines: a header line, then one line per learner with
// their flags (what RecordAnswer, MarkStarted and RecordSolved keep):
//
//	{"locklab_backup":1,"created":"2025-01-02T03:04:05Z","store":"bolt"}
//	{"learner":"<id>","flags":["distributed-locks/right/gc-pause","distributed-locks/started"]}
//
// Workshops, carry codes and sandboxes are not in it: they live for hours,
// progress for months.
const backupVersion = 1

// The limits on a backup's lines, so that restoring one costs time
// linear in its size and memory bounded whatever it holds. A learner with
// more flags than a line may hold is written on several lines, which a
// restore merges.
const (
	maxBackupFlags   = 1000
	maxBackupFlagLen = 200
	maxBackupLine    = 1 << 20
)

// ErrBadBackup means a file given to Restore is not a backup Lock Lab can
// read: the error names the line and what is wrong with it.
var ErrBadBackup = errors.New("malformed backup")

// backupHeader is a backup's first line.
type backupHeader struct {
	Version *int   `json:"locklab_backup"`
	Created string `json:"created"`
	Store   string `json:"store"`
}

// backupLine is one learner's line.
type backupLine struct {
	Learner string   `json:"learner"`
	Flags   []string `json:"flags"`
}

// backupBackend is a back end that can list every learner it keeps.
type backupBackend interface {
	// eachLearner calls fn once with each learner that has flags; it
	// stops at fn's first error and returns it.
	eachLearner(ctx context.Context, fn func(learner string, flags []string) error) error
}

// BoltFile is the progress file OpenBolt keeps in dir, so that a command
// can tell a data directory that holds progress from one that does not.
func BoltFile(dir string) string { return filepath.Join(dir, "progress.db") }

// Locked reports whether err is OpenBolt's when another process (a
// running server) holds the progress file open.
func Locked(err error) bool { return errors.Is(err, bolterrors.ErrTimeout) }

// Backup writes every learner's progress to w (see backupVersion for the
// format) and returns how many learners it wrote. It is safe while
// servers run. Each learner's flags are read at once, so no learner is
// half written; with bolt the whole is one snapshot, while with Redis
// learners are read one batch after another (SCAN), so a learner who
// first saves progress during the backup may or may not be in it, and a
// cluster that moves slots meanwhile may list a learner twice (a restore
// merges the two lines). Reading does not count as a visit: no learner's
// expiry is renewed.
func (s *Store) Backup(ctx context.Context, w io.Writer) (learners int, err error) {
	bb, ok := s.b.(backupBackend)
	if !ok {
		return 0, fmt.Errorf("store: backup: the %s store cannot list its learners", s.name)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	version := backupVersion
	if err := enc.Encode(backupHeader{Version: &version, Created: time.Now().UTC().Format(time.RFC3339), Store: s.kind()}); err != nil {
		return 0, fmt.Errorf("store: backup: %w", err)
	}
	err = bb.eachLearner(ctx, func(learner string, flags []string) error {
		slices.Sort(flags)
		for chunk := range slices.Chunk(flags, maxBackupFlags) {
			if err := enc.Encode(backupLine{Learner: learner, Flags: chunk}); err != nil {
				return err
			}
		}
		learners++
		return nil
	})
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return learners, fmt.Errorf("store: backup: %w", err)
	}
	return learners, nil
}

// kind is the back end's name in a backup's header.
func (s *Store) kind() string {
	if _, ok := s.b.(*boltBackend); ok {
		return "bolt"
	}
	return "redis"
}

// Restore adds the progress in a backup to the store's and returns how
// many learner lines it applied (a learner on two lines counts twice).
// It merges: each learner ends with their flags from the backup and
// those the store had, so a restore never takes progress away, and
// restoring the same backup twice changes nothing the second time. A
// backup from either back end restores into either.
//
// The backup is read twice, which is why Restore takes an io.ReadSeeker
// (an *os.File; spool a stream to a temporary file first): the first
// pass checks all of it, and a backup with anything wrong is refused
// with ErrBadBackup, naming the line, before anything is written. The
// second pass writes it, so Restore holds only a few lines in memory
// however large the backup. An error while writing (a store that went
// down, ErrFull) leaves the lines before it restored; running the same
// restore again is then safe.
func (s *Store) Restore(ctx context.Context, r io.ReadSeeker) (learners int, err error) {
	start, err := r.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, fmt.Errorf("store: restore: %w", err)
	}
	if err := readBackup(r, func(backupLine) error { return ctx.Err() }); err != nil {
		return 0, fmt.Errorf("store: restore: %w", err)
	}
	if _, err := r.Seek(start, io.SeekStart); err != nil {
		return 0, fmt.Errorf("store: restore: %w", err)
	}
	n, err := s.apply(ctx, r)
	if err != nil {
		return n, fmt.Errorf("store: restore: %w", err)
	}
	return n, nil
}

// apply adds every line of a checked backup with add, on several lines
// at once: bolt then commits them together (Batch), one fsync for many,
// and Redis overlaps their round trips.
func (s *Store) apply(ctx context.Context, r io.Reader) (int, error) {
	workers := 8
	if _, ok := s.b.(*boltBackend); ok {
		workers = 64
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var applied atomic.Int64
	var wg sync.WaitGroup
	lines := make(chan backupLine)
	for range workers {
		wg.Go(func() {
			for l := range lines {
				if err := s.b.add(ctx, l.Learner, l.Flags...); err != nil {
					cancel(fmt.Errorf("learner %s: %w", l.Learner, err))
					return
				}
				applied.Add(1)
			}
		})
	}
	err := readBackup(r, func(l backupLine) error {
		select {
		case lines <- l:
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	})
	close(lines)
	wg.Wait()
	if cause := context.Cause(ctx); cause != nil {
		err = cause // the first failed write, rather than readBackup's echo of it
	}
	return int(applied.Load()), err
}

// readBackup reads a backup from r, checks each line and calls fn with
// each learner's; it stops at the first bad line, with an error naming
// it, or at fn's first error. Blank lines are skipped.
func readBackup(r io.Reader, fn func(backupLine) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxBackupLine)
	n, header := 0, false
	for sc.Scan() {
		n++
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if !header {
			if err := checkHeader(line); err != nil {
				return fmt.Errorf("%w: line %d: %v", ErrBadBackup, n, err)
			}
			header = true
			continue
		}
		var l backupLine
		if err := decodeLine(line, &l); err != nil {
			return fmt.Errorf("%w: line %d: %v", ErrBadBackup, n, err)
		}
		if err := checkLine(l); err != nil {
			return fmt.Errorf("%w: line %d: %v", ErrBadBackup, n, err)
		}
		if err := fn(l); err != nil {
			return err
		}
	}
	switch err := sc.Err(); {
	case errors.Is(err, bufio.ErrTooLong):
		return fmt.Errorf("%w: line %d: longer than %d bytes", ErrBadBackup, n+1, maxBackupLine)
	case err != nil:
		return fmt.Errorf("read the backup: %w", err)
	case !header:
		return fmt.Errorf("%w: the file is empty, without even the header line", ErrBadBackup)
	}
	return nil
}

// checkHeader checks a backup's first line.
func checkHeader(line []byte) error {
	var h backupHeader
	if err := decodeLine(line, &h); err != nil {
		return fmt.Errorf("not a Lock Lab backup's header (%v)", err)
	}
	switch {
	case h.Version == nil:
		return fmt.Errorf(`not a Lock Lab backup's header: no "locklab_backup"`)
	case *h.Version != backupVersion:
		return fmt.Errorf("a backup of version %d; this Lock Lab reads version %d", *h.Version, backupVersion)
	case h.Store != "bolt" && h.Store != "redis":
		return fmt.Errorf(`"store" is %q; want "bolt" or "redis"`, h.Store)
	}
	if _, err := time.Parse(time.RFC3339, h.Created); err != nil {
		return fmt.Errorf(`"created" is %q, not an RFC 3339 time`, h.Created)
	}
	return nil
}

// decodeLine decodes one line's JSON object into v, refusing fields v
// does not have and anything after the object.
func decodeLine(line []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("invalid JSON: %v", err)
	}
	if dec.More() {
		return errors.New("invalid JSON: more after the object")
	}
	return nil
}

// checkLine checks one learner's line against what the store would have
// written.
func checkLine(l backupLine) error {
	if !learnerid.Valid(l.Learner) {
		return fmt.Errorf("learner %q: not a learner id", l.Learner)
	}
	if len(l.Flags) == 0 || len(l.Flags) > maxBackupFlags {
		return fmt.Errorf("learner %s: %d flags; want 1 to %d", l.Learner, len(l.Flags), maxBackupFlags)
	}
	for _, f := range l.Flags {
		if f == "" || len(f) > maxBackupFlagLen {
			return fmt.Errorf("learner %s: flag %.40q is %d bytes; want 1 to %d", l.Learner, f, len(f), maxBackupFlagLen)
		}
	}
	return nil
}

// backupTimeout bounds each of a backup's round trips to Redis: a SCAN
// step, or the reads of the learners it found.
const backupTimeout = 10 * time.Second

// eachLearner lists the learners' hashes with SCAN, on every master of a
// cluster, and reads each batch of them in one pipeline of HKEYS, each
// hash at once. fn is called from one goroutine at a time.
func (r *redisBackend) eachLearner(ctx context.Context, fn func(learner string, flags []string) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var mu sync.Mutex
	each := func(learner string, flags []string) error {
		mu.Lock()
		defer mu.Unlock()
		if err := context.Cause(ctx); err != nil {
			return err
		}
		if err := fn(learner, flags); err != nil {
			cancel(err) // stop the other masters' scans too
			return err
		}
		return nil
	}
	if cc, ok := r.rdb.(*redis.ClusterClient); ok {
		err := cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			return r.scanLearners(ctx, node, each)
		})
		if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
			return cause
		}
		return err
	}
	return r.scanLearners(ctx, r.rdb, each)
}

// scanLearners scans node's learner keys and calls fn with each that has
// flags. The hashes are read through the store's own client, which sends
// each to the node that holds it now.
func (r *redisBackend) scanLearners(ctx context.Context, node redis.Cmdable, fn func(string, []string) error) error {
	base := r.key("")
	var cursor uint64
	for {
		sctx, cancel := context.WithTimeout(ctx, backupTimeout)
		keys, next, err := node.Scan(sctx, cursor, base+"*", 1000).Result()
		cancel()
		if err != nil {
			return unavailable(err)
		}
		if len(keys) > 0 {
			cmds := make([]*redis.StringSliceCmd, len(keys))
			pctx, cancel := context.WithTimeout(ctx, backupTimeout)
			_, err = r.rdb.Pipelined(pctx, func(p redis.Pipeliner) error {
				for i, k := range keys {
					cmds[i] = p.HKeys(pctx, k)
				}
				return nil
			})
			cancel()
			if err != nil {
				return unavailable(err)
			}
			for i, k := range keys {
				id := strings.TrimPrefix(k, base)
				flags := cmds[i].Val()
				if !learnerid.Valid(id) || len(flags) == 0 {
					continue // not the store's, or expired since the SCAN
				}
				if err := fn(id, flags); err != nil {
					return err
				}
			}
		}
		if next == 0 {
			return nil
		}
		cursor = next
	}
}
