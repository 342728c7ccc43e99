package race

import (
	"fmt"
	"slices"

	"github.com/locklab/locklab/sim"
)

// checkTwoHolders records two holders when c has just been granted the
// lock while another client still believes it holds it (paused, or working
// past its TTL).
func (s *runner) checkTwoHolders(c *client) {
	for _, o := range s.clients {
		if o != c && o.holding {
			s.outcome(OutcomeTwoHolders, fmt.Sprintf("%s got the lock while %s still believed it held it.", sim.Capital(c.name), o.name))
			return
		}
	}
}

// judgeEnd records what only the end of a run shows, at its last event: a
// holder that can no longer use its lock (its work hangs) and still has
// it, so that nobody else could get it for as long as the run was
// watched; and each client that asked for the lock and never got it.
func (s *runner) judgeEnd() {
	if len(s.events) == 0 {
		return
	}
	end := s.events[len(s.events)-1].AtMS
	for _, c := range s.clients {
		if !c.stuck || !slices.Contains(s.holders(), c.name) {
			continue
		}
		text := fmt.Sprintf("%s's work hung at %s, yet at %s, when the run ends, its lock is still taken", sim.Capital(c.name), Seconds(c.progressAt), Seconds(msDur(end)))
		if n := c.renewals - c.stuckRenew; n > 0 {
			text += fmt.Sprintf(": its watchdog renewed it %s since, for work that no longer runs", times(n))
		}
		s.outcome(OutcomeLockNeverFreed, text+".")
	}
	for _, c := range s.clients {
		if c.wanted && !c.got && !c.crashed {
			s.outcome(OutcomeStarved, fmt.Sprintf("%s asked for the lock at %s and still had not got it when the run ended at %s.", sim.Capital(c.name), Seconds(c.wantedAt), Seconds(msDur(end))))
		}
	}
}

// outcomes returns what the run found, most serious first, or safe at the
// last event; the verdict is the first.
func (s *runner) outcomes() []Found {
	if len(s.found) == 0 {
		i := len(s.events) - 1
		text := "One client at a time believed it held the lock, every client that asked got it, and no late write reached the storage."
		return []Found{{Outcome: OutcomeSafe, Event: i, AtMS: s.events[i].AtMS, Text: text}}
	}
	return s.found.Sorted()
}
