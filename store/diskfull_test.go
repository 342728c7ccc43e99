package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/carry"
	"github.com/locklab/locklab/internal/redistest"
	"github.com/locklab/locklab/workshop"
)

// writePaths are every write a learner or an instructor makes to the
// store, each on a learner or workshop saved before the disk filled
// (alice, "FULL42") and on a newcomer.
func writePaths(s *Store, now time.Time) []struct {
	name string
	f    func(ctx context.Context) error
} {
	newcomer := learnerN(77)
	return []struct {
		name string
		f    func(ctx context.Context) error
	}{
		{"MarkStarted, saved learner", func(ctx context.Context) error { return s.MarkStarted(ctx, alice, "other") }},
		{"MarkStarted, newcomer", func(ctx context.Context) error { return s.MarkStarted(ctx, newcomer, "locks") }},
		{"RecordAnswer, saved learner", func(ctx context.Context) error {
			_, err := s.RecordAnswer(ctx, alice, "locks", "q2", true)
			return err
		}},
		{"RecordAnswer, newcomer", func(ctx context.Context) error {
			_, err := s.RecordAnswer(ctx, newcomer, "locks", "q1", true)
			return err
		}},
		{"RecordSolved", func(ctx context.Context) error { return s.RecordSolved(ctx, alice, "mutex") }},
		{"Merge", func(ctx context.Context) error { return s.Merge(ctx, alice, bob) }},
		{"TakeCarryCode", func(ctx context.Context) error { _, err := s.TakeCarryCode(ctx, "ABCDEFGH", now); return err }},
		{"PutCarryCode", func(ctx context.Context) error {
			return s.PutCarryCode(ctx, "HJKMNPQR", carry.Ticket{Learner: alice, Expires: now.Add(time.Hour)})
		}},
		{"CreateWorkshop", func(ctx context.Context) error {
			return s.CreateWorkshop(ctx, workshop.Workshop{Code: "FULL43", Title: "Locks", StartedAt: now})
		}},
		{"JoinWorkshop", func(ctx context.Context) error {
			return s.JoinWorkshop(ctx, "FULL42", workshop.Joining{Learner: newcomer, At: now, Limit: 10})
		}},
		{"EndWorkshop", func(ctx context.Context) error { return s.EndWorkshop(ctx, "FULL42", now) }},
	}
}

// carryValid is how long the test's carry code lasts: past the days the
// test moves its clock on.
const carryValid = 7 * 24 * time.Hour

// saveBeforeTheDiskFills saves alice's answer, a carry code of hers and a
// workshop.
func saveBeforeTheDiskFills(t *testing.T, s *Store, now time.Time) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.RecordAnswer(ctx, alice, "locks", "q1", true); err != nil {
		t.Fatal(err)
	}
	if err := s.PutCarryCode(ctx, "ABCDEFGH", carry.Ticket{Learner: alice, Expires: now.Add(carryValid)}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateWorkshop(ctx, workshop.Workshop{Code: "FULL42", Title: "Locks", StartedAt: now}); err != nil {
		t.Fatal(err)
	}
}

