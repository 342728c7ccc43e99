package loadgen

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Proc reads process information from a Linux /proc file system.
type Proc struct {
	// Root is where proc is mounted, normally "/proc".
	Root string
}

// RSS returns the resident set size of process pid in bytes, from VmRSS
// in /proc/PID/status. A process without VmRSS (a zombie, a kernel
// thread) has 0.
func (p Proc) RSS(pid int) (int64, error) {
	b, err := os.ReadFile(filepath.Join(p.Root, strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, fmt.Errorf("read status of pid %d: %w", pid, err)
	}
	for line := range strings.Lines(string(b)) {
		rest, ok := strings.CutPrefix(line, "VmRSS:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("pid %d: unexpected VmRSS line %q", pid, strings.TrimSpace(line))
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("pid %d: VmRSS: %w", pid, err)
		}
		return kb * 1024, nil
	}
	return 0, nil
}

// ticksPerSecond is USER_HZ, the unit of CPU times in /proc/PID/stat.
// It is 100 on every Linux architecture Go supports; reading it would take
// cgo (sysconf).
const ticksPerSecond = 100

// CPU returns the user plus system CPU time process pid has used so far,
// from /proc/PID/stat.
func (p Proc) CPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(filepath.Join(p.Root, strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, fmt.Errorf("read stat of pid %d: %w", pid, err)
	}
	// The command name in parentheses may hold spaces; utime and stime are
	// the 12th and 13th fields after the last ")".
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("pid %d: malformed stat %q", pid, clip(b))
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 13 {
		return 0, fmt.Errorf("pid %d: malformed stat %q", pid, clip(b))
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("pid %d: stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / ticksPerSecond, nil
}

// MachineCPU returns the CPU time all processors of the machine have been
// busy (user, nice, system, irq, softirq and steal; guest time is part of
// user) since boot, from the first line of /proc/stat, and the number of
// processors.
func (p Proc) MachineCPU() (busy time.Duration, cpus int, err error) {
	b, err := os.ReadFile(filepath.Join(p.Root, "stat"))
	if err != nil {
		return 0, 0, fmt.Errorf("read machine stat: %w", err)
	}
	var ticks int64
	for line := range strings.Lines(string(b)) {
		fields := strings.Fields(line)
		switch {
		case len(fields) > 0 && fields[0] == "cpu":
			if len(fields) < 9 {
				return 0, 0, fmt.Errorf("machine stat: short cpu line %q", strings.TrimSpace(line))
			}
			// user nice system idle iowait irq softirq steal
			for _, i := range []int{1, 2, 3, 6, 7, 8} {
				n, err := strconv.ParseInt(fields[i], 10, 64)
				if err != nil {
					return 0, 0, fmt.Errorf("machine stat: %w", err)
				}
				ticks += n
			}
		case len(fields) > 0 && strings.HasPrefix(fields[0], "cpu"):
			cpus++
		}
	}
	if cpus == 0 {
		return 0, 0, fmt.Errorf("machine stat: no cpu lines")
	}
	return time.Duration(ticks) * time.Second / ticksPerSecond, cpus, nil
}

// Children returns the pids of the direct children of pid, from
// /proc/PID/task/*/children. Kernels built without that file get a scan of
// every /proc/PID/stat for the parent pid instead.
func (p Proc) Children(pid int) ([]int, error) {
	files, err := filepath.Glob(filepath.Join(p.Root, strconv.Itoa(pid), "task", "*", "children"))
	if err != nil {
		return nil, fmt.Errorf("children of pid %d: %w", pid, err)
	}
	if len(files) == 0 {
		if _, err := os.Stat(filepath.Join(p.Root, strconv.Itoa(pid))); err != nil {
			return nil, fmt.Errorf("children of pid %d: %w", pid, err)
		}
		return p.childrenByScan(pid)
	}
	var kids []int
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the thread ended meanwhile
		}
		for _, field := range strings.Fields(string(b)) {
			if kid, err := strconv.Atoi(field); err == nil {
				kids = append(kids, kid)
			}
		}
	}
	return kids, nil
}

// childrenByScan finds the children of pid by reading the parent pid of
// every process.
func (p Proc) childrenByScan(pid int) ([]int, error) {
	entries, err := os.ReadDir(p.Root)
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", p.Root, err)
	}
	var kids []int
	for _, e := range entries {
		other, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(p.Root, e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The command name in parentheses may hold spaces; the parent pid
		// is the second field after the last ")".
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(b[i+1:]))
		if len(fields) >= 2 && fields[1] == strconv.Itoa(pid) {
			kids = append(kids, other)
		}
	}
	return kids, nil
}

