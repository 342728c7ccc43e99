// Package redistest starts real redis-server processes for tests, so that
// behaviour checked against miniredis is also checked against Redis itself.
package redistest

import (
	"bufio"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/testenv"
)

// startTimeout bounds how long Start waits for a server to answer PING.
const startTimeout = 10 * time.Second

// Start runs a redis-server on a free loopback port, without persistence,
// waits until it answers PING and returns its address ("127.0.0.1:port").
// The server is killed when the test ends. Without redis-server on PATH the
// test is skipped, or failed under CI=true.
func Start(t testing.TB) string {
	t.Helper()
	bin := testenv.LookPath(t, "Debian: apt-get install redis-server", "redis-server")
	var lastErr error
	// The port is free when we ask, but another process may take it before
	// redis-server binds it; try a few ports before giving up.
	for range 3 {
		addr, err := start(t, bin)
		if err == nil {
			return addr
		}
		lastErr = err
	}
	t.Fatalf("redistest: %v", lastErr)
	return ""
}

// StartN starts n servers with Start and returns their addresses.
func StartN(t testing.TB, n int) []string {
	t.Helper()
	addrs := make([]string, n)
	for i := range addrs {
		addrs[i] = Start(t)
	}
	return addrs
}

func start(t testing.TB, bin string) (string, error) {
	t.Helper()
	port, err := freePort()
	if err != nil {
		return "", err
	}
	srv, err := launch(t, bin, port)
	if err != nil {
		return "", err
	}
	return srv.Addr, nil
}

// launch runs redis-server on port, waits for PING and registers its
// shutdown with the test.
func launch(t testing.TB, bin string, port int) (*Server, error) {
	t.Helper()
	return launchWith(t, bin, port)
}

// launchWith is launch with extraArgs appended to the command line: they
// override the defaults, since redis-server keeps the last value of an
// option (--appendonly yes for a node whose crash must keep its data).
func launchWith(t testing.TB, bin string, port int, extraArgs ...string) (*Server, error) {
	t.Helper()
	args := append([]string{
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no",
		"--dir", t.TempDir(),
	}, extraArgs...)
	return launchArgs(t, bin, port, args)
}

// launchArgs runs bin with exactly args, for a server that answers on
// port, and waits for PING like launch. Sentinel needs it: its config
// file must be the first argument, before any option.
func launchArgs(t testing.TB, bin string, port int, args []string) (*Server, error) {
	t.Helper()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cmd := exec.Command(bin, args...)
	var out testenv.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	s := &Server{Addr: addr, Port: port, stop: func() {
		_ = cmd.Process.Kill()
		<-exited
	}}
	deadline := time.Now().Add(startTimeout)
	for {
		if err := Ping(addr); err == nil {
			t.Cleanup(s.Stop)
			return s, nil
		}
		select {
		case <-exited:
			return nil, fmt.Errorf("redis-server on %s exited: %s", addr, out.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("redis-server on %s: no PONG after %v: %s", addr, startTimeout, out.String())
		}
	}
}

// freePort asks the kernel for an unused loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Ping sends PING to the server at addr in the inline protocol and
// expects +PONG: how a test knows a server it started is ready.
func Ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(time.Second)); err != nil {
		return err
	}
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "+PONG" {
		return fmt.Errorf("ping %s: got %q", addr, line)
	}
	return nil
}
