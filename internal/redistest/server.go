package redistest

import (
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/testenv"
)

// Server is a redis-server the test can stop and start again on the same
// port, to play an outage.
type Server struct {
	Addr string
	Port int
	stop func()
}

// StartServer runs a redis-server on a free loopback port, like Start, and
// returns it so the test can Stop it.
func StartServer(t testing.TB) *Server {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	return StartOnPort(t, port)
}

// StartOnPort runs a redis-server on the given loopback port, for example
// to bring back a server that the test stopped.
func StartOnPort(t testing.TB, port int) *Server {
	t.Helper()
	bin := testenv.LookPath(t, "Debian: apt-get install redis-server", "redis-server")
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", t.TempDir())
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("redistest: start %s: %v", bin, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	s := &Server{Addr: addr, Port: port}
	s.stop = func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	t.Cleanup(s.Stop)
	deadline := time.Now().Add(startTimeout)
	for ping(addr) != nil {
		select {
		case <-exited:
			t.Fatalf("redistest: redis-server on %s exited: %s", addr, out.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.Stop()
			t.Fatal(fmt.Errorf("redistest: redis-server on %s: no PONG after %v: %s", addr, startTimeout, out.String()))
		}
	}
	return s
}

// Stop kills the server and waits for it to exit; stopping twice is fine.
func (s *Server) Stop() {
	if s.stop != nil {
		s.stop()
		s.stop = nil
	}
}
