package lab

import "fmt"

// Challenge is a broken recipe for a learner to diagnose and fix. It is
// solved when the learner's recipe passes Property (see Report.Passed).
type Challenge struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Goal     string   `json:"goal"`     // what the learner must make true, in one sentence
	Property Property `json:"property"` // the property the broken recipe breaks
	Recipe   Recipe   `json:"recipe"`   // the broken recipe the learner starts from
	Hint     string   `json:"hint"`     // names the misconception
	// Fix is a recipe that passes; tests use it. It is not sent to
	// learners.
	Fix Recipe `json:"-"`
}

// The recipe lines the challenges share.
const (
	lineSetNXPX = "SET {key} {token} NX PX {ttl}"
	// lineCompareDelete is the textbook release: delete the key only if
	// it still holds this client's token, in one script.
	lineCompareDelete = `EVAL "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end" 1 {key} {token}`
	// lineCompareExtend renews only the client's own lock.
	lineCompareExtend = `EVAL "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end" 1 {key} {token} {ttl}`
	// lineFencedAcquire takes the lock and hands out the next fencing
	// token in one script: 0 when the lock is taken.
	lineFencedAcquire = `EVAL "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return redis.call('INCR', KEYS[2]) else return 0 end" 2 {key} {key}:fence {token} {ttl}`
)

// Textbook is the single-instance lock of the course: SET NX PX with a
// unique token, and a compare-and-delete release. It holds one-holder,
// no-foreign-release and frees-after-crash, and fails no-stale-write.
func Textbook() Recipe {
	return Recipe{Acquire: []string{lineSetNXPX}, Release: []string{lineCompareDelete}}
}

// Fenced is Textbook with a fencing token handed out by the acquire
// script (SET NX PX and INCR of a counter in one EVAL) and fencing on: it
// holds all four properties.
func Fenced() Recipe {
	return Recipe{Acquire: []string{lineFencedAcquire}, Release: []string{lineCompareDelete}, Fencing: true}
}

// Challenges returns the challenges in teaching order.
func Challenges() []Challenge {
	return []Challenge{
		{
			ID:       "setnx-then-expire",
			Title:    "SETNX, then EXPIRE",
			Goal:     "Make the lock free again within the TTL when its holder crashes.",
			Property: PropFreesAfterCrash,
			Recipe:   Recipe{Acquire: []string{"SETNX {key} {token}", "EXPIRE {key} {ttl_s}"}, Release: []string{lineCompareDelete}},
			Hint:     "Two commands are two steps, not one: a client can crash between SETNX and EXPIRE, and then the key has no TTL and nobody ever gets the lock again. SET with NX and PX sets the value and the TTL in one command.",
			Fix:      Textbook(),
		},
		{
			ID:       "plain-del",
			Title:    "Release with a plain DEL",
			Goal:     "Never delete a lock that is no longer yours.",
			Property: PropNoForeignRelease,
			Recipe:   Recipe{Acquire: []string{lineSetNXPX}, Release: []string{"DEL {key}"}},
			Hint:     "DEL deletes whatever is in the key. After a pause longer than the TTL your lock has expired and the key holds another client's token, so your DEL deletes their lock. Compare the token and delete in one script.",
			Fix:      Textbook(),
		},
		{
			ID:       "same-token",
			Title:    "The same token for every client",
			Goal:     "Never delete a lock that is no longer yours.",
			Property: PropNoForeignRelease,
			Recipe: Recipe{Acquire: []string{"SET {key} locked NX PX {ttl}"},
				Release: []string{`EVAL "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end" 1 {key} locked`}},
			Hint: "A token proves ownership only if nobody else has it. When every client writes the same value, a client whose lock expired still matches the next holder's key, and its careful compare-and-delete deletes their lock. Use {token}: unique to each acquisition.",
			Fix:  Textbook(),
		},
		{
			ID:       "no-ttl",
			Title:    "A lock without a TTL",
			Goal:     "Make the lock free again within the TTL when its holder crashes.",
			Property: PropFreesAfterCrash,
			Recipe:   Recipe{Acquire: []string{"SET {key} {token} NX"}, Release: []string{lineCompareDelete}},
			Hint:     "Without a TTL the lock outlives its holder: a client that crashes never releases it, and it stays taken for good. The TTL is what frees the lock of a holder that died.",
			Fix:      Textbook(),
		},
		{
			ID:       "plain-pexpire",
			Title:    "Extend with a plain PEXPIRE",
			Goal:     "Never extend a lock that is no longer yours.",
			Property: PropNoForeignRelease,
			Recipe:   Recipe{Acquire: []string{lineSetNXPX}, Release: []string{lineCompareDelete}, Extend: []string{"PEXPIRE {key} {ttl}"}},
			Hint:     "PEXPIRE renews whatever is in the key. After a pause longer than the TTL that is another client's lock, and you have just kept it alive for them while you go on believing it is yours. Compare the token and extend in one script.",
			Fix:      Recipe{Acquire: []string{lineSetNXPX}, Release: []string{lineCompareDelete}, Extend: []string{lineCompareExtend}},
		},
		{
			ID:       "no-fencing",
			Title:    "A correctness job without fencing",
			Goal:     "Make the storage refuse writes from a client whose lock has passed to another.",
			Property: PropNoStaleWrite,
			Recipe:   Textbook(),
			Hint:     "A lock with a TTL cannot stop a client paused past the TTL: when it wakes it still believes it holds the lock and writes. Only the storage can refuse it. Hand out a fencing token with the lock (an INCR in the acquire script) and turn fencing on.",
			Fix:      Fenced(),
		},
		{
			ID:       "get-then-del",
			Title:    "GET, then DEL",
			Goal:     "Never delete a lock that is no longer yours.",
			Property: PropNoForeignRelease,
			Recipe:   Recipe{Acquire: []string{lineSetNXPX}, Release: []string{"GET {key}", "DEL {key}"}},
			Hint:     "Checking the token with GET and deleting with DEL are two steps: between them your lock can expire and pass to another client, and the DEL removes theirs. The check and the delete must be one script.",
			Fix:      Textbook(),
		},
		{
			ID:       "incr-after-set",
			Title:    "The fencing counter bumped after SET",
			Goal:     "Make the storage refuse writes from a client whose lock has passed to another.",
			Property: PropNoStaleWrite,
			Recipe:   Recipe{Acquire: []string{lineSetNXPX, "INCR {key}:fence"}, Release: []string{lineCompareDelete}, Fencing: true},
			Hint:     "A fencing token must come with the lock, atomically. With INCR as a second command, a client paused between SET and INCR gets its token after the next holder got theirs: a newer number for an older lock, so the storage takes its stale write. Do SET and INCR in one script.",
			Fix:      Fenced(),
		},
	}
}

// ChallengeByID returns the challenge called id, or ErrUnknownChallenge.
func ChallengeByID(id string) (Challenge, error) {
	for _, c := range Challenges() {
		if c.ID == id {
			return c, nil
		}
	}
	return Challenge{}, fmt.Errorf("challenge %q: %w", id, ErrUnknownChallenge)
}
