package race

// storage is the service the lock protects. With fencing it rejects a write
// whose token is lower than the highest it has seen; a token equal to it
// comes from the same grant and is accepted.
type storage struct {
	fencing bool
	highest int64
}

// write reports whether the storage accepts a write carrying fence (0: the
// client has no fencing token).
func (s *storage) write(fence int64) bool {
	if s.fencing && fence < s.highest {
		return false
	}
	s.highest = max(s.highest, fence)
	return true
}
