package main

import "log/slog"

// A process has a soft limit on its open file descriptors, which it may
// raise up to the hard limit. Every connection holds one; a process at
// its limit accepts no one, so the server raises the soft limit to the
// hard one at start and keeps a share of it for what is not a
// connection.

// rlimInfinity is RLIM_INFINITY: no limit.
const rlimInfinity = ^uint64(0)

// infiniteFiles is the soft limit set under an infinite hard one: Linux
// refuses more open files than fs.nr_open, 1,048,576 by default.
const infiniteFiles = 1 << 20

// raisedFiles is the soft limit to set, given the soft and hard limits:
// the hard one, or infiniteFiles when it is infinite (never lower than
// soft). It reports false when soft is that already.
func raisedFiles(soft, hard uint64) (uint64, bool) {
	want := hard
	if hard == rlimInfinity {
		want = max(soft, infiniteFiles)
	}
	if want <= soft {
		return soft, false
	}
	return want, true
}

// connRoom is how many connections fit in files descriptors: all but a
// reserve of an eighth, and at least 64, for the store's files and
// connections, the workers' pipes, the metrics listener and the
// runtime's own; half of them when they are that few. 0 files (unknown)
// is 0, no ceiling.
func connRoom(files uint64) int {
	if files == 0 || files == rlimInfinity {
		return 0
	}
	reserve := max(files/8, 64)
	if files < 2*reserve {
		return int(max(files/2, 1))
	}
	return int(min(files-reserve, 1<<30))
}

// raiseFileLimit raises the soft limit on open files to the hard one
// and logs what it became; it returns the soft limit in force (0 where
// the system has none to read).
func raiseFileLimit(logger *slog.Logger) uint64 {
	soft, hard, err := raiseFiles()
	if err != nil {
		logger.Warn("could not raise the open files limit", "soft", soft, "hard", hard, "error", err)
	}
	if soft != 0 {
		logger.Info("open files limit", "soft", soft, "hard", hard, "connections", connRoom(soft))
	}
	return soft
}