// Tree returns pid and all its descendants. Processes that end while it
// walks the tree are left out; an error means pid itself is gone.
func (p Proc) Tree(pid int) ([]int, error) {
	if _, err := os.Stat(filepath.Join(p.Root, strconv.Itoa(pid))); err != nil {
		return nil, fmt.Errorf("process %d: %w", pid, err)
	}
	seen := map[int]bool{pid: true}
	tree := []int{pid}
	// The walk is breadth first and bounded by the number of processes:
	// seen stops a cycle should pids be reused mid-walk.
	for i := 0; i < len(tree); i++ {
		kids, err := p.Children(tree[i])
		if err != nil {
			continue
		}
		for _, k := range kids {
			if !seen[k] {
				seen[k] = true
				tree = append(tree, k)
			}
		}
	}
	return tree, nil
}

// TreeUsage is what a process tree uses at one moment.
type TreeUsage struct {
	RSS   int64         // summed resident set size, in bytes
	CPU   time.Duration // summed CPU time used so far by the live processes
	Procs int           // processes in the tree
}

// TreeUsage returns the summed RSS and CPU time of pid and all its
// descendants.
func (p Proc) TreeUsage(pid int) (TreeUsage, error) {
	return p.TreeUsageExcept(pid, nil)
}

// TreeUsageExcept is TreeUsage leaving out the processes in counted, and
// adds those it counts to counted (if not nil): sampling several servers
// that way counts a process found in two trees, such as a -pid that is a
// child of another, once.
func (p Proc) TreeUsageExcept(pid int, counted map[int]bool) (TreeUsage, error) {
	var u TreeUsage
	tree, err := p.Tree(pid)
	if err != nil {
		return u, err
	}
	for i, q := range tree {
		if counted[q] {
			continue
		}
		n, err := p.RSS(q)
		if err != nil {
			if i == 0 {
				return TreeUsage{}, err
			}
			continue // a child ended meanwhile
		}
		u.RSS += n
		u.Procs++
		if counted != nil {
			counted[q] = true
		}
		if cpu, err := p.CPU(q); err == nil {
			u.CPU += cpu
		}
	}
	return u, nil
}

// ErrNoListener is returned by ListenerPID when no visible process listens
// on the port.
var ErrNoListener = errors.New("no process found listening on the port")

// ListenerPID finds the process that listens on TCP port, on any address:
// it takes the inodes of listening sockets from net/tcp and net/tcp6, then
// looks for a process holding one of them in its fd directory. It is best
// effort: processes of other users, whose fds cannot be read, are not
// found.
func (p Proc) ListenerPID(port int) (int, error) {
	inodes := make(map[string]bool)
	for _, name := range []string{"tcp", "tcp6"} {
		f, err := os.Open(filepath.Join(p.Root, "net", name))
		if err != nil {
			continue
		}
		for _, inode := range listeningInodes(f, port) {
			inodes[inode] = true
		}
		f.Close()
	}
	if len(inodes) == 0 {
		return 0, fmt.Errorf("port %d: %w", port, ErrNoListener)
	}
	entries, err := os.ReadDir(p.Root)
	if err != nil {
		return 0, fmt.Errorf("scan %s: %w", p.Root, err)
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		fds, err := os.ReadDir(filepath.Join(p.Root, e.Name(), "fd"))
		if err != nil {
			continue // not ours to read, or gone
		}
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(p.Root, e.Name(), "fd", fd.Name()))
			if err != nil {
				continue
			}
			inode, ok := strings.CutPrefix(link, "socket:[")
			if ok && inodes[strings.TrimSuffix(inode, "]")] {
				return pid, nil
			}
		}
	}
	return 0, fmt.Errorf("port %d: %w", port, ErrNoListener)
}

// tcpListen is the state column's value for a listening socket.
const tcpListen = "0A"

// listeningInodes returns the inodes of sockets in LISTEN state on port,
// read from a /proc/net/tcp or tcp6 table.
func listeningInodes(r io.Reader, port int) []string {
	var inodes []string
	sc := bufio.NewScanner(r)
	sc.Scan() // the header line
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[3] != tcpListen {
			continue
		}
		_, hexPort, ok := strings.Cut(fields[1], ":")
		if !ok {
			continue
		}
		if n, err := strconv.ParseUint(hexPort, 16, 16); err == nil && int(n) == port {
			inodes = append(inodes, fields[9])
		}
	}
	return inodes
}
