package loadgen

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/testenv"
)

// realProc returns the machine's /proc, or skips the test without one.
func realProc(t *testing.T) Proc {
	t.Helper()
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("skipping: no /proc file system (Linux only)")
	}
	return Proc{Root: "/proc"}
}

// startChild starts a process that waits until the test ends.
func startChild(t *testing.T) *exec.Cmd {
	t.Helper()
	sleep := testenv.LookPath(t, "it is part of coreutils", "sleep")
	cmd := exec.Command(sleep, "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}

func TestRSSOfThisProcess(t *testing.T) {
	p := realProc(t)
	rss, err := p.RSS(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// A Go test binary has at least a megabyte resident, and surely less
	// than the whole machine.
	if rss < 1<<20 || rss > 64<<30 {
		t.Errorf("RSS(self) = %d bytes; want a plausible size", rss)
	}
}

func TestTreeUsageCountsChildren(t *testing.T) {
	p := realProc(t)
	child := startChild(t)
	tree, err := p.Tree(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if tree[0] != os.Getpid() || !slices.Contains(tree, child.Process.Pid) {
		t.Errorf("Tree(self) = %v; want self (%d) first and the child %d in it", tree, os.Getpid(), child.Process.Pid)
	}
	kids, err := p.childrenByScan(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(kids, child.Process.Pid) {
		t.Errorf("childrenByScan(self) = %v; want the child %d in it", kids, child.Process.Pid)
	}
	self, err := p.RSS(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	u, err := p.TreeUsage(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// self's RSS may move between the two reads, so only the child's
	// presence is checked: two processes at least.
	if u.Procs < 2 || u.RSS <= 0 {
		t.Errorf("TreeUsage(self) = %+v; want the child counted (self alone %d bytes)", u, self)
	}
}

func TestTreeOfMissingProcess(t *testing.T) {
	p := Proc{Root: t.TempDir()}
	if u, err := p.TreeUsage(12345); err == nil {
		t.Errorf("TreeUsage of a missing process = %+v; want an error", u)
	}
}

// TestRSSParse reads status files of a fake proc tree.
func TestRSSParse(t *testing.T) {
	for _, tt := range []struct {
		name, status string
		want         int64
		wantErr      bool
	}{
		{"usual", "Name:\tlocklab\nVmPeak:\t 9999 kB\nVmRSS:\t   12345 kB\nThreads:\t8\n", 12345 * 1024, false},
		{"no VmRSS (kernel thread)", "Name:\tkthreadd\nState:\tS (sleeping)\n", 0, false},
		{"bad unit", "VmRSS:\t 12 MB\n", 0, true},
		{"bad number", "VmRSS:\t 1x2 kB\n", 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeFile(t, filepath.Join(root, "42", "status"), tt.status)
			got, err := Proc{Root: root}.RSS(42)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("RSS(42) = %d, %v; want %d, error %t", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestTreeUsageFakeProc(t *testing.T) {
	root := t.TempDir()
	// 1 has children 2 and 3 (listed by two of its threads); 3 has 4.
	for pid, rss := range map[string]string{"1": "100", "2": "20", "3": "3", "4": "4000"} {
		writeFile(t, filepath.Join(root, pid, "status"), "VmRSS:\t"+rss+" kB\n")
	}
	writeFile(t, filepath.Join(root, "1", "task", "1", "children"), "2 ")
	writeFile(t, filepath.Join(root, "1", "task", "7", "children"), "3")
	writeFile(t, filepath.Join(root, "3", "task", "3", "children"), "4 99")
	writeFile(t, filepath.Join(root, "2", "task", "2", "children"), "")
	writeFile(t, filepath.Join(root, "4", "task", "4", "children"), "")
	// 1 and 4 have used CPU; 2 and 3 have no stat file, which counts as 0.
	writeFile(t, filepath.Join(root, "1", "stat"), "1 (locklab) S 0 1 1 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 9 0 100 0 0")
	writeFile(t, filepath.Join(root, "4", "stat"), "4 (sandbox worker) S 1 1 1 0 -1 4194560 100 0 0 0 7 3 0 0 20 0 9 0 100 0 0")
	u, err := Proc{Root: root}.TreeUsage(1)
	// 99 is listed but gone: it is left out.
	want := TreeUsage{RSS: 4123 * 1024, CPU: 3100 * time.Millisecond, Procs: 4}
	if err != nil || u != want {
		t.Errorf("TreeUsage(1) = %+v, %v; want %+v, nil", u, err, want)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCPU(t *testing.T) {
	for _, tt := range []struct {
		name, stat string
		want       time.Duration
		wantErr    bool
	}{
		{"usual", "42 (locklab) S 1 42 42 0 -1 4194560 2000 0 0 0 1234 56 0 0 20 0 9 0 100 0 0", 12900 * time.Millisecond, false},
		{"name with spaces and parens", "42 (a (b) c) R 1 42 42 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 1 0 0", 30 * time.Millisecond, false},
		{"truncated", "42 (x) S 1 2 3", 0, true},
		{"no name", "42 x S", 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeFile(t, filepath.Join(root, "42", "stat"), tt.stat)
			got, err := Proc{Root: root}.CPU(42)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("CPU(42) = %v, %v; want %v, error %t", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestCPUOfThisProcess(t *testing.T) {
	p := realProc(t)
	// Burn a little CPU so that at least one tick is counted.
	deadline := time.Now().Add(50 * time.Millisecond)
	for n := 0; time.Now().Before(deadline); n++ {
	}
	if cpu, err := p.CPU(os.Getpid()); err != nil || cpu <= 0 {
		t.Errorf("CPU(self) = %v, %v; want more than 0", cpu, err)
	}
}

func TestMachineCPU(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "stat"), `cpu  1000 10 200 90000 50 5 15 20 7 0
cpu0 500 5 100 45000 25 3 7 10 3 0
cpu1 500 5 100 45000 25 2 8 10 4 0
intr 12345 0 0
ctxt 999
`)
	busy, cpus, err := Proc{Root: root}.MachineCPU()
	// user+nice+system+irq+softirq+steal = 1000+10+200+5+15+20 ticks.
	if want := 12500 * time.Millisecond; err != nil || busy != want || cpus != 2 {
		t.Errorf("MachineCPU() = %v, %d, %v; want %v, 2, nil", busy, cpus, err, want)
	}
	if _, _, err := realProc(t).MachineCPU(); err != nil {
		t.Errorf("MachineCPU() on /proc: %v", err)
	}
}

func TestListeningInodes(t *testing.T) {
	const table = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 111 1 0000000000000000 100 0 0 10 0
   1: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000  1000        0 222 1 0000000000000000 20 4 30 10 -1
   2: 00000000:46A8 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 333 1 0000000000000000 100 0 0 10 0
`
	for _, tt := range []struct {
		port int
		want []string
	}{
		{8080, []string{"111"}}, // the established connection (222) is not a listener
		{18088, []string{"333"}},
		{9999, nil},
	} {
		if got := listeningInodes(strings.NewReader(table), tt.port); !slices.Equal(got, tt.want) {
			t.Errorf("listeningInodes(table, %d) = %q; want %q", tt.port, got, tt.want)
		}
	}
}

func TestListenerPIDFindsThisProcess(t *testing.T) {
	p := realProc(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	pid, err := p.ListenerPID(port)
	if err != nil || pid != os.Getpid() {
		t.Errorf("ListenerPID(%d) = %d, %v; want this process, %d", port, pid, err, os.Getpid())
	}
	ln.Close()
	if pid, err := p.ListenerPID(port); err == nil {
		t.Errorf("ListenerPID(%d) after close = %d; want ErrNoListener", port, pid)
	}
}

// TestTreeUsageExcept samples two trees, the second inside the first (a
// -pid that is a child of another): each process is counted once.
func TestTreeUsageExcept(t *testing.T) {
	root := t.TempDir()
	for pid, rss := range map[string]string{"1": "100", "2": "20", "3": "3"} {
		writeFile(t, filepath.Join(root, pid, "status"), "VmRSS:\t"+rss+" kB\n")
	}
	writeFile(t, filepath.Join(root, "1", "task", "1", "children"), "2")
	writeFile(t, filepath.Join(root, "2", "task", "2", "children"), "3")
	writeFile(t, filepath.Join(root, "3", "task", "3", "children"), "")
	p := Proc{Root: root}
	counted := map[int]bool{}
	a, err := p.TreeUsageExcept(1, counted)
	if err != nil || a.RSS != 123*1024 || a.Procs != 3 {
		t.Fatalf("TreeUsageExcept(1) = %+v, %v; want 123 kB in 3 processes", a, err)
	}
	b, err := p.TreeUsageExcept(2, counted)
	if err != nil || b.RSS != 0 || b.Procs != 0 {
		t.Errorf("TreeUsageExcept(2) after 1 = %+v, %v; want nothing left to count", b, err)
	}
	if c, err := p.TreeUsageExcept(2, map[int]bool{}); err != nil || c.RSS != 23*1024 {
		t.Errorf("TreeUsageExcept(2) alone = %+v, %v; want 23 kB", c, err)
	}
}

// TestOtherPrograms checks that what other programs used is what the
// machine spent beyond the servers and the load generator, and none when
// the machine's tick-sampled count comes out below theirs.
func TestOtherPrograms(t *testing.T) {
	for _, c := range []struct{ machine, servers, self, want time.Duration }{
		{10 * time.Second, 6 * time.Second, 2 * time.Second, 2 * time.Second},
		{96 * time.Second, 83 * time.Second, 24 * time.Second, 0},
	} {
		if got := otherPrograms(c.machine, c.servers, c.self); got != c.want {
			t.Errorf("otherPrograms(%v, %v, %v) = %v; want %v", c.machine, c.servers, c.self, got, c.want)
		}
	}
}
