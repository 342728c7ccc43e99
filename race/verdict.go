package race

import (
	"fmt"
	"slices"
)

// checkTwoHolders records two holders when c has just been granted the
// lock while another client still believes it holds it (paused, or working
// past its TTL).
func (s *sim) checkTwoHolders(c *client) {
	for _, o := range s.clients {
		if o != c && o.holding {
			s.outcome(OutcomeTwoHolders, fmt.Sprintf("%s got the lock while %s still believed it held it.", capital(c.name), o.name))
			return
		}
	}
}

// outcomes returns what the run found, most serious first, or safe at the
// last event; the verdict is the first.
func (s *sim) outcomes() []Found {
	if len(s.found) == 0 {
		i := len(s.events) - 1
		text := "One client at a time believed it held the lock, and no late write reached the storage."
		if s.safeText != "" {
			text = s.safeText
		}
		return []Found{{Outcome: OutcomeSafe, Event: i, AtMS: s.events[i].AtMS, Text: text}}
	}
	out := slices.Clone(s.found)
	slices.SortStableFunc(out, func(a, b Found) int { return a.Outcome.rank() - b.Outcome.rank() })
	return out
}
