package store

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/locklab/locklab/limit"
)

// stallingRedis passes connections through to a Redis until stall is
// called, and from then on passes nothing back: a Redis that stops
// answering on connections already open, as a paused process or a host
// gone quiet does.
func stallingRedis(t *testing.T, upstream string) (addr string, stall func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var stalled atomic.Bool
	var mu sync.Mutex
	var conns []net.Conn
	keep := func(c net.Conn) {
		mu.Lock()
		defer mu.Unlock()
		conns = append(conns, c)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", upstream)
			if err != nil {
				c.Close()
				continue
			}
			keep(c)
			keep(up)
			go io.Copy(up, c)
			go func() {
				buf := make([]byte, 32<<10)
				for {
					n, err := up.Read(buf)
					if stalled.Load() || err != nil {
						return // the reply is never passed on
					}
					if _, err := c.Write(buf[:n]); err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String(), func() { stalled.Store(true) }
}

// TestHungRedis checks that a call to a Redis that has stopped
// answering ends at its caller's deadline, and that the sandbox copies'
// breaker then opens after its run of failures, so that playground lines
// stop waiting on it. Without the client keeping to its callers'
// deadlines, every call waited for the client's own read timeout, and
// each of a page's calls took that long for as long as Redis hung.
func TestHungRedis(t *testing.T) {
	addr, stall := stallingRedis(t, miniredis.RunT(t).Addr())
	open := func(opts ...Option) *Store {
		s, err := OpenRedis("redis://"+addr, opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if _, err := s.Progress(context.Background(), alice); err != nil {
			t.Fatalf("Progress before the stall: %v", err)
		}
		return s
	}
	// A client whose reads may take a minute, so that a call ending at
	// its caller's deadline of a tenth of a second cannot be mistaken
	// for one ending at the read timeout.
	slow := open(callTimeout(time.Minute))
	c := sandboxCopies(t, open())
	stall()

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := slow.Progress(ctx, alice); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Progress on a hung Redis = %v; want ErrUnavailable", err)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("Progress on a hung Redis took %v; want it ended at its caller's deadline (0.1 s), not the client's read timeout (1 minute)", took)
	}

	for i := range breakerFailures + 1 {
		_, err := c.Version(context.Background(), alice, time.Minute)
		if open := i >= breakerFailures; !errors.Is(err, ErrUnavailable) || strings.Contains(err.Error(), limit.ErrOpen.Error()) != open {
			t.Errorf("Version %d on a hung Redis = %v; want ErrUnavailable, from the open breaker %v", i+1, err, open)
		}
	}
}
