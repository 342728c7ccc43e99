package workshop

import (
	"errors"
	"testing"
)

func TestMayPredict(t *testing.T) {
	for _, tt := range []struct {
		name  string
		state PredictState
		want  error
	}{
		{"open poll", PredictState{Found: true, Joined: true, PollFound: true}, nil},
		{"no workshop", PredictState{}, ErrNotFound},
		{"no workshop wins over the rest", PredictState{Ended: true, Revealed: true}, ErrNotFound},
		{"ended", PredictState{Found: true, Ended: true, Joined: true, PollFound: true}, ErrEnded},
		{"ended before not joined", PredictState{Found: true, Ended: true}, ErrEnded},
		{"not joined", PredictState{Found: true, PollFound: true}, ErrNotJoined},
		{"not joined before no poll", PredictState{Found: true}, ErrNotJoined},
		{"no poll", PredictState{Found: true, Joined: true}, ErrNoPoll},
		{"revealed", PredictState{Found: true, Joined: true, PollFound: true, Revealed: true}, ErrRevealed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.state.MayPredict(); !errors.Is(got, tt.want) || (got == nil) != (tt.want == nil) {
				t.Errorf("%+v.MayPredict() = %v; want %v", tt.state, got, tt.want)
			}
		})
	}
}

func TestPredictStateBits(t *testing.T) {
	allowed := 0
	for n := range PredictStates {
		s := PredictStateOf(n)
		if got := s.Bits(); got != n {
			t.Errorf("PredictStateOf(%d).Bits() = %d", n, got)
		}
		if s.MayPredict() == nil {
			allowed++
		}
	}
	if allowed != 1 {
		t.Errorf("%d states allow a prediction; want exactly one", allowed)
	}
}
