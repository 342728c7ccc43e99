package lock

// Storage is the resource a lock protects, as Kleppmann's fencing argument
// needs it: with Fencing set it remembers the highest fencing token it has
// accepted (Lock.Fence) and rejects a write that carries a lower one, so a
// client whose lock expired while it was paused cannot overwrite the work
// of the client that holds the lock now. A token equal to the highest
// comes from the same grant and is accepted. The zero value accepts every
// write.
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

// NewFencedStorage returns a fencing storage that has already accepted
// the token highest, as one restored from a saved copy.
func NewFencedStorage(highest int64) Storage { return Storage{Fencing: true, highest: highest} }
