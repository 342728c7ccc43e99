package limit

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// TestMemoryLimiter checks the burst, the refill and that keys are
// separate, on a fake clock.
func TestMemoryLimiter(t *testing.T) {
	ctx := context.Background()
	clk := newFakeClock()
	l := Memory{Now: clk.Now}.Limiter(5, 10)
	count := func(key string, n int) int {
		t.Helper()
		allowed := 0
		for range n {
			ok, err := l.Allow(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				allowed++
			}
		}
		return allowed
	}
	if got := count("k", 40); got != 10 {
		t.Errorf("Allow 40 times at once let %d through; want the burst, 10", got)
	}
	if got := count("other", 1); got != 1 {
		t.Errorf("another key let %d of 1 through; want 1", got)
	}
	clk.Advance(time.Second)
	if got := count("k", 40); got != 5 {
		t.Errorf("a second later %d went through; want the rate, 5", got)
	}
	clk.Advance(time.Hour)
	if got := count("k", 40); got != 10 {
		t.Errorf("an hour later %d went through; want the burst, 10", got)
	}
}

// TestMemoryMeter checks Available and Take: a key starts with its
// burst, Take removes what was used (all that is left when more was
// used), keys are separate and units come back at the rate.
func TestMemoryMeter(t *testing.T) {
	ctx := context.Background()
	clk := newFakeClock()
	m := Memory{Now: clk.Now}.Meter(10, 100)
	avail := func(key string) int {
		t.Helper()
		n, err := m.Available(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, tt := range []struct {
		name    string
		take    int
		advance time.Duration
		want    int
	}{
		{"a new key", 0, 0, 100},
		{"after taking 30", 30, 0, 70},
		{"taking nothing", 0, 0, 70},
		{"taking less than nothing", -5, 0, 70},
		{"a second later", 0, time.Second, 80},
		{"after taking more than there is", 500, 0, 0},
		{"half a second later", 0, 500 * time.Millisecond, 5},
		{"an hour later, never above the burst", 0, time.Hour, 100},
	} {
		if err := m.Take(ctx, "k", tt.take); err != nil {
			t.Errorf("%s: Take(%d) = %v; want it to take what there is", tt.name, tt.take, err)
		}
		clk.Advance(tt.advance)
		if got := avail("k"); got != tt.want {
			t.Errorf("%s: Available = %d; want %d", tt.name, got, tt.want)
		}
	}
	if got := avail("other"); got != 100 {
		t.Errorf("Available(another key) = %d; want 100", got)
	}
}

// TestMemoryMeterPer checks a meter refilled per hour: 5 an hour means
// one every 12 minutes, none within a second.
func TestMemoryMeterPer(t *testing.T) {
	ctx := context.Background()
	clk := newFakeClock()
	m := Memory{Now: clk.Now}.MeterPer(5, time.Hour, 5)
	if err := m.Take(ctx, "ip:x", 5); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		advance time.Duration
		want    int
	}{{time.Second, 0}, {11 * time.Minute, 0}, {time.Minute, 1}, {48 * time.Minute, 5}} {
		clk.Advance(tt.advance)
		if got, _ := m.Available(ctx, "ip:x"); got != tt.want {
			t.Errorf("Available %v later = %d; want %d", tt.advance, got, tt.want)
		}
	}
}

// TestMemoryForgetsIdleKeys checks that buckets unused for idleBucket go,
// so the map stays small however many keys pass through, and that a key
// in use stays.
func TestMemoryForgetsIdleKeys(t *testing.T) {
	ctx := context.Background()
	clk := newFakeClock()
	l := Memory{Now: clk.Now}.Limiter(1, 1).(*memoryLimiter)
	for i := range sweepEvery - 1 {
		l.Allow(ctx, "k"+strconv.Itoa(i))
	}
	clk.Advance(idleBucket + time.Second)
	l.Allow(ctx, "busy") // the sweepEvery-th call sweeps
	if n := len(l.bs.byKey); n != 1 {
		t.Errorf("%d buckets after the idle ones were swept; want 1", n)
	}
}
