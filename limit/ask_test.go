package limit

import (
	"context"
	"errors"
	"testing"
	"time"
)

// recordingAsker answers every batch with answer and keeps the batches.
type recordingAsker struct {
	answer  Answer
	err     error
	batches [][]Ask
}

func (a *recordingAsker) Ask(_ context.Context, asks []Ask) (Answer, error) {
	a.batches = append(a.batches, append([]Ask(nil), asks...))
	return a.answer, a.err
}

// TestAskerBatches checks that a request's limits go to the Asker as one
// batch each (the write limits; a script line's limits and budget; its
// charge), in the order whose first refusal names the limit, and that a
// refusal's wait comes from the refusing limit.
func TestAskerBatches(t *testing.T) {
	ctx := context.Background()
	const learner, addr = "alice", "192.0.2.1"
	lim := func() Limiter { return &fakeLimiter{} }
	l := Limits{
		Writes: lim(), WritesPerAddress: lim(), Scripts: lim(), ScriptsPerAddress: lim(),
		ScriptTime: ScriptBudget{
			Learner: newFakeMeter(20), Address: newFakeMeter(100), Need: 10, LearnerRefill: 10, AddressRefill: 50,
			Stopped: newFakeMeter(3), StoppedPerAddress: newFakeMeter(15),
			StoppedEvery: 30 * time.Second, StoppedEveryPerAddress: 6 * time.Second,
		},
	}
	keys := func(b []Ask) []string {
		var ks []string
		for _, a := range b {
			ks = append(ks, a.Key)
		}
		return ks
	}
	same := func(got, want []string) bool {
		if len(got) != len(want) {
			return false
		}
		for i := range got {
			if got[i] != want[i] {
				return false
			}
		}
		return true
	}

	a := &recordingAsker{answer: Answer{Refused: -1}}
	l.Asker = a
	if d, err := l.Write(ctx, learner, addr); err != nil || !d.Allowed() {
		t.Fatalf("Write = %+v, %v; want allowed", d, err)
	}
	var run Running
	charge, d, err := l.Script(ctx, &run, learner, addr, Line{RunsScript: true, RunsLong: true})
	if err != nil || !d.Allowed() {
		t.Fatalf("Script = %+v, %v; want allowed", d, err)
	}
	if err := charge(95*time.Millisecond, true); err != nil {
		t.Fatal(err)
	}
	if len(a.batches) != 3 {
		t.Fatalf("%d batches; want 3 (write limits, script limits, charge)", len(a.batches))
	}
	for i, want := range [][]string{
		{"w:learner:" + learner, "w:addr:" + addr},
		{"s:learner:" + learner, "s:addr:" + addr, "st:learner:" + learner, "st:addr:" + addr, "t:learner:" + learner, "t:addr:" + addr},
		{"st:learner:" + learner, "st:addr:" + addr, "t:learner:" + learner, "t:addr:" + addr},
	} {
		if got := keys(a.batches[i]); !same(got, want) {
			t.Errorf("batch %d asks %v; want %v", i+1, got, want)
		}
	}
	if b := a.batches[1]; b[4].Need != 10 || b[4].Take != 0 || b[2].Need != 1 {
		t.Errorf("script budget asks = %+v; want the learner's time to need 10 and take nothing, a stop to need 1", b)
	}
	if b := a.batches[2]; b[0].Take != 1 || b[2].Take != 10 || b[3].Take != 10 {
		t.Errorf("charge asks = %+v; want a stop and 10 units (95 ms, rounded up) taken", b)
	}
	for _, f := range []*fakeMeter{l.ScriptTime.Learner.(*fakeMeter), l.ScriptTime.Stopped.(*fakeMeter)} {
		if len(f.taken) != 0 {
			t.Errorf("a meter was called directly (%v) beside the Asker", f.taken)
		}
	}

	for _, tt := range []struct {
		answer Answer
		want   Decision
	}{
		{Answer{Refused: 1}, Decision{"scripts_per_address", time.Second}},
		{Answer{Refused: 2}, Decision{"scripts_stopped", 30 * time.Second}},
		{Answer{Refused: 4, Have: 7}, Decision{"script_time", 300 * time.Millisecond}},
		{Answer{Refused: 5, Have: 0}, Decision{"script_time_per_address", 200 * time.Millisecond}},
	} {
		l.Asker = &recordingAsker{answer: tt.answer}
		_, d, _ := l.Script(ctx, &run, learner, addr, Line{RunsScript: true, RunsLong: true})
		if d != tt.want {
			t.Errorf("answer %+v: %+v; want %+v", tt.answer, d, tt.want)
		}
		if !run.Enter(learner, addr) {
			t.Errorf("answer %+v: a refused line still holds the learner's running slot", tt.answer)
		}
		run.Leave(learner, addr)
	}

	l.Asker = &recordingAsker{answer: Answer{Refused: -1}, err: errDown}
	if d, err := l.Write(ctx, learner, addr); !d.Allowed() || !errors.Is(err, errDown) {
		t.Errorf("Write with the Asker down = %+v, %v; want allowed, with the error", d, err)
	}
}
