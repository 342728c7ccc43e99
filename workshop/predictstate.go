package workshop

// PredictState is what a back end finds, in the atomic step that would
// record a prediction, about the workshop, the participant and the poll.
type PredictState struct {
	Found     bool // the workshop exists
	Ended     bool // the workshop has ended
	Joined    bool // the participant has joined it
	PollFound bool // the poll exists
	Revealed  bool // the poll's run has been revealed
}

// MayPredict returns nil if a participant may predict in state s, else
// the error that says why not, the first of these that holds: no
// workshop (ErrNotFound), ended (ErrEnded), not joined (ErrNotJoined), no
// such poll (ErrNoPoll), revealed (ErrRevealed).
func (s PredictState) MayPredict() error {
	switch {
	case !s.Found:
		return ErrNotFound
	case s.Ended:
		return ErrEnded
	case !s.Joined:
		return ErrNotJoined
	case !s.PollFound:
		return ErrNoPoll
	case s.Revealed:
		return ErrRevealed
	}
	return nil
}

// Bits numbers s as a back end can compute it in a script: Found is 1,
// Ended 2, Joined 4, PollFound 8 and Revealed 16.
func (s PredictState) Bits() int {
	n := 0
	for i, b := range []bool{s.Found, s.Ended, s.Joined, s.PollFound, s.Revealed} {
		if b {
			n |= 1 << i
		}
	}
	return n
}

// PredictStateOf is the state whose Bits are n.
func PredictStateOf(n int) PredictState {
	return PredictState{Found: n&1 != 0, Ended: n&2 != 0, Joined: n&4 != 0, PollFound: n&8 != 0, Revealed: n&16 != 0}
}

// PredictStates is the number of distinct PredictStates, the bound of
// Bits.
const PredictStates = 1 << 5
