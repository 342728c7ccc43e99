package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
)

// snapshot is every learner's flags, sorted, read as Backup reads them.
func snapshot(t *testing.T, s *Store) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := s.b.(backupBackend).eachLearner(context.Background(), func(learner string, flags []string) error {
		out[learner] = append(out[learner], flags...)
		slices.Sort(out[learner])
		return nil
	})
	if err != nil {
		t.Fatalf("eachLearner: %v", err)
	}
	return out
}

// backup runs Backup and returns what it wrote.
func backup(t *testing.T, s *Store) ([]byte, int) {
	t.Helper()
	var buf bytes.Buffer
	n, err := s.Backup(context.Background(), &buf)
	if err != nil {
		t.Fatalf("Backup: %v", err)
	}
	return buf.Bytes(), n
}

func TestBackupRestoreRoundTrip(t *testing.T) {
	ctx := context.Background()
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			if _, err := s.RecordAnswer(ctx, alice, "distributed-locks", "gc-pause", true); err != nil {
				t.Fatal(err)
			}
			if err := s.MarkStarted(ctx, bob, "fencing"); err != nil {
				t.Fatal(err)
			}
			if err := s.RecordSolved(ctx, bob, "lost-lock"); err != nil {
				t.Fatal(err)
			}
			// More flags than a line holds: written on two lines.
			var many []string
			for i := range maxBackupFlags + 500 {
				many = append(many, fmt.Sprintf("t/right/q%04d", i))
			}
			carol := learnerN(3)
			if err := s.b.add(ctx, carol, many...); err != nil {
				t.Fatal(err)
			}
			want := snapshot(t, s)

			b, n := backup(t, s)
			if n != 3 {
				t.Errorf("Backup = %d learners; want 3", n)
			}
			lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
			var h map[string]any
			if err := json.Unmarshal([]byte(lines[0]), &h); err != nil || h["locklab_backup"] != 1.0 || h["store"] != s.kind() || h["created"] == "" {
				t.Errorf("header = %s (%v); want locklab_backup 1, store %q, created", lines[0], err, s.kind())
			}
			if len(lines) != 5 {
				t.Errorf("backup has %d lines; want 5 (header, alice, bob, carol twice):\n%.2000s", len(lines), b)
			}

			fresh := open(t)
			got, err := fresh.Restore(ctx, bytes.NewReader(b))
			if err != nil || got != 4 {
				t.Fatalf("Restore = %d, %v; want 4 lines", got, err)
			}
			if after := snapshot(t, fresh); !maps.EqualFunc(after, want, slices.Equal) {
				t.Errorf("restored = %v;\nwant %v", after, want)
			}
			if tp, _ := fresh.Topic(ctx, alice, "distributed-locks"); !slices.Equal(tp.Right, []string{"gc-pause"}) {
				t.Errorf("restored alice = %+v; want gc-pause right", tp)
			}
		})
	}
}

// TestRestoreMerges restores into a store with progress of its own:
// nothing of it is lost, and the backup's is added.
func TestRestoreMerges(t *testing.T) {
	ctx := context.Background()
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			src := open(t)
			if _, err := src.RecordAnswer(ctx, alice, "locks", "q1", true); err != nil {
				t.Fatal(err)
			}
			b, _ := backup(t, src)

			dst := open(t)
			if _, err := dst.RecordAnswer(ctx, alice, "locks", "q2", true); err != nil {
				t.Fatal(err)
			}
			if _, err := dst.RecordAnswer(ctx, bob, "locks", "q3", true); err != nil {
				t.Fatal(err)
			}
			for range 2 { // twice: a restore again changes nothing
				if _, err := dst.Restore(ctx, bytes.NewReader(b)); err != nil {
					t.Fatal(err)
				}
			}
			want := map[string][]string{
				alice: {"locks/right/q1", "locks/right/q2", "locks/started"},
				bob:   {"locks/right/q3", "locks/started"},
			}
			if got := snapshot(t, dst); !maps.EqualFunc(got, want, slices.Equal) {
				t.Errorf("after restore = %v; want %v", got, want)
			}
		})
	}
}

