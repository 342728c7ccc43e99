package lab

import (
	"fmt"
	"slices"
	"strings"

	"github.com/locklab/locklab/sim"
)

// Challenge is a broken recipe for a learner to diagnose and fix. It is
// solved only by a lock: when the learner's recipe works and holds the
// challenge's own property and one-holder, no-foreign-release and
// frees-after-crash too (see Requires), under the challenge's fault
// model.
type Challenge struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Goal     string   `json:"goal"`     // what the learner must make true, in one sentence
	Property Property `json:"property"` // the property the broken recipe breaks
	Recipe   Recipe   `json:"recipe"`   // the broken recipe the learner starts from
	Hint     string   `json:"hint"`     // names the misconception
	// Level is the challenge's rung on the ladder (see Levels), from 1.
	Level int `json:"level"`
	// Model is the fault model the challenge is judged under; nil is
	// DefaultModel. ModelWhy says why it differs, if it does.
	Model    *Model `json:"model,omitempty"`
	ModelWhy string `json:"model_why,omitempty"`
	// Fix is a recipe that passes; tests use it. It is not sent to
	// learners.
	Fix Recipe `json:"-"`
}

// Level is a rung of the challenge ladder.
type Level struct {
	N     int    `json:"n"`
	Title string `json:"title"`
	Goal  string `json:"goal"`
}

// Levels returns the rungs of the challenge ladder, in order.
func Levels() []Level {
	return []Level{
		{1, "A lock that frees itself", "The lock must come free when its holder dies: a TTL, set with the value in one step."},
		{2, "Only your own lock", "Check and act in one step, on a value only you have: never take, delete or renew a lock that is not yours."},
		{3, "Safe even past the TTL", "A TTL cannot stop a paused client: the storage must refuse it, with fencing tokens handed out with the lock."},
	}
}

// model is the fault model the challenge is judged under.
func (c Challenge) model() Model {
	if c.Model != nil {
		return *c.Model
	}
	return DefaultModel()
}

