package worker

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// limitData sets RLIMIT_DATA to the data the process has mapped now plus
// n. RLIMIT_DATA counts private writable memory (since Linux 4.7, anonymous
// mmaps too), which is what the Go heap and stacks use. RLIMIT_AS would
// count address space too, which Go reserves generously and never uses;
// an AS limit tight enough to matter makes the runtime fail at odd places.
// Under the race detector, whose shadow memory counts as data, the margin
// is raceMemoryFactor times larger.
func limitData(n int64) error {
	mapped, err := vmData()
	if err != nil {
		return err
	}
	limit := uint64(mapped + n*raceMemoryFactor)
	return syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: limit, Max: limit})
}

// vmData reads the process's data size (VmData) from /proc/self/status.
func vmData() (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmData:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("VmData %q: %w", v, err)
			}
			return kb << 10, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no VmData in /proc/self/status")
}
