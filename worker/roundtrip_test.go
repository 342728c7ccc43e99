package worker

import (
	"slices"
	"testing"
	"time"

	"github.com/locklab/locklab/playground"
)

// TestOneRoundTripPerAdvance: a clock advance costs its worker one round
// trip, which brings back the clock and the keys that expired; the key
// inspector's rows and the clock come from what the supervisor keeps of
// the sandbox, at no round trip at all.
func TestOneRoundTripPerAdvance(t *testing.T) {
	clock := newFakeClock()
	s := newTestSupervisor(t, Options{Workers: 1, Playground: playground.Options{Now: clock.Now}})
	runSteps(t, s, []step{
		{"ada", playground.ClientA, "SET lock:invoice:7 3f9a1c NX PX 30000", "OK"},
		{"ada", playground.ClientA, "SET counter 1", "OK"},
		{"ada", playground.ClientA, "HSET h f v", "(integer) 1"},
	})
	trips := func() uint64 {
		sl := s.slots[0]
		sl.mu.Lock()
		defer sl.mu.Unlock()
		return sl.proc.nextID.Load()
	}
	before := trips()
	a, err := s.Advance("ada", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := s.Keys("ada")
	if err != nil {
		t.Fatal(err)
	}
	now, err := s.Clock("ada")
	if err != nil {
		t.Fatal(err)
	}
	if got := trips() - before; got != 1 {
		t.Errorf("an advance, then the key listing and the clock, cost %d round trips to the worker; want 1", got)
	}
	if !slices.Equal(a.Expired, []string{"lock:invoice:7"}) || !a.Now.Equal(now) || !now.Equal(clock.Now().Add(30*time.Second)) {
		t.Errorf("Advance(30s) = %v at %v; want lock:invoice:7 expired and the clock 30 s ahead", a, now)
	}
	want := []playground.KeyInfo{
		{Key: "counter", Type: "string", Value: `"1"`, PTTLMS: -1, Node: 1},
		{Key: "h", Type: "hash", Value: `{"f": "v"}`, PTTLMS: -1, Node: 1},
	}
	if !slices.Equal(keys, want) {
		t.Errorf("Keys after the advance = %v; want %v", keys, want)
	}
}
