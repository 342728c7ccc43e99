package playground

import "time"

// Expired names the keys that a clock advance made expire: those listed
// in before (the inspector's listing just before the advance) with a TTL
// of at most d plus slack (the real time between the two listings, in
// which TTLs ran too), and missing from after. A key deleted by a command
// in that moment, rather than expired, is not named unless its TTL was
// due anyway; a key whose name the inspector shortened is named as it
// shows it.
func Expired(before, after []KeyInfo, d, slack time.Duration) []string {
	left := make(map[string]bool, len(after))
	for _, k := range after {
		left[k.Key] = true
	}
	var gone []string
	limit := (d + slack).Milliseconds()
	for _, k := range before {
		if k.PTTLMS >= 0 && k.PTTLMS <= limit && !left[k.Key] {
			gone = append(gone, k.Key)
		}
	}
	return gone
}
