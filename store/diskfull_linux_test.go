package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/testenv"
)

// mountFull mounts a tmpfs of size bytes on a fresh directory and returns
// it; the test unmounts it at the end. Mounting needs root: elsewhere the
// test is skipped, or failed under CI=true, where it runs as root.
func mountFull(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		testenv.Missing(t, "cannot mount a tmpfs to fill (%v): this test needs root", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, 0) })
	return dir
}

// fill writes a file in dir until the file system is full and returns its
// path; removing it makes room again.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill %s: %v; want ENOSPC", dir, err)
			}
			return path
		}
	}
}

// TestRealFullDisk fills a real file system under the bolt file: every
// write then either still fits in the file's free pages or fails as
// ErrUnavailable, never otherwise; what was acknowledged before and
// during reads back, after a reopen too; and once there is room again,
// writes succeed.
func TestRealFullDisk(t *testing.T) {
	ctx := context.Background()
	dir := mountFull(t, 2<<20)
	now := time.Now()
	s, err := OpenBolt(dir, Clock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	saveBeforeTheDiskFills(t, s, now)
	filler := fill(t, dir)

	for _, w := range writePaths(s, now) {
		if err := w.f(ctx); err != nil && !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s on a full disk = %v; want ErrUnavailable or success", w.name, err)
		}
	}
	// Newcomers until the disk refuses one: each acknowledged one must
	// be kept.
	var acked []string
	refused := false
	for i := range 2000 {
		id := learnerN(1000 + i)
		_, err := s.RecordAnswer(ctx, id, "locks", "q1", true)
		if err == nil {
			acked = append(acked, id)
			continue
		}
		if !errors.Is(err, ErrUnavailable) || !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("newcomer %d on a full disk = %v; want ErrUnavailable for ENOSPC", i, err)
		}
		refused = true
		break
	}
	if !refused {
		t.Fatal("2000 newcomers were saved on a full disk; want the disk to refuse one")
	}
	t.Logf("%d newcomers fitted in the file's free pages before the full disk refused one", len(acked))
	now = now.Add(2 * seenEvery) // a read now dates the learner's visit too
	if p, err := s.Progress(ctx, alice); err != nil || len(p["locks"].Right) != 1 {
		t.Errorf("alice's progress on a full disk = %+v, %v; want her answer read back", p, err)
	}

	// Room again: writes succeed, and everything acknowledged is there
	// after a reopen.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordAnswer(ctx, alice, "locks", "q3", true); err != nil {
		t.Errorf("RecordAnswer with room again: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = OpenBolt(dir, Clock(func() time.Time { return now }))
	if err != nil {
		t.Fatalf("reopen after the disk was full: %v", err)
	}
	defer s.Close()
	if p, err := s.Progress(ctx, alice); err != nil || len(p["locks"].Right) < 2 {
		t.Errorf("alice's progress after a reopen = %+v, %v; want her answers", p, err)
	}
	for _, id := range acked {
		if !saved(t, s, id) {
			t.Errorf("newcomer %s, acknowledged on the full disk, is lost after a reopen", id)
		}
	}
}
