package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/locklab/locklab/limit"
)

// TestAsk checks a batch of limits on every store: a limiter refuses past
// its burst, a meter that must hold more than it has refuses and says what
// it held, takes come off, and time refills. On one Redis the batch is
// one script, so a refusal counts nothing that came before it in the
// batch; the file store and a cluster ask one at a time, where what was
// asked before the refusal has counted.
func TestAsk(t *testing.T) {
	ctx := context.Background()
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			together := name == "miniredis" || name == "redis-server"
			learner, addr := s.Limiter(1, 2), s.Limiter(1, 5)
			meter, small := s.Meter(1, 10), s.Meter(1, 10)
			ask := func(asks ...limit.Ask) limit.Answer {
				t.Helper()
				ans, err := s.Ask(ctx, asks)
				if err != nil {
					t.Fatal(err)
				}
				return ans
			}
			allowed := func(l limit.Limiter, key string) int {
				t.Helper()
				n := 0
				for range 10 {
					if ans := ask(limit.Ask{Limiter: l, Key: key}); ans.Refused < 0 {
						n++
					}
				}
				return n
			}

			for i := range 2 {
				if ans := ask(limit.Ask{Limiter: learner, Key: "a"}, limit.Ask{Limiter: addr, Key: "x"}); ans.Refused != -1 {
					t.Fatalf("ask %d within both bursts = %+v; want allowed", i+1, ans)
				}
			}
			if ans := ask(limit.Ask{Limiter: addr, Key: "y"}, limit.Ask{Limiter: learner, Key: "a"}); ans.Refused != 1 {
				t.Fatalf("ask past the learner's burst of 2 = %+v; want refused by the second ask", ans)
			}
			// The address limiter asked before the refusal: counted only
			// when asked one at a time.
			want := 4
			if together {
				want = 5
			}
			if n := allowed(addr, "y"); n != want {
				t.Errorf("address limit then let %d of 10 through; want %d", n, want)
			}

			ans := ask(limit.Ask{Limiter: learner, Key: "b"}, limit.Ask{Meter: meter, Key: "m", Need: 11})
			if ans.Refused != 1 || ans.Have != 10 {
				t.Fatalf("meter of 10 asked for 11 = %+v; want refused by the second ask, holding 10", ans)
			}
			want = 1
			if together {
				want = 2
			}
			if n := allowed(learner, "b"); n != want {
				t.Errorf("learner limit then let %d of 10 through; want %d", n, want)
			}

			if ans := ask(limit.Ask{Meter: meter, Key: "m", Take: 4}, limit.Ask{Meter: small, Key: "n", Take: 25}); ans.Refused != -1 {
				t.Fatalf("takes = %+v; want allowed", ans)
			}
			if n, err := meter.Available(ctx, "m"); err != nil || n < 6 || n > 7 {
				t.Errorf("meter after taking 4 of 10 = %d, %v; want 6", n, err)
			}
			if n, err := small.Available(ctx, "n"); err != nil || n > 1 {
				t.Errorf("meter after taking 25 of 10 = %d, %v; want 0 (all it had)", n, err)
			}

			// A unit comes back every 50 ms: two asks at once find one, and
			// one after 60 ms finds it back.
			every := 50 * time.Millisecond
			fast := s.Limiter(20, 1)
			start := time.Now()
			a, b := ask(limit.Ask{Limiter: fast, Key: "f"}), ask(limit.Ask{Limiter: fast, Key: "f"})
			if a.Refused != -1 {
				t.Fatalf("first ask of a burst of 1 = %+v; want allowed", a)
			}
			if b.Refused != 0 && time.Since(start) < every {
				t.Fatalf("second ask within %v = %+v; want refused", time.Since(start), b)
			}
			time.Sleep(every + 10*time.Millisecond)
			if ans := ask(limit.Ask{Limiter: fast, Key: "f"}); ans.Refused != -1 {
				t.Errorf("after %v (a unit back) = %+v; want allowed", every+10*time.Millisecond, ans)
			}
		})
	}
}

// TestAskFailsOpen checks that a batch on a Redis that is down allows,
// with the error for the log, and that one with a limiter the store did
// not make is asked one at a time.
func TestAskFailsOpen(t *testing.T) {
	ctx := context.Background()
	m := miniredis.RunT(t)
	s, err := OpenRedis("redis://" + m.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	l := s.Limiter(1, 1)
	mem := limit.NewMemoryLimiter(1, 1)
	if ans, err := s.Ask(ctx, []limit.Ask{{Limiter: l, Key: "k"}, {Limiter: mem, Key: "k"}}); err != nil || ans.Refused != -1 {
		t.Fatalf("mixed batch = %+v, %v; want allowed", ans, err)
	}
	if ans, err := s.Ask(ctx, []limit.Ask{{Limiter: l, Key: "k"}, {Limiter: mem, Key: "k"}}); err != nil || ans.Refused != 0 {
		t.Fatalf("mixed batch past both bursts = %+v, %v; want refused by the first", ans, err)
	}
	m.Close()
	ans, err := s.Ask(ctx, []limit.Ask{{Limiter: l, Key: "k"}, {Limiter: l, Key: "j"}})
	if ans.Refused != -1 || !errors.Is(err, ErrUnavailable) {
		t.Errorf("batch with Redis down = %+v, %v; want allowed, with ErrUnavailable", ans, err)
	}
}
