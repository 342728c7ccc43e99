package sim

// Storage is the service the lock protects. With fencing it rejects a
// write whose token is lower than the highest it has seen; a token equal
// to it comes from the same grant and is accepted.
type Storage struct {
	Fencing bool
	highest int64
}

// Write reports whether the storage accepts a write carrying fence (0:
// the client has no fencing token), and records the token if it does.
func (s *Storage) Write(fence int64) bool {
	if s.Fencing && fence < s.highest {
		return false
	}
	s.highest = max(s.highest, fence)
	return true
}

// Highest is the highest fencing token the storage has accepted.
func (s *Storage) Highest() int64 { return s.highest }
