package limit

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestWrite(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name             string
		learner          string
		learnerL, addrL  *fakeLimiter
		want             Decision
		wantErr          bool
		wantAskedLearner bool
	}{
		{"no limits", "a", nil, nil, Decision{}, false, false},
		{"both allow", "a", &fakeLimiter{}, &fakeLimiter{}, Decision{}, false, true},
		{"the learner is over", "a", &fakeLimiter{no: map[string]bool{"w:learner:a": true}}, &fakeLimiter{}, Decision{"writes", time.Second}, false, true},
		{"the address is over", "a", &fakeLimiter{}, &fakeLimiter{no: map[string]bool{"w:addr:192.0.2.1": true}}, Decision{"writes_per_address", time.Second}, false, true},
		{"a visitor is counted by address only", "", &fakeLimiter{no: map[string]bool{"w:learner:": true}}, &fakeLimiter{}, Decision{}, false, false},
		{"the learner limiter fails: open", "a", &fakeLimiter{err: errDown}, &fakeLimiter{}, Decision{}, true, true},
		{"both fail: open", "a", &fakeLimiter{err: errDown}, &fakeLimiter{err: errDown}, Decision{}, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var l Limits
			if tt.learnerL != nil {
				l.Writes = tt.learnerL
			}
			if tt.addrL != nil {
				l.WritesPerAddress = tt.addrL
			}
			d, err := l.Write(ctx, tt.learner, "192.0.2.1")
			if d != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("Write = %+v, %v; want %+v, error %v", d, err, tt.want, tt.wantErr)
			}
			if err != nil && !errors.Is(err, errDown) {
				t.Errorf("Write error = %v; want the limiter's", err)
			}
			if tt.learnerL != nil && (len(tt.learnerL.asked) > 0) != tt.wantAskedLearner {
				t.Errorf("learner limiter asked %v; want asked %v", tt.learnerL.asked, tt.wantAskedLearner)
			}
		})
	}
	if (Limits{}).LimitsWrites() || !(Limits{WritesPerAddress: &fakeLimiter{}}).LimitsWrites() {
		t.Error("LimitsWrites is wrong about no limit or an address limit")
	}
}

func TestRace(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name    string
		have    int
		need    int
		err     error
		want    Decision
		wantErr bool
	}{
		{"enough", 20, 20, nil, Decision{}, false},
		{"too little", 19, 20, nil, Decision{"races_per_address", time.Second}, false},
		{"need 0 means one", 0, 0, nil, Decision{"races_per_address", time.Second}, false},
		{"one is enough for need 0", 1, 0, nil, Decision{}, false},
		{"the meter fails: open", 0, 20, errDown, Decision{}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := newFakeMeter(0)
			m.have["r:addr:192.0.2.1"] = tt.have
			m.err = tt.err
			l := Limits{Races: m, RaceNeed: tt.need}
			d, err := l.Race(ctx, "192.0.2.1")
			if d != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("Race = %+v, %v; want %+v, error %v", d, err, tt.want, tt.wantErr)
			}
		})
	}
	if d, err := (Limits{}).Race(ctx, "x"); !d.Allowed() || err != nil {
		t.Errorf("Race with no meter = %+v, %v; want allowed", d, err)
	}
}

// TestChargeRace checks that a run is charged its cost, even when the
// client went away.
func TestChargeRace(t *testing.T) {
	m := newFakeMeter(100)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := (Limits{Races: m}).ChargeRace(ctx, "192.0.2.1", 12*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if got := m.taken["r:addr:192.0.2.1"]; got != 3 || m.takeEnded {
		t.Errorf("ChargeRace(12ms) took %d (context ended: %v); want 3 units, on a live context", got, m.takeEnded)
	}
	if err := (Limits{}).ChargeRace(ctx, "x", time.Second); err != nil {
		t.Errorf("ChargeRace with no meter = %v", err)
	}
}

func TestRaceCost(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want int
	}{{0, 1}, {time.Microsecond, 1}, {RaceUnit, 1}, {RaceUnit + 1, 2}, {100 * time.Millisecond, 20}} {
		if got := RaceCost(tt.d); got != tt.want {
			t.Errorf("RaceCost(%v) = %d; want %d", tt.d, got, tt.want)
		}
	}
}