// Requires lists the properties a recipe must hold to solve c: its own
// first, then those of any lock.
func (c Challenge) Requires() []Property {
	out := []Property{c.Property}
	for _, p := range []Property{PropOneHolder, PropNoForeignRelease, PropFreesAfterCrash} {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// broken says what a recipe that breaks p lets happen.
func broken(p Property) string {
	switch p {
	case PropOneHolder:
		return "lets two clients hold the lock at once"
	case PropNoForeignRelease:
		return "lets a client delete, overwrite or renew a lock that is no longer its own"
	case PropNoStaleWrite:
		return "lets the storage take a write from a client whose lock had passed to another"
	case PropFreesAfterCrash:
		return "leaves the lock taken after its holder crashes"
	}
	return "breaks " + string(p)
}

// judgeChallenge sets rep's Passed and PassText for c. What a recipe
// breaks is said first: a lock that lets two clients hold it often fails
// to release too, and the broken property is the reason.
func judgeChallenge(rep *Report, c *Challenge) {
	passed := false
	rep.Passed = &passed
	var broke, unjudged []string
	for i, p := range c.Requires() {
		pr, _ := rep.Property(p)
		switch {
		case pr.Status == StatusBroken && i == 0:
			rep.PassText = fmt.Sprintf("Not solved yet: the recipe still %s (%s).", broken(p), p)
			return
		case pr.Status == StatusBroken:
			broke = append(broke, fmt.Sprintf("%s (%s)", broken(p), p))
		case pr.Status == StatusNotJudged:
			unjudged = append(unjudged, string(p))
		}
	}
	switch {
	case len(broke) > 0:
		rep.PassText = "Not solved: your fix " + sim.JoinAnd(broke) + ". A challenge is solved only by a whole lock."
	case !rep.Works:
		rep.PassText = "Not solved: the recipe does not work as a lock yet. " + rep.WorksText
	case len(unjudged) > 0:
		rep.PassText = "Not solved: no schedule could judge " + strings.Join(unjudged, ", ") + "."
	default:
		passed = true
		rep.PassText = fmt.Sprintf("Solved: %s holds, and so does every property of a lock.", c.Property)
	}
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

// persistent is the fault model of the fencing challenges: Redis keeps
// its data across a restart, so that the fencing counter survives.
var persistent = Model{LongStalls: true, ClockJumps: JumpsForward, Restarts: RestartsWithData, Combine: true}

const persistentWhy = "Here Redis writes every command to its append-only file with fsync always, so a restart keeps the fencing counter: a counter that a restart can lose hands out the same token twice, and no recipe on one Redis can fix that."

// Challenges returns the challenges in teaching order: by level, then as
// the lesson meets them.
func Challenges() []Challenge {
	all := []Challenge{
		{
			ID:       "setnx-then-expire",
			Level:    1,
			Title:    "SETNX, then EXPIRE",
			Goal:     "Make the lock free again within the TTL when its holder crashes.",
			Property: PropFreesAfterCrash,
			Recipe:   Recipe{Acquire: []string{"SETNX {key} {token}", "EXPIRE {key} {ttl_s}"}, Release: []string{lineCompareDelete}},
			Hint:     "Two commands are two steps, not one: a client can crash between SETNX and EXPIRE, and then the key has no TTL and nobody ever gets the lock again. SET with NX and PX sets the value and the TTL in one command.",
			Fix:      Textbook(),
		},
		{
			ID:       "plain-del",
			Level:    2,
			Title:    "Release with a plain DEL",
			Goal:     "Never delete a lock that is no longer yours.",
			Property: PropNoForeignRelease,
			Recipe:   Recipe{Acquire: []string{lineSetNXPX}, Release: []string{"DEL {key}"}},
			Hint:     "DEL deletes whatever is in the key. After a pause longer than the TTL your lock has expired and the key holds another client's token, so your DEL deletes their lock. Compare the token and delete in one script.",
			Fix:      Textbook(),
		},
		{
			ID:       "same-token",
			Level:    2,
			Title:    "The same token for every client",
			Goal:     "Never delete a lock that is no longer yours.",
			Property: PropNoForeignRelease,
			Recipe: Recipe{Acquire: []string{"SET {key} locked NX PX {ttl}"},
				Release: []string{`EVAL "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end" 1 {key} locked`}},
			Hint: "A token proves ownership only if nobody else has it. When every client writes the same value, a client whose lock expired still matches the next holder's key, and its careful compare-and-delete deletes their lock. Use {token}: unique to each acquisition.",
			Fix:  Textbook(),
		},
		{
			ID:       "get-then-set",
			Level:    2,
			Title:    "GET, then SET",
			Goal:     "Never let two clients hold the lock at once.",
			Property: PropOneHolder,
			Recipe: Recipe{Acquire: []string{"GET {key}", "SET {key} {token} PX {ttl}"}, Release: []string{lineCompareDelete},
				TakenWhen: &Decide{Line: 1, Reply: `^\(nil\)$`}},
			Hint: "Checking that the key is empty and then setting it are two steps: another client can check between them, see the same empty key, and both go ahead. SET with NX checks and sets in one command.",
			Fix:  Textbook(),
		},
		{
			ID:       "no-ttl",
			Level:    1,
			Title:    "A lock without a TTL",
			Goal:     "Make the lock free again within the TTL when its holder crashes.",
			Property: PropFreesAfterCrash,
			Recipe:   Recipe{Acquire: []string{"SET {key} {token} NX"}, Release: []string{lineCompareDelete}},
			Hint:     "Without a TTL the lock outlives its holder: a client that crashes never releases it, and it stays taken for good. The TTL is what frees the lock of a holder that died.",
			Fix:      Textbook(),
		},
		{
			ID:       "plain-pexpire",
			Level:    2,
			Title:    "Extend with a plain PEXPIRE",
			Goal:     "Never extend a lock that is no longer yours.",
			Property: PropNoForeignRelease,
			Recipe:   Recipe{Acquire: []string{lineSetNXPX}, Release: []string{lineCompareDelete}, Extend: []string{"PEXPIRE {key} {ttl}"}},
			Hint:     "PEXPIRE renews whatever is in the key. After a pause longer than the TTL that is another client's lock, and you have just kept it alive for them while you go on believing it is yours. Compare the token and extend in one script.",
			Fix:      Recipe{Acquire: []string{lineSetNXPX}, Release: []string{lineCompareDelete}, Extend: []string{lineCompareExtend}},
		},
		{
			ID:       "no-fencing",
			Level:    3,
			Model:    &persistent,
			ModelWhy: persistentWhy,
			Title:    "A correctness job without fencing",
			Goal:     "Make the storage refuse writes from a client whose lock has passed to another.",
			Property: PropNoStaleWrite,
			Recipe:   Textbook(),
			Hint:     "A lock with a TTL cannot stop a client paused past the TTL: when it wakes it still believes it holds the lock and writes. Only the storage can refuse it. Hand out a fencing token with the lock (an INCR in the acquire script) and turn fencing on.",
			Fix:      Fenced(),
		},
		{
			ID:       "get-then-del",
			Level:    2,
			Title:    "GET, then DEL",
			Goal:     "Never delete a lock that is no longer yours.",
			Property: PropNoForeignRelease,
			Recipe:   Recipe{Acquire: []string{lineSetNXPX}, Release: []string{"GET {key}", "DEL {key}"}},
			Hint:     "Checking the token with GET and deleting with DEL are two steps: between them your lock can expire and pass to another client, and the DEL removes theirs. The check and the delete must be one script.",
			Fix:      Textbook(),
		},
		{
			ID:       "incr-after-set",
			Level:    3,
			Model:    &persistent,
			ModelWhy: persistentWhy,
			Title:    "The fencing counter bumped after SET",
			Goal:     "Make the storage refuse writes from a client whose lock has passed to another.",
			Property: PropNoStaleWrite,
			Recipe:   Recipe{Acquire: []string{lineSetNXPX, "INCR {key}:fence"}, Release: []string{lineCompareDelete}, Fencing: true},
			Hint:     "A fencing token must come with the lock, atomically. With INCR as a second command, a client paused between SET and INCR gets its token after the next holder got theirs: a newer number for an older lock, so the storage takes its stale write. Do SET and INCR in one script.",
			Fix:      Fenced(),
		},
	}
	slices.SortStableFunc(all, func(a, b Challenge) int { return a.Level - b.Level })
	return all
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