// TestFullDiskIsUnavailable: with the disk full, every write to the bolt
// file fails as ErrUnavailable (the 503 the learner is promised), keeping
// the cause; what was saved before still reads back, a read that would
// date the learner's visit still answers, and once there is room again
// the same writes succeed.
func TestFullDiskIsUnavailable(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name string
		err  error
	}{
		// A page write that fails, as bbolt returns it.
		{"write", &fs.PathError{Op: "write", Path: "progress.db", Err: syscall.ENOSPC}},
		// A resize of the file, which bbolt returns as text.
		{"resize", fmt.Errorf("file resize error: %s", &fs.PathError{Op: "truncate", Path: "progress.db", Err: syscall.ENOSPC})},
		{"quota", &fs.PathError{Op: "write", Path: "progress.db", Err: syscall.EDQUOT}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var full atomic.Bool
			fault := func(o *options) {
				o.writeFault = func() error {
					if full.Load() {
						return tt.err
					}
					return nil
				}
			}
			s, err := OpenBolt(t.TempDir(), fault, Clock(func() time.Time { return now }))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			saveBeforeTheDiskFills(t, s, now)
			sec, err := s.Secret(ctx, []byte("first"))
			if err != nil {
				t.Fatal(err)
			}

			full.Store(true)
			now = now.Add(2 * seenEvery) // reads now date alice's visit too
			for _, w := range writePaths(s, now) {
				err := w.f(ctx)
				if !errors.Is(err, ErrUnavailable) {
					t.Errorf("%s on a full disk = %v; want ErrUnavailable", w.name, err)
				}
				if !errors.Is(err, tt.err) && tt.name != "resize" {
					t.Errorf("%s on a full disk = %v; want the cause kept", w.name, err)
				}
			}
			if got, err := s.Secret(ctx, []byte("second")); err != nil || string(got) != string(sec) {
				t.Errorf("Secret on a full disk = %q, %v; want the kept %q", got, err, sec)
			}
			p, err := s.Progress(ctx, alice)
			if err != nil || len(p["locks"].Right) != 1 {
				t.Errorf("alice's progress on a full disk = %+v, %v; want her answer read back", p, err)
			}
			if code, _, err := s.LiveCarryCode(ctx, alice, now); err != nil || code != "ABCDEFGH" {
				t.Errorf("alice's carry code on a full disk = %q, %v; want it kept", code, err)
			}
			if _, err := s.Workshop(ctx, "FULL42"); err != nil {
				t.Errorf("the workshop on a full disk: %v; want it kept", err)
			}
			if p, _ := s.Progress(ctx, learnerN(77)); len(p) != 0 {
				t.Errorf("the newcomer's progress after writes failed on a full disk = %+v; want nothing saved", p)
			}

			full.Store(false)
			if _, err := s.RecordAnswer(ctx, learnerN(77), "locks", "q1", true); err != nil {
				t.Errorf("RecordAnswer once there is room again: %v", err)
			}
		})
	}
}

// TestDiskError: only a want of space is ErrUnavailable; other failures
// are left as they are.
func TestDiskError(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{&fs.PathError{Op: "write", Err: syscall.ENOSPC}, true},
		{&fs.PathError{Op: "write", Err: syscall.EDQUOT}, true},
		{&fs.PathError{Op: "write", Err: syscall.EFBIG}, true},
		{fmt.Errorf("file sync error: %s", &fs.PathError{Op: "sync", Err: syscall.ENOSPC}), true},
		{&fs.PathError{Op: "write", Err: syscall.EIO}, false},
		{workshop.ErrNotFound, false},
		{ErrFull, false},
	} {
		if got := errors.Is(diskError(tt.err), ErrUnavailable); got != tt.want {
			t.Errorf("diskError(%v) is ErrUnavailable = %v; want %v", tt.err, got, tt.want)
		}
	}
	if diskError(nil) != nil {
		t.Error("diskError(nil) != nil")
	}
}

// TestRedisOutOfMemoryIsUnavailable: a real Redis at its maxmemory
// (noeviction) refuses writes with OOM, which every write path reports as
// ErrUnavailable, and reads of what was saved still answer. Redis lets a
// script that has already written (a DEL, which frees memory) finish its
// writes, so those may succeed; none fails otherwise.
func TestRedisOutOfMemoryIsUnavailable(t *testing.T) {
	ctx := context.Background()
	addr := redistest.Start(t)
	now := time.Now()
	s, err := OpenRedis("redis://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	saveBeforeTheDiskFills(t, s, now)
	admin := redis.NewClient(&redis.Options{Addr: addr})
	defer admin.Close()
	if err := admin.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	defer admin.ConfigSet(ctx, "maxmemory", "0")
	if err := admin.Set(ctx, "probe", "x", 0).Err(); err == nil {
		t.Fatal("Redis took a write at maxmemory 1; want OOM")
	} else {
		t.Logf("Redis at maxmemory: %v", err)
	}
	plain := map[string]bool{
		"MarkStarted, saved learner": true, "MarkStarted, newcomer": true, "RecordAnswer, saved learner": true,
		"RecordAnswer, newcomer": true, "RecordSolved": true, "Merge": true, "TakeCarryCode": true,
	}
	for _, w := range writePaths(s, now) {
		err := w.f(ctx)
		switch {
		case plain[w.name] && !errors.Is(err, ErrUnavailable):
			t.Errorf("%s with Redis out of memory = %v; want ErrUnavailable", w.name, err)
		case err != nil && !errors.Is(err, ErrUnavailable):
			t.Errorf("%s with Redis out of memory = %v; want ErrUnavailable or success", w.name, err)
		}
	}
	if p, err := s.Progress(ctx, alice); err != nil || len(p["locks"].Right) != 1 {
		t.Errorf("alice's progress with Redis out of memory = %+v, %v; want her answer read back", p, err)
	}
}
