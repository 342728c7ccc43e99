package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// addrFile is the file in the data directory where a running server
// records the address it listens on, for `locklab healthcheck`. A
// container's health check is a process of its own: it sees the image's
// environment (LOCKLAB_DATA=/data, LOCKLAB_ADDR=:8080) but not the
// arguments the server was started with, so a server given -addr on its
// command line would be asked for on the wrong port. The data directory
// is where both look: the image names it in the environment, it is the
// server's own (0750) and writable (the volume), and the address file
// there names the port however it was given.
const addrFile = "server.addr"

// recordAddr writes addr to the data directory's address file and
// returns a function that removes it, unless another server wrote its
// own since. A data directory that does not exist (with Redis, the
// server needs none) is left alone; one that cannot be written is
// logged, and the health check then asks -addr's or LOCKLAB_ADDR's
// address.
func recordAddr(dir, addr string, logger *slog.Logger) (forget func()) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return func() {}
	}
	path := filepath.Join(dir, addrFile)
	if err := writeFileAtomic(path, []byte(addr+"\n")); err != nil {
		logger.Warn("the address is not recorded for locklab healthcheck, which will ask LOCKLAB_ADDR's", "error", err)
		return func() {}
	}
	return func() {
		if b, err := os.ReadFile(path); err == nil && bytes.Equal(b, []byte(addr+"\n")) {
			_ = os.Remove(path)
		}
	}
}

// writeFileAtomic writes b to path through a temporary file renamed over
// it, so that a reader never sees half of it.
func writeFileAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// recordedAddr reads the address a running server recorded in dir: ok
// is false when there is none.
func recordedAddr(dir string) (addr string, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(dir, addrFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("the address the server recorded: %w", err)
	}
	addr = strings.TrimSpace(string(b))
	return addr, addr != "", nil
}
