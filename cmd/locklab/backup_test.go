package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/locklab/locklab/internal/testenv"
	"github.com/locklab/locklab/store"
)

// runCommand runs `locklab args...` with env and returns its stdout and
// error.
func runCommand(t *testing.T, env map[string]string, args ...string) (string, error) {
	t.Helper()
	stdout, stderr := &testenv.SyncBuffer{}, &testenv.SyncBuffer{}
	err := run(context.Background(), append([]string{"locklab"}, args...), func(k string) string { return env[k] }, stdout, stderr)
	if err != nil {
		t.Logf("locklab %s: stderr %s", strings.Join(args, " "), stderr)
	}
	return stdout.String(), err
}

// answered records answers on base: two right for one learner, one for
// another, and returns the two learners.
func answered(t *testing.T, base string) (two, one string) {
	t.Helper()
	for _, a := range []struct {
		learner *string
		q, c    string
	}{
		{&two, "gc-pause", "fencing"},
		{&two, "release-script", "other-holder"},
		{&one, "gc-pause", "fencing"},
	} {
		code, id, body := answerAs(t, base, *a.learner, a.q, a.c)
		if code != 200 {
			t.Fatalf("answer %s = %d %s", a.q, code, body)
		}
		*a.learner = id
	}
	return two, one
}

// wantRight checks how many questions each learner has right on base.
func wantRight(t *testing.T, base string, right map[string]int) {
	t.Helper()
	for learner, n := range right {
		if p := progressOf(t, base, learner); p.Right != n {
			t.Errorf("learner %s has %d right; want %d", learner, p.Right, n)
		}
	}
}

// TestBackupAndRestoreWithBolt backs up a running server's file store
// (through its control socket), restores the backup into a new data
// directory with no server (directly), and finds the progress there.
func TestBackupAndRestoreWithBolt(t *testing.T) {
	dir := t.TempDir()
	base, _, stop := startServer(t, map[string]string{"LOCKLAB_DATA": dir})
	two, one := answered(t, base)
	if st, err := os.Stat(filepath.Join(dir, controlSocket)); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("control socket: %v, %v; want mode 0600", st, err)
	}

	file := filepath.Join(t.TempDir(), "backup.jsonl")
	out, err := runCommand(t, nil, "backup", "-data", dir, file)
	if err != nil || out != "backed up 2 learners to "+file+"\n" {
		t.Fatalf("backup while the server runs = %q, %v; want backed up 2 learners", out, err)
	}
	b, _ := os.ReadFile(file)
	if !strings.HasPrefix(string(b), `{"locklab_backup":1,`) || !strings.Contains(string(b), two) || !strings.Contains(string(b), one) {
		t.Errorf("backup = %s; want the header and both learners", b)
	}
	if _, err := os.Stat(file + ".tmp"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s.tmp is left: %v", file, err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, controlSocket)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("control socket after shutdown: %v; want it removed", err)
	}
	// With the server stopped, the file is opened directly, and gives
	// the same backup but for its time.
	again := filepath.Join(t.TempDir(), "again.jsonl")
	if out, err := runCommand(t, map[string]string{"LOCKLAB_DATA": dir}, "backup", again); err != nil || !strings.HasPrefix(out, "backed up 2 learners") {
		t.Errorf("backup of a stopped server = %q, %v", out, err)
	}

	fresh := filepath.Join(t.TempDir(), "data")
	out, err = runCommand(t, nil, "restore", "-data", fresh, file)
	if err != nil || out != "restored 2 learners from "+file+"\n" {
		t.Fatalf("restore with no server = %q, %v; want restored 2 learners", out, err)
	}
	base, _, _ = startServer(t, map[string]string{"LOCKLAB_DATA": fresh})
	wantRight(t, base, map[string]int{two: 2, one: 1})
}

// TestRestoreThroughControlSocket restores into a server that runs, and
// keeps what it had.
func TestRestoreThroughControlSocket(t *testing.T) {
	srcDir := t.TempDir()
	srcBase, _, _ := startServer(t, map[string]string{"LOCKLAB_DATA": srcDir})
	two, one := answered(t, srcBase)
	file := filepath.Join(t.TempDir(), "backup.jsonl")
	out, err := runCommand(t, nil, "backup", "-data", srcDir, file)
	if err != nil {
		t.Fatalf("backup = %q, %v", out, err)
	}

	dir := t.TempDir()
	base, _, _ := startServer(t, map[string]string{"LOCKLAB_DATA": dir})
	_, own, _ := answerAs(t, base, "", "gc-pause", "fencing")
	// one answers another question on this server before the restore.
	if code, _, body := answerAs(t, base, one, "release-script", "other-holder"); code != 200 {
		t.Fatalf("answer = %d %s", code, body)
	}
	out, err = runCommand(t, nil, "restore", "-data", dir, file)
	if err != nil || out != "restored 2 learners from "+file+"\n" {
		t.Fatalf("restore while the server runs = %q, %v", out, err)
	}
	wantRight(t, base, map[string]int{two: 2, one: 2, own: 1})
}

