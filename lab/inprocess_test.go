package lab

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"sync"
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

// TestTurnsAreFair: when a schedule ends, the turn goes to the waiting
// check that has run least, whenever it asked.
func TestTurnsAreFair(t *testing.T) {
	var turns Turns
	turns.take(0) // a long check's schedule runs
	var order []string
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, c := range []struct {
		name string
		used time.Duration
	}{{"long two", 5 * time.Second}, {"long three", 3 * time.Second}, {"short", 10 * time.Millisecond}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			turns.take(c.used)
			mu.Lock()
			order = append(order, c.name)
			mu.Unlock()
			turns.give()
		}()
		for {
			turns.mu.Lock()
			n := len(turns.waiting)
			turns.mu.Unlock()
			if n == i+1 { // it waits for its turn
				break
			}
			runtime.Gosched()
		}
	}
	turns.give()
	wg.Wait()
	if want := []string{"short", "long three", "long two"}; len(order) != 3 || order[0] != want[0] || order[1] != want[1] || order[2] != want[2] {
		t.Errorf("turns went to %v; want %v, least run first", order, want)
	}
	// A check's schedules run in its turns: Check with Turns gives
	// Check's report.
	a, err := Check(context.Background(), Request{Recipe: Textbook()}, Budget{Random: 2, Turns: &turns})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Check(context.Background(), Request{Recipe: Textbook()}, Budget{Random: 2})
	if a.Summary != b.Summary || len(a.Properties) != len(b.Properties) {
		t.Errorf("a check in turns = %q; without = %q", a.Summary, b.Summary)
	}
}

// TestTurnsYield: between its schedules, the check holding the turn
// hands it to a waiting check that has run less, and keeps it from one
// that has run more.
func TestTurnsYield(t *testing.T) {
	var turns Turns
	turns.take(0)
	turns.yield(time.Second) // nobody waits: it keeps the turn
	ran := make(chan string, 2)
	for i, c := range []struct {
		name string
		used time.Duration
	}{{"longer", 2 * time.Second}, {"shorter", time.Millisecond}} {
		go func() {
			turns.take(c.used)
			ran <- c.name
			turns.give()
		}()
		for {
			turns.mu.Lock()
			n := len(turns.waiting)
			turns.mu.Unlock()
			if n == i+1 {
				break
			}
			runtime.Gosched()
		}
	}
	turns.yield(time.Second) // the shorter runs, then the holder again
	if got := <-ran; got != "shorter" {
		t.Errorf("yield handed the turn to %s; want the one that has run less", got)
	}
	select {
	case got := <-ran:
		t.Errorf("%s ran before the holder, though it has run more", got)
	default:
	}
	turns.give()
	if got := <-ran; got != "longer" {
		t.Errorf("after the holder, %s ran; want longer", got)
	}
}
