package limit

import (
	"context"
	"testing"
	"time"
)

func TestCarryLimits(t *testing.T) {
	ctx := context.Background()
	const learner, addr = "alice", "192.0.2.1"
	for _, tt := range []struct {
		name      string
		issueHave int
		addrHave  int
		guessHave int
		meterErr  bool
		wantIssue Decision
		wantGuess Decision
		wantErr   bool
	}{
		{name: "room for both", issueHave: 60, addrHave: 60, guessHave: 60},
		{name: "the learner's codes are used up", issueHave: 30, addrHave: 60, guessHave: 60, wantIssue: Decision{"carry_codes", 30 * time.Second}},
		{name: "the address's codes are used up", issueHave: 60, addrHave: 0, guessHave: 60, wantIssue: Decision{"carry_codes", 60 * time.Second}},
		{name: "too many wrong codes", issueHave: 60, addrHave: 60, guessHave: 59, wantGuess: Decision{"carry_guesses", time.Second}},
		{name: "the meters fail: open", meterErr: true, wantErr: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			im, am, gm := newFakeMeter(0), newFakeMeter(0), newFakeMeter(0)
			im.have["c:learner:"+learner], am.have["c:addr:"+addr], gm.have["g:addr:"+addr] = tt.issueHave, tt.addrHave, tt.guessHave
			if tt.meterErr {
				im.err, am.err, gm.err = errDown, errDown, errDown
			}
			c := CarryLimits{
				Issue:           CarryLimit{Meter: im, Cost: 60, Refill: 1},
				IssuePerAddress: CarryLimit{Meter: am, Cost: 60, Refill: 0}, // 0 refills as 1
				Guesses:         CarryLimit{Meter: gm, Cost: 60, Refill: 1},
			}
			d, err := c.CheckIssue(ctx, learner, addr)
			if d != tt.wantIssue || (err != nil) != tt.wantErr {
				t.Errorf("CheckIssue = %+v, %v; want %+v, error %v", d, err, tt.wantIssue, tt.wantErr)
			}
			d, err = c.CheckGuess(ctx, addr)
			if d != tt.wantGuess || (err != nil) != tt.wantErr {
				t.Errorf("CheckGuess = %+v, %v; want %+v, error %v", d, err, tt.wantGuess, tt.wantErr)
			}
		})
	}
}

// TestCarryCharges checks what a new code and a wrong one cost, charged
// even when the client went away.
func TestCarryCharges(t *testing.T) {
	im, am, gm := newFakeMeter(600), newFakeMeter(600), newFakeMeter(600)
	c := CarryLimits{
		Issue:           CarryLimit{Meter: im, Cost: 60, Refill: 1},
		IssuePerAddress: CarryLimit{Meter: am, Cost: 6, Refill: 1},
		Guesses:         CarryLimit{Meter: gm, Cost: 60, Refill: 1},
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Issued(ctx, "alice", "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	if err := c.WrongGuess(ctx, "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	if im.taken["c:learner:alice"] != 60 || am.taken["c:addr:192.0.2.1"] != 6 || gm.taken["g:addr:192.0.2.1"] != 60 {
		t.Errorf("took %v, %v, %v; want 60 from the learner, 6 from the address, 60 from the guesses", im.taken, am.taken, gm.taken)
	}
	if im.takeEnded || am.takeEnded || gm.takeEnded {
		t.Error("a charge was made on the ended context")
	}
	if err := (CarryLimits{}).Issued(ctx, "alice", "x"); err != nil {
		t.Errorf("Issued with no limits = %v", err)
	}
}
