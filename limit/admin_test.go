package limit

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestAdminCheck(t *testing.T) {
	const addr = "192.0.2.1"
	for _, tt := range []struct {
		name        string
		addrHave    int
		allHave     int
		addrErr     error
		want        Decision
		wantUnknown bool
	}{
		{name: "both hold guesses", addrHave: 1, allHave: 1},
		{name: "the address has none", addrHave: 0, allHave: 5, want: Decision{"admin_signin_per_address", 12 * time.Second}},
		{name: "everyone has none", addrHave: 5, allHave: 0, want: Decision{"admin_signin", 2 * time.Second}}, // 60/50 s, rounded up
		// An address that never failed is not locked out by the others.
		{name: "everyone has none, this address never failed", addrHave: 10, allHave: 0},
		{name: "the meter fails: closed", addrErr: errDown, wantUnknown: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pa, all := newFakeMeter(0), newFakeMeter(0)
			pa.have["admin:addr:"+addr], all.have["admin:all"] = tt.addrHave, tt.allHave
			pa.err = tt.addrErr
			a := AdminLimits{PerAddress: pa, Overall: all, AddressPerMinute: 5, OverallPerMinute: 50, AddressBurst: 10}
			d, err := a.Check(context.Background(), addr)
			if d != tt.want || errors.Is(err, ErrGuessesUnknown) != tt.wantUnknown || (err != nil) != tt.wantUnknown {
				t.Errorf("Check = %+v, %v; want %+v, unknown %v", d, err, tt.want, tt.wantUnknown)
			}
		})
	}
	if d, err := (AdminLimits{}).Check(context.Background(), addr); !d.Allowed() || err != nil {
		t.Errorf("Check with no limits = %+v, %v; want allowed", d, err)
	}
}

// TestAdminFailed checks that a wrong token counts against the address
// and everyone, even when the client went away at once.
func TestAdminFailed(t *testing.T) {
	pa, all := newFakeMeter(10), newFakeMeter(50)
	a := AdminLimits{PerAddress: pa, Overall: all}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := a.Failed(ctx, "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	if pa.taken["admin:addr:192.0.2.1"] != 1 || all.taken["admin:all"] != 1 || pa.takeEnded || all.takeEnded {
		t.Errorf("Failed took %v and %v (ended %v %v); want one from each, on a live context", pa.taken, all.taken, pa.takeEnded, all.takeEnded)
	}
	pa.err = errDown
	if err := a.Failed(context.Background(), "192.0.2.1"); !errors.Is(err, errDown) || all.taken["admin:all"] != 2 {
		t.Errorf("Failed with the address meter down = %v, overall took %d; want the error, and 2", err, all.taken["admin:all"])
	}
}

// TestNewAdminLimits checks the guesses allowed with the memory meters: a
// burst of ten from an address, then five a minute.
func TestNewAdminLimits(t *testing.T) {
	ctx := context.Background()
	clk := newFakeClock()
	a := NewAdminLimits(Memory{Now: clk.Now})
	refused := 0
	for range AdminFailuresAddressBurst + 1 {
		d, err := a.Check(ctx, "192.0.2.1")
		if err != nil {
			t.Fatal(err)
		}
		if !d.Allowed() {
			refused++
			continue
		}
		a.Failed(ctx, "192.0.2.1")
	}
	if refused != 1 {
		t.Errorf("%d of %d wrong guesses refused; want only the last", refused, AdminFailuresAddressBurst+1)
	}
	clk.Advance(time.Minute / AdminFailuresPerAddress)
	if d, _ := a.Check(ctx, "192.0.2.1"); !d.Allowed() {
		t.Errorf("a guess a fifth of a minute later = %+v; want allowed", d)
	}
}
