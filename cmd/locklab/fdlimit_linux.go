//go:build linux

package main

import "syscall"

// raiseFiles sets RLIMIT_NOFILE's soft limit as raisedFiles says and
// returns the limits in force.
func raiseFiles() (soft, hard uint64, err error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, 0, err
	}
	want, raise := raisedFiles(uint64(lim.Cur), uint64(lim.Max))
	if !raise {
		return uint64(lim.Cur), uint64(lim.Max), nil
	}
	set := lim
	set.Cur = want
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &set); err != nil {
		return uint64(lim.Cur), uint64(lim.Max), err
	}
	return want, uint64(lim.Max), nil
}
