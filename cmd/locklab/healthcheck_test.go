package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHealthcheckFindsTheServer runs the server as a container would with
// its address given as a flag (startServer passes -addr 127.0.0.1:0),
// while the environment the health check sees names another address, as
// the image's LOCKLAB_ADDR=:8080 does: the health check must find the
// server through the address it recorded in the data directory, and stop
// finding it once the server is gone. An -addr on the health check's own
// command line wins.
func TestHealthcheckFindsTheServer(t *testing.T) {
	dataDir := t.TempDir()
	base, _, stop := startServer(t, map[string]string{"LOCKLAB_DATA": dataDir})
	imageEnv := func(k string) string {
		return map[string]string{"LOCKLAB_ADDR": "127.0.0.1:1", "LOCKLAB_DATA": dataDir}[k]
	}
	check := func(args ...string) error {
		return healthcheck(context.Background(), args, imageEnv, io.Discard)
	}
	if err := check(); err != nil {
		t.Errorf("healthcheck with the server's address given as a flag = %v; want nil", err)
	}
	if err := check("-addr", "127.0.0.1:1"); err == nil {
		t.Error("healthcheck -addr 127.0.0.1:1 = nil; want an error: the command line names where to ask")
	}
	if err := check("-addr", strings.TrimPrefix(base, "http://")); err != nil {
		t.Errorf("healthcheck -addr <the server's> = %v; want nil", err)
	}
	// Elsewhere, -data says where to look.
	if err := healthcheck(context.Background(), []string{"-data", dataDir}, func(string) string { return "" }, io.Discard); err != nil {
		t.Errorf("healthcheck -data %s = %v; want nil", dataDir, err)
	}
	if err := stop(); err != nil {
		t.Fatalf("run = %v", err)
	}
	if _, err := os.Stat(filepath.Join(dataDir, addrFile)); !os.IsNotExist(err) {
		t.Errorf("after shutdown, the address file: %v; want it removed", err)
	}
	if err := check(); err == nil {
		t.Error("healthcheck after the server stopped = nil; want an error")
	}
}

// TestRecordAddr: the address file names the address, wildcard hosts are
// asked on the loopback, and a server does not remove the file another
// server wrote since.
func TestRecordAddr(t *testing.T) {
	dir := t.TempDir()
	logger := slog.New(slog.DiscardHandler)
	forgetFirst := recordAddr(dir, "[::]:8080", logger)
	if got, ok, err := recordedAddr(dir); got != "[::]:8080" || !ok || err != nil {
		t.Fatalf("recordedAddr = %q, %v, %v; want [::]:8080", got, ok, err)
	}
	forgetSecond := recordAddr(dir, "127.0.0.1:9090", logger)
	forgetFirst()
	if got, ok, _ := recordedAddr(dir); got != "127.0.0.1:9090" || !ok {
		t.Errorf("after the first server stopped, recordedAddr = %q, %v; want the second's", got, ok)
	}
	forgetSecond()
	if got, ok, err := recordedAddr(dir); ok || err != nil {
		t.Errorf("after both stopped, recordedAddr = %q, %v, %v; want none", got, ok, err)
	}
	// A data directory that does not exist is not made for it.
	missing := filepath.Join(dir, "none")
	recordAddr(missing, "127.0.0.1:9090", logger)()
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("recordAddr made %s: %v", missing, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
		t.Errorf("temporary files left behind: %q", left)
	}
}
