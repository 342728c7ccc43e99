package race

import "fmt"

// verdict judges the run: the worst thing that happened, and a sentence
// about it.
func (s *sim) verdict() (Verdict, string) {
	if d := s.deleted; d[0] != "" {
		return VerdictForeignLockDeleted, fmt.Sprintf("%s deleted %s's lock with a plain DEL, so nothing kept the next client out while %s still worked.", capital(d[0]), d[1], d[1])
	}
	if a, b, ok := s.overlap(); ok {
		return VerdictTwoHolders, fmt.Sprintf("%s and %s both worked under the lock at the same time.", capital(a), b)
	}
	if w := s.staleAccepted; w[0] != "" {
		return VerdictStaleWriteAccepted, fmt.Sprintf("The storage accepted a write from %s after the lock had passed to %s.", w[0], w[1])
	}
	if w := s.staleRejected; w[0] != "" {
		return VerdictStaleWriteRejected, fmt.Sprintf("%s wrote after the lock had passed to %s, but its fencing token was too low and the storage rejected it.", capital(w[0]), w[1])
	}
	return VerdictSafe, "One client at a time held the lock, and no late write reached the storage."
}

// overlap reports two clients that were active under the lock (holding it
// in their own view, and not paused) during a common span of time.
func (s *sim) overlap() (string, string, bool) {
	for i, a := range s.clients {
		for _, b := range s.clients[i+1:] {
			for _, x := range a.spans {
				for _, y := range b.spans {
					if max(x[0], y[0]) < min(x[1], y[1]) {
						return a.name, b.name, true
					}
				}
			}
		}
	}
	return "", "", false
}
