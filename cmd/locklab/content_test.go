package main

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locklab/locklab/content"
)

// TestRunChecksContent checks that -content DIR with a file that loads but
// does not fit the rest (a race scenario that does not exist, a quiz with
// no lesson, a quiz that does not parse) stops run at start-up with an
// error naming the file and the problem, so main exits non-zero.
func TestRunChecksContent(t *testing.T) {
	for _, tt := range []struct {
		name string
		file string
		edit func(string) string
		want string
	}{
		{"unknown race scenario", "lessons/distributed-locks.md",
			func(s string) string { return strings.Replace(s, "\nrace: gc-pause\n", "\nrace: gc-pasue\n", 1) },
			`lessons/distributed-locks.md: front matter: race "gc-pasue" is not a race scenario`},
		{"quiz without a lesson", "quizzes/leader-election.yaml",
			func(string) string {
				b, _ := fs.ReadFile(content.Embedded(), "quizzes/distributed-locks.yaml")
				return strings.Replace(string(b), "\ntopic: distributed-locks\n", "\ntopic: leader-election\n", 1)
			},
			`quizzes/leader-election.yaml: there is no lesson "leader-election"`},
		{"quiz that does not parse", "quizzes/distributed-locks.yaml",
			func(string) string { return "questions: [\n" },
			"quizzes/distributed-locks.yaml"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.CopyFS(dir, content.Embedded()); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, filepath.FromSlash(tt.file))
			old, _ := os.ReadFile(path) // absent for a new file
			edited := tt.edit(string(old))
			if edited == string(old) {
				t.Fatalf("the edit left %s as it was", tt.file)
			}
			if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"locklab", "-data", t.TempDir(), "-addr", "127.0.0.1:0", "-content", dir}
			// Cancelled, so that a run that wrongly starts serving
			// returns at once instead of serving on.
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			err := run(ctx, args, func(string) string { return "" }, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "load content from "+dir) {
				t.Errorf("run with a broken %s = %v; want an error containing %q", tt.file, err, tt.want)
			}
		})
	}
}
