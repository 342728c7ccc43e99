package limit

import (
	"context"
	"testing"
	"time"
)

// TestJoinLimits runs the default join limits on a fake clock: a room of
// 300 behind one address joins within a minute, one address cannot join
// faster than the rate after its burst, and other addresses are not held
// back by it.
func TestJoinLimits(t *testing.T) {
	ctx := context.Background()
	clk := newFakeClock()
	l := NewJoinLimits(Memory{Now: clk.Now}, JoinRates{Joins: DefaultJoinRate, WrongCodes: DefaultWrongJoinCodes})
	const nat, other = "192.0.2.1", "198.51.100.7"

	// A squatter sends as fast as it can: the burst, then nothing until
	// the bucket refills.
	allowed := 0
	for range 500 {
		if d, err := l.Join(ctx, nat); err != nil {
			t.Fatal(err)
		} else if d.Allowed() {
			allowed++
		} else if d.Limit != "joins_per_address" || d.Wait <= 0 {
			t.Fatalf("refusal = %+v; want joins_per_address with a wait", d)
		}
	}
	if want := 2 * DefaultJoinRate; allowed != want {
		t.Errorf("%d of 500 joins at once allowed; want the burst, %d", allowed, want)
	}
	if d, _ := l.Join(ctx, other); !d.Allowed() {
		t.Errorf("another address is refused (%+v) while one is at its limit", d)
	}

	// A room of 300 behind one address, each learner retrying a second
	// after a refusal, as Retry-After says.
	clk.Advance(time.Minute)
	joined, start := 0, clk.Now()
	for joined < 300 && clk.Now().Sub(start) < 2*time.Minute {
		for range 300 - joined {
			if d, _ := l.Join(ctx, nat); d.Allowed() {
				joined++
			}
		}
		clk.Advance(time.Second)
	}
	if took := clk.Now().Sub(start); joined < 300 || took > time.Minute {
		t.Errorf("a room of 300 behind one address: %d joined in %v; want all within a minute", joined, took)
	}
}

// TestJoinCodeGuesses: an address may type a few wrong codes, then waits
// for each next one; right codes cost nothing, and another address keeps
// its own allowance.
func TestJoinCodeGuesses(t *testing.T) {
	ctx := context.Background()
	clk := newFakeClock()
	l := NewJoinLimits(Memory{Now: clk.Now}, JoinRates{Joins: DefaultJoinRate, WrongCodes: DefaultWrongJoinCodes})
	const guesser, learner = "192.0.2.1", "198.51.100.7"
	tried := 0
	for range 100 {
		d, err := l.CheckCode(ctx, guesser)
		if err != nil {
			t.Fatal(err)
		}
		if !d.Allowed() {
			if d.Limit != "join_codes" || d.Wait != 6*time.Second {
				t.Errorf("refusal = %+v; want join_codes with a 6 s wait", d)
			}
			break
		}
		tried++
		if err := l.WrongCode(ctx, guesser); err != nil {
			t.Fatal(err)
		}
	}
	if tried != DefaultWrongJoinCodes {
		t.Errorf("%d wrong codes tried before a refusal; want %d", tried, DefaultWrongJoinCodes)
	}
	if d, _ := l.CheckCode(ctx, learner); !d.Allowed() {
		t.Errorf("another address is refused: %+v", d)
	}
	clk.Advance(6 * time.Second)
	if d, _ := l.CheckCode(ctx, guesser); !d.Allowed() {
		t.Errorf("after 6 s, the guesser is still refused: %+v; want one more try", d)
	}
}

// TestJoinLimitsOff: rates of 0 limit nothing.
func TestJoinLimitsOff(t *testing.T) {
	ctx := context.Background()
	l := NewJoinLimits(Memory{}, JoinRates{})
	for range 1000 {
		if d, err := l.Join(ctx, "192.0.2.1"); !d.Allowed() || err != nil {
			t.Fatalf("Join with no limits = %+v, %v", d, err)
		}
		if err := l.WrongCode(ctx, "192.0.2.1"); err != nil {
			t.Fatal(err)
		}
	}
	if d, err := l.CheckCode(ctx, "192.0.2.1"); !d.Allowed() || err != nil {
		t.Errorf("CheckCode with no limits = %+v, %v", d, err)
	}
}

// TestJoinLimitsFailOpen: a limiter or meter that cannot be asked lets
// the learner through, with the error to log.
func TestJoinLimitsFailOpen(t *testing.T) {
	ctx := context.Background()
	m := newFakeMeter(0)
	m.err = errDown
	l := JoinLimits{Joins: &fakeLimiter{err: errDown}, Wrong: m, WrongPerMinute: 10}
	if d, err := l.Join(ctx, "a"); !d.Allowed() || err == nil {
		t.Errorf("Join with the limiter down = %+v, %v; want allowed and the error", d, err)
	}
	if d, err := l.CheckCode(ctx, "a"); !d.Allowed() || err == nil {
		t.Errorf("CheckCode with the meter down = %+v, %v; want allowed and the error", d, err)
	}
}