// TestBackupAndRestoreWithRedis backs up one Redis to standard output
// and restores it from standard input into another, both opened
// directly, with the URL from REDIS_URL and from -redis-url.
func TestBackupAndRestoreWithRedis(t *testing.T) {
	src := miniredis.RunT(t)
	base, _, _ := startServer(t, map[string]string{"REDIS_URL": "redis://" + src.Addr()})
	two, one := answered(t, base)
	backup, err := runCommand(t, map[string]string{"REDIS_URL": "redis://" + src.Addr()}, "backup", "-")
	if err != nil || !strings.HasPrefix(backup, `{"locklab_backup":1,`) || !strings.Contains(backup, `"store":"redis"`) || strings.Count(backup, "\n") != 3 {
		t.Fatalf("backup to stdout = %q, %v; want a header with store redis and two learners", backup, err)
	}

	dst := miniredis.RunT(t)
	var stdout, stderr bytes.Buffer
	env := map[string]string{"LOCKLAB_PROGRESS_TTL": "48h"}
	err = restoreCommand(context.Background(), []string{"-redis-url", "redis://" + dst.Addr(), "-"}, func(k string) string { return env[k] }, strings.NewReader(backup), &stdout, &stderr)
	if err != nil || stdout.String() != "restored 2 learners from -\n" {
		t.Fatalf("restore from stdin = %q, %v (stderr %s)", stdout.String(), err, stderr.String())
	}
	// Restored learners are kept as long as the server keeps them.
	if ttl := dst.TTL("locklab:learner:" + two); ttl != 48*time.Hour {
		t.Errorf("a restored learner's TTL = %v; want the -progress-ttl given, 48h", ttl)
	}
	base, _, _ = startServer(t, map[string]string{"REDIS_URL": "redis://" + dst.Addr()})
	wantRight(t, base, map[string]int{two: 2, one: 1})
}

// TestRestoreRefusesABadFile gives restore a broken backup, through the
// control socket and directly: it fails naming the line, and the
// progress is as it was.
func TestRestoreRefusesABadFile(t *testing.T) {
	dir := t.TempDir()
	base, _, stop := startServer(t, map[string]string{"LOCKLAB_DATA": dir})
	two, one := answered(t, base)
	good := filepath.Join(t.TempDir(), "good.jsonl")
	if _, err := runCommand(t, nil, "backup", "-data", dir, good); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(good)
	lines := strings.SplitAfter(string(b), "\n")
	// The first learner's line is good and new; the next is broken.
	newcomer := `{"learner":"newcomer0123456789abcd","flags":["distributed-locks/right/gc-pause"]}` + "\n"
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte(lines[0]+newcomer+`{"learner":"`+two+`","flags":["x"`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, how := range []string{"through the control socket", "directly"} {
		_, err := runCommand(t, nil, "restore", "-data", dir, bad)
		if err == nil || !strings.Contains(err.Error(), "line 3: invalid JSON") {
			t.Errorf("restore %s of a broken file = %v; want an error naming line 3", how, err)
		}
		if how == "through the control socket" {
			wantRight(t, base, map[string]int{two: 2, one: 1, "newcomer0123456789abcd": 0})
			if err := stop(); err != nil {
				t.Fatal(err)
			}
		}
	}
	after := filepath.Join(t.TempDir(), "after.jsonl")
	if _, err := runCommand(t, nil, "backup", "-data", dir, after); err != nil {
		t.Fatal(err)
	}
	if a, _ := os.ReadFile(after); dropHeader(string(a)) != dropHeader(string(b)) {
		t.Errorf("after refused restores the progress is\n%s\nwant as before\n%s", a, b)
	}
}

func dropHeader(backup string) string {
	_, rest, _ := strings.Cut(backup, "\n")
	return rest
}

// TestBackupErrors checks what the commands say when they cannot work.
func TestBackupErrors(t *testing.T) {
	empty := t.TempDir()
	locked := t.TempDir()
	// Another process's hold on the file, without a server's socket.
	st, err := store.OpenBolt(locked)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"no FILE", []string{"backup", "-data", empty}, "want one FILE"},
		{"no progress file", []string{"backup", "-data", empty, filepath.Join(empty, "b.jsonl")}, "no progress in"},
		{"file in use", []string{"backup", "-data", locked, filepath.Join(empty, "b.jsonl")}, "in use by another process, and no server answers"},
		{"missing backup", []string{"restore", "-data", empty, filepath.Join(empty, "nope.jsonl")}, "no such file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runCommand(t, nil, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("locklab %q = %v; want an error containing %q", tt.args, err, tt.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(empty, "b.jsonl.tmp")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a failed backup left its .tmp: %v", err)
	}
}
