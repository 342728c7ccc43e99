package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/alicebob/miniredis/v2"
)

func TestReadyRedis(t *testing.T) {
	ctx := context.Background()
	m := miniredis.RunT(t)
	s, err := OpenRedis("redis://" + m.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Ready(ctx); err != nil {
		t.Errorf("Ready with Redis up = %v; want nil", err)
	}
	m.Close()
	if err := s.Ready(ctx); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Ready with Redis stopped = %v; want ErrUnavailable", err)
	}
	if err := m.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := s.Ready(ctx); err != nil {
		t.Errorf("Ready with Redis back = %v; want nil", err)
	}

	down, err := OpenRedis("redis://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	defer down.Close()
	if err := down.Ready(ctx); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Ready with nothing on the port = %v; want ErrUnavailable", err)
	}
}

func TestReadyBolt(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		// spoil does to the data directory what makes the store unusable.
		spoil func(t *testing.T, dir string)
	}{
		{"directory removed", func(t *testing.T, dir string) {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
		}},
		{"file replaced", func(t *testing.T, dir string) {
			path := filepath.Join(dir, "progress.db")
			if err := os.Rename(path, path+".old"); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"directory read-only", func(t *testing.T, dir string) {
			if os.Geteuid() == 0 {
				t.Skip("root writes to a read-only directory")
			}
			if err := os.Chmod(dir, 0o500); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(dir, 0o700) })
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			s, err := OpenBolt(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Ready(ctx); err != nil {
				t.Fatalf("Ready of a fresh store = %v; want nil", err)
			}
			if left, _ := filepath.Glob(filepath.Join(dir, ".ready-*")); len(left) > 0 {
				t.Errorf("Ready left %q behind", left)
			}
			tt.spoil(t, dir)
			if err := s.Ready(ctx); !errors.Is(err, ErrUnavailable) {
				t.Errorf("Ready = %v; want ErrUnavailable", err)
			}
		})
	}
}
