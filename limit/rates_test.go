package limit

import (
	"reflect"
	"testing"
	"time"
)

// countingMaker records what New asked it for.
type countingMaker struct{ limiters, meters [][2]int }

func (m *countingMaker) Limiter(perSecond, burst int) Limiter {
	m.limiters = append(m.limiters, [2]int{perSecond, burst})
	return &fakeLimiter{}
}

func (m *countingMaker) Meter(perSecond, burst int) Meter {
	m.meters = append(m.meters, [2]int{perSecond, burst})
	return newFakeMeter(burst)
}

func (m *countingMaker) MeterPer(n int, per time.Duration, burst int) Meter {
	return m.Meter(int(float64(n)/per.Seconds()), burst)
}

func TestNew(t *testing.T) {
	defaults := Rates{Writes: 20, WritesPerAddress: 200, Scripts: 2, Races: 20, ScriptTimeout: time.Second}
	for _, tt := range []struct {
		name         string
		rates        Rates
		wantLimiters [][2]int
		wantMeters   [][2]int
		check        func(t *testing.T, l Limits)
	}{
		{
			name:  "writes 0 turns everything off",
			rates: Rates{Writes: 0, WritesPerAddress: 200, Scripts: 2, Races: 20, ScriptTimeout: time.Second},
			check: func(t *testing.T, l Limits) {
				if !reflect.DeepEqual(l, Limits{}) {
					t.Errorf("New = %+v; want no limits", l)
				}
			},
		},
		{
			name:         "the defaults: bursts of twice the rate, ten times the scripts per address",
			rates:        defaults,
			wantLimiters: [][2]int{{20, 40}, {200, 400}, {2, 4}, {20, 40}},
			// Stopped lines: 3 and then one every 30 s per learner, 15 and
			// one every 6 s per address (a rate under one a second
			// counts as 0 here).
			wantMeters: [][2]int{{20, 40}, {10, 200}, {50, 500}, {0, 3}, {0, 15}},
			check: func(t *testing.T, l Limits) {
				if l.RaceNeed != 20 || l.ScriptTime.Need != 100 || l.ScriptTime.LearnerRefill != 10 || l.ScriptTime.AddressRefill != 50 {
					t.Errorf("New = %+v; want races needing 20 units, scripts 100 refilled 10 and 50 a second", l)
				}
				if b := l.ScriptTime; b.StoppedEvery != 30*time.Second || b.StoppedEveryPerAddress != 6*time.Second || b.Stopped == nil || b.StoppedPerAddress == nil {
					t.Errorf("New = %+v; want stopped lines metered, one back every 30 s per learner and 6 s per address", b)
				}
			},
		},
		{
			name:         "a rate of 0 is no limit of that kind",
			rates:        Rates{Writes: 20, ScriptTimeout: 200 * time.Millisecond},
			wantLimiters: [][2]int{{20, 40}},
			wantMeters:   [][2]int{{10, 40}, {50, 100}, {0, 3}, {0, 15}},
			check: func(t *testing.T, l Limits) {
				if l.WritesPerAddress != nil || l.Scripts != nil || l.ScriptsPerAddress != nil || l.Races != nil || l.ScriptTime.Learner == nil {
					t.Errorf("New = %+v; want only the learner's writes and the script budget", l)
				}
			},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := &countingMaker{}
			l := New(m, tt.rates)
			if !reflect.DeepEqual(m.limiters, tt.wantLimiters) || !reflect.DeepEqual(m.meters, tt.wantMeters) {
				t.Errorf("New made limiters %v and meters %v; want %v and %v", m.limiters, m.meters, tt.wantLimiters, tt.wantMeters)
			}
			tt.check(t, l)
		})
	}
}

func TestNewCarryLimits(t *testing.T) {
	m := &countingMaker{}
	if c := NewCarryLimits(m, Rates{}); !reflect.DeepEqual(c, CarryLimits{}) {
		t.Errorf("NewCarryLimits(writes 0) = %+v; want none", c)
	}
	c := NewCarryLimits(m, Rates{Writes: 20})
	if c.Issue.Cost != 60 || c.IssuePerAddress.Cost != 6 || c.Guesses.Cost != 60 {
		t.Errorf("costs %d, %d, %d; want a minute's units: 60, 6 (ten a minute), 60", c.Issue.Cost, c.IssuePerAddress.Cost, c.Guesses.Cost)
	}
	if want := [][2]int{{1, 300}, {1, 600}, {1, 600}}; !reflect.DeepEqual(m.meters, want) {
		t.Errorf("meters %v; want %v (bursts of 5, 100 and 10 events)", m.meters, want)
	}
}
