package playground

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/redistest"
	"github.com/locklab/locklab/internal/testenv"
)

// clearScreen is what redis-cli writes for its local "clear" command. The
// tests send "clear" after every line and read up to it, which separates
// the output of one line from the next while keeping one connection.
const clearScreen = "\x1b[H\x1b[2J"

// redisCLI is a redis-cli --no-raw process reading lines from a pipe, as a
// learner's terminal would feed it.
type redisCLI struct {
	t     testing.TB
	in    io.WriteCloser
	out   chan []byte
	buf   bytes.Buffer
	close func()
}

// startRedis starts a redis-server for the test and returns its address.
func startRedis(t testing.TB) string {
	t.Helper()
	testenv.LookPath(t, "Debian: apt-get install redis-server redis-tools", "redis-server")
	return redistest.Start(t)
}

// startCLI connects a redis-cli to the server at addr.
func startCLI(t testing.TB, addr string) *redisCLI {
	t.Helper()
	bin := testenv.LookPath(t, "Debian: apt-get install redis-server redis-tools", "redis-cli")
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-h", host, "-p", port, "--no-raw")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatalf("start redis-cli: %v", err)
	}
	c := &redisCLI{t: t, in: in, out: make(chan []byte, 16)}
	go func() {
		defer close(c.out)
		r := bufio.NewReader(stdout)
		for {
			b := make([]byte, 4096)
			n, err := r.Read(b)
			if n > 0 {
				c.out <- b[:n]
			}
			if err != nil {
				return
			}
		}
	}()
	c.close = func() {
		in.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	t.Cleanup(c.close)
	return c
}

// exec sends one line and returns what redis-cli printed for it, without
// the final newline, as Result.Output has it.
func (c *redisCLI) exec(line string) string {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\nclear\n"); err != nil {
		c.t.Fatalf("write to redis-cli: %v", err)
	}
	timeout := time.After(10 * time.Second)
	for {
		if i := bytes.Index(c.buf.Bytes(), []byte(clearScreen)); i >= 0 {
			out := string(c.buf.Next(i))
			c.buf.Next(len(clearScreen))
			return strings.TrimSuffix(out, "\n")
		}
		select {
		case b, ok := <-c.out:
			if !ok {
				c.t.Fatalf("redis-cli exited; output so far: %q", c.buf.String())
			}
			c.buf.Write(b)
		case <-timeout:
			c.t.Fatalf("redis-cli gave no answer to %q; output so far: %q", line, c.buf.String())
		}
	}
}
