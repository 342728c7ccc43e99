package lab

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// TestInProcessGivesCheck: InProcess answers what Check does, errors
// included.
func TestInProcessGivesCheck(t *testing.T) {
	p := NewInProcess(2)
	req := Request{Recipe: Textbook(), Seed: 5}
	b := Budget{Random: 8}
	got, err := p.CheckLab(context.Background(), req, b)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Check(context.Background(), req, b)
	if err != nil {
		t.Fatal(err)
	}
	got.CPUMS, want.CPUMS = 0, 0
	jg, _ := json.Marshal(got)
	jw, _ := json.Marshal(want)
	if string(jg) != string(jw) {
		t.Errorf("InProcess.CheckLab = %s\nwant Check's %s", jg, jw)
	}
	if _, err := p.CheckLab(context.Background(), Request{Recipe: Textbook(), Challenge: "nope"}, b); !errors.Is(err, ErrUnknownChallenge) {
		t.Errorf("CheckLab(unknown challenge) = %v; want ErrUnknownChallenge", err)
	}
}

// TestInProcessBound: a check waits while n others run, and gives up
// with its context.
func TestInProcessBound(t *testing.T) {
	p := NewInProcess(1)
	p.running <- struct{}{} // another check is running
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, b := Request{Recipe: Textbook()}, Budget{Random: 1}
	if _, err := p.CheckLab(ctx, req, b); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("CheckLab while the only turn is taken = %v; want it to wait until its deadline", err)
	}
	<-p.running
	if _, err := p.CheckLab(context.Background(), req, b); err != nil {
		t.Errorf("CheckLab once the turn is free = %v", err)
	}
}
