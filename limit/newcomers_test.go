package limit

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// TestNewcomers: an address has perDay newcomers at once, then one each
// day/perDay, however long it waits between them (the idle sweep of the
// in-process meters does not hand it a fresh day early); other addresses
// have their own; no limit when it is off.
func TestNewcomers(t *testing.T) {
	ctx := context.Background()
	clk := newFakeClock()
	n := NewNewcomers(Memory{Now: clk.Now}, Rates{Writes: 20}, 3)
	admit := func(addr string) Decision {
		t.Helper()
		d, err := n.Admit(ctx, addr)
		if err != nil {
			t.Fatalf("Admit(%s): %v", addr, err)
		}
		return d
	}
	for i := range 3 {
		if d := admit("198.51.100.7"); !d.Allowed() {
			t.Fatalf("newcomer %d of 3 refused: %+v", i+1, d)
		}
	}
	d := admit("198.51.100.7")
	if d.Allowed() || d.Limit != "newcomers_per_address" || d.Wait != 8*time.Hour {
		t.Errorf("the fourth newcomer = %+v; want refused by newcomers_per_address for 8h", d)
	}
	if d := admit("203.0.113.9"); !d.Allowed() {
		t.Errorf("another address's first newcomer = %+v; want allowed", d)
	}
	// Idle for longer than the in-process meters keep an unused key,
	// while others come and go and the meters sweep.
	clk.Advance(10 * time.Minute)
	for i := range sweepEvery {
		admit("192.0.2." + strconv.Itoa(i%250))
	}
	if d := admit("198.51.100.7"); d.Allowed() {
		t.Error("a newcomer 10 minutes later, after a sweep, was allowed; want the day's allowance still spent")
	}
	clk.Advance(8 * time.Hour)
	if d := admit("198.51.100.7"); !d.Allowed() {
		t.Errorf("a newcomer 8 hours later = %+v; want allowed", d)
	}
	if d := admit("198.51.100.7"); d.Allowed() {
		t.Error("a second newcomer 8 hours later was allowed; want one a third of a day")
	}

	for _, off := range []Newcomers{
		NewNewcomers(Memory{Now: clk.Now}, Rates{Writes: 20}, 0),
		NewNewcomers(Memory{Now: clk.Now}, Rates{Writes: 0}, 3),
	} {
		for range 10 {
			if d, err := off.Admit(ctx, "198.51.100.7"); !d.Allowed() || err != nil {
				t.Fatalf("Admit with the limit off = %+v, %v; want allowed", d, err)
			}
		}
	}
}

// TestNewcomersFailOpen: a meter that cannot be asked lets the newcomer
// in and returns the error to log.
func TestNewcomersFailOpen(t *testing.T) {
	m := newFakeMeter(3)
	m.err = errDown
	n := Newcomers{meter: m, perDay: 3}
	if d, err := n.Admit(context.Background(), "198.51.100.7"); !d.Allowed() || err == nil {
		t.Errorf("Admit with the meter down = %+v, %v; want allowed, with the error", d, err)
	}
}