func TestRestoreRefusesBadBackups(t *testing.T) {
	ctx := context.Background()
	const header = `{"locklab_backup":1,"created":"2025-01-02T03:04:05Z","store":"bolt"}` + "\n"
	newcomer := `{"learner":"` + learnerN(7) + `","flags":["locks/started"]}` + "\n"
	tooMany := make([]string, maxBackupFlags+1)
	for i := range tooMany {
		tooMany[i] = fmt.Sprintf("f%d", i)
	}
	manyJSON, _ := json.Marshal(tooMany)
	cases := []struct {
		name, backup, want string
	}{
		{"empty", "", "empty"},
		{"no header", newcomer, "line 1: not a Lock Lab backup's header"},
		{"other version", `{"locklab_backup":2,"created":"2025-01-02T03:04:05Z","store":"bolt"}` + "\n" + newcomer, "line 1: a backup of version 2"},
		{"bad created", `{"locklab_backup":1,"created":"yesterday","store":"bolt"}` + "\n" + newcomer, `line 1: "created"`},
		{"bad JSON at line 3", header + newcomer + `{"learner":"` + learnerN(8) + `","flags":[` + "\n", "line 3: invalid JSON"},
		{"bad learner id", header + newcomer + `{"learner":"x","flags":["a"]}` + "\n", `line 3: learner "x": not a learner id`},
		{"no flags", header + newcomer + `{"learner":"` + learnerN(8) + `","flags":[]}` + "\n", "line 3: learner " + learnerN(8) + ": 0 flags"},
		{"too many flags", header + newcomer + `{"learner":"` + learnerN(8) + `","flags":` + string(manyJSON) + "}\n", "1001 flags"},
		{"long flag", header + newcomer + `{"learner":"` + learnerN(8) + `","flags":["` + strings.Repeat("a", maxBackupFlagLen+1) + `"]}` + "\n", "is 201 bytes"},
		{"oversized line", header + newcomer + `{"learner":"` + learnerN(8) + `","flags":["` + strings.Repeat("a", maxBackupLine) + `"]}` + "\n", "line 3: longer than"},
		{"unknown field", header + newcomer + `{"learner":"` + learnerN(8) + `","flags":["a"],"admin":true}` + "\n", `line 3: invalid JSON: json: unknown field "admin"`},
		{"two objects on a line", header + newcomer + `{"learner":"` + learnerN(8) + `","flags":["a"]} {}` + "\n", "line 3: invalid JSON: more after"},
	}
	// One store per back end, for all the cases: each must leave it as it
	// was.
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			if _, err := s.RecordAnswer(ctx, alice, "locks", "q1", true); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, s)
			for _, tt := range cases {
				n, err := s.Restore(ctx, strings.NewReader(tt.backup))
				if !errors.Is(err, ErrBadBackup) || !strings.Contains(err.Error(), tt.want) || n != 0 {
					t.Errorf("%s: Restore = %d, %v; want 0 and ErrBadBackup containing %q", tt.name, n, err, tt.want)
				}
				if after := snapshot(t, s); !maps.EqualFunc(after, before, slices.Equal) {
					t.Errorf("%s: after a refused restore the store holds %v; want %v as before", tt.name, after, before)
				}
			}
		})
	}
}

// TestBackupWhileWriting takes a backup while learners keep saving
// progress: it succeeds, and every learner saved before it began is in
// it.
func TestBackupWhileWriting(t *testing.T) {
	ctx := context.Background()
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			const before = 300
			var saved sync.WaitGroup
			// Many at once, so that bolt commits them together; not all
			// 300, which on a loaded machine keep a cluster's writes
			// waiting past their deadline.
			slots := make(chan struct{}, 32)
			for i := range before {
				saved.Go(func() {
					slots <- struct{}{}
					defer func() { <-slots }()
					if err := s.MarkStarted(ctx, learnerN(i), "locks"); err != nil {
						t.Error(err)
					}
				})
			}
			saved.Wait()
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Go(func() {
				for i := before; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := s.RecordAnswer(ctx, learnerN(i), "locks", "q1", true); err != nil {
						t.Error(err)
						return
					}
				}
			})
			b, n := backup(t, s)
			close(stop)
			wg.Wait()
			seen := map[string]bool{}
			sc := bufio.NewScanner(bytes.NewReader(b))
			sc.Buffer(nil, maxBackupLine)
			for sc.Scan() {
				var l backupLine
				if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
					t.Fatalf("line %q: %v", sc.Text(), err)
				}
				seen[l.Learner] = true
			}
			for i := range before {
				if !seen[learnerN(i)] {
					t.Errorf("learner %d, saved before the backup, is not in it", i)
				}
			}
			if n < before {
				t.Errorf("Backup = %d learners; want at least %d", n, before)
			}
		})
	}
}
