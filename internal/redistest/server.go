package redistest

import (
	"testing"

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
	s, err := launch(t, bin, port)
	if err != nil {
		t.Fatalf("redistest: %v", err)
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
