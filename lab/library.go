package lab

import "fmt"

// LibraryEntry is one real library's lock, written as a recipe: the
// commands its acquire, release and extend send, the checks its scripts
// make and the replies they give, in Lua and lines of our own. A learner
// loads it in the editor and checks it as any recipe. Differences says
// where the recipe departs from the library, and Verdicts what a check of
// it finds, property by property, with the published reasoning.
type LibraryEntry struct {
	ID       string `json:"id"`
	Name     string `json:"name"`     // "redsync Mutex"
	Library  string `json:"library"`  // the repository, "go-redsync/redsync"
	Language string `json:"language"` // "Go"
	// Source is the library's file at the commit the recipe was written
	// from; Commit is that commit.
	Source string `json:"source"`
	Commit string `json:"commit"`
	Recipe Recipe `json:"recipe"`
	// Model is the fault model the entry is checked under; nil is
	// DefaultModel. ModelWhy says why it differs, if it does.
	Model    *Model `json:"model,omitempty"`
	ModelWhy string `json:"model_why,omitempty"`
	// Differences says, one sentence or two each, where the recipe is not
	// the library: what it leaves out and why that does or does not
	// change a verdict.
	Differences []string `json:"differences"`
	// Verdicts are what a check of the recipe finds for each property
	// (in the order of Properties), and why.
	Verdicts []Verdict `json:"verdicts"`
}

// CheckModel is the fault model the entry is checked under.
func (e LibraryEntry) CheckModel() Model {
	if e.Model != nil {
		return *e.Model
	}
	return DefaultModel()
}

// Verdict is what a check finds for one property of a library's lock,
// and the reasoning that predicts it.
type Verdict struct {
	Property Property `json:"property"`
	// Status is StatusHolds, StatusBroken or StatusNotJudged, as a Report
	// says it.
	Status string `json:"status"`
	Why    string `json:"why"`
	// Source names the Reference the reasoning comes from.
	Source string `json:"source"`
}

// Reference is a published text that verdicts cite.
type Reference struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Author string `json:"author"`
	URL    string `json:"url"`
}

// The references the verdicts cite.
const (
	RefKleppmann = "kleppmann-2016"
	RefRedisDocs = "redis-distlock"
	RefAntirez   = "antirez-2016"
)

// References returns the texts the verdicts cite.
func References() []Reference {
	return []Reference{
		{RefKleppmann, "How to do distributed locking", "Martin Kleppmann, 2016", "https://martin.kleppmann.com/2016/02/08/how-to-do-distributed-locking.html"},
		{RefRedisDocs, "Distributed Locks with Redis", "the Redis documentation", "https://redis.io/docs/latest/develop/use/patterns/distributed-locks/"},
		{RefAntirez, "Is Redlock safe?", "Salvatore Sanfilippo (antirez), 2016", "http://antirez.com/news/101"},
	}
}

// ReferenceByID returns the reference called id, or false.
func ReferenceByID(id string) (Reference, bool) {
	for _, r := range References() {
		if r.ID == id {
			return r, true
		}
	}
	return Reference{}, false
}

// LibraryByID returns the gallery's entry called id, or false.
func LibraryByID(id string) (LibraryEntry, bool) {
	for _, e := range Library() {
		if e.ID == id {
			return e, true
		}
	}
	return LibraryEntry{}, false
}

// ShortCommit is the first 12 hex digits of the entry's commit, as a
// link's words.
func (e LibraryEntry) ShortCommit() string {
	if len(e.Commit) > 12 {
		return e.Commit[:12]
	}
	return e.Commit
}

// NodesNote says how a Redlock library's entry runs: on five nodes, as
// the Redis documentation's Redlock does, each line on every node in
// turn, and the lock taken when a majority granted it within its
// validity.
const NodesNote = "Redlock sends each command to N independent Redis nodes and holds the lock when a majority (N/2+1) granted it within the validity time: the TTL less the time the round took and a drift allowance. The recipe is what the library sends to one node; the lab runs it on 5 nodes, as the Redis documentation's example does, each line on every node in turn and with the same token, and judges the round by the same rule. The library sends to the nodes at once; a round in turn takes a little longer, which the validity counts."

// The shared lines and reasoning of the gallery's entries. Each entry
// keeps its own lines where the library differs.
const (
	// pyCompareDelete is redis-py's release: read the key, and delete it
	// only if it holds the token; 1 when deleted, else 0.
	pyCompareDelete = `EVAL "local v = redis.call('GET', KEYS[1]) if v ~= ARGV[1] then return 0 end redis.call('DEL', KEYS[1]) return 1" 1 {key} {token}`
	// pyAddTime is redis-py's extend by default: it adds the time to
	// what the key has left, if the key still holds the token and has a
	// TTL; 1 when renewed, else 0.
	pyAddTime = `EVAL "local v = redis.call('GET', KEYS[1]) if v ~= ARGV[1] then return 0 end local left = redis.call('PTTL', KEYS[1]) if left < 0 then return 0 end redis.call('PEXPIRE', KEYS[1], left + ARGV[2]) return 1" 1 {key} {token} {ttl}`

	// redissonLockLine takes the hash lock: a field per holder with a
	// count of its holds; nil when taken, the TTL left when another holds
	// it.
	redissonLockLine = `EVAL "if redis.call('EXISTS', KEYS[1]) == 1 and redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return redis.call('PTTL', KEYS[1]) end redis.call('HINCRBY', KEYS[1], ARGV[1], 1) redis.call('PEXPIRE', KEYS[1], ARGV[2]) return false" 1 {key} {token} {ttl}`
	// redissonUnlock gives back one hold: nil when the holder has no
	// field, 0 when it still holds (a re-entrant hold), 1 when the key
	// is deleted and the waiters told on the channel.
	redissonUnlock = `EVAL "if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return false end if redis.call('HINCRBY', KEYS[1], ARGV[1], -1) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 0 end redis.call('DEL', KEYS[1]) redis.call('PUBLISH', KEYS[2], 0) return 1" 2 {key} redisson_lock__channel:{key} {token} {ttl}`
	// redissonRenew is the watchdog's renewal: a new lease if the holder
	// still has its field; 1 when renewed, else 0.
	redissonRenew = `EVAL "if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1" 1 {key} {token} {ttl}`
	// redissonFencedAcquire is RFencedLock's acquire: the hash lock with
	// the next fencing token from a counter, in one script; {-1, token}
	// when taken, {TTL left, -1} when another holds it.
	redissonFencedAcquire = `EVAL "if redis.call('EXISTS', KEYS[1]) == 1 and redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return {redis.call('PTTL', KEYS[1]), -1} end local n = redis.call('INCR', KEYS[2]) redis.call('HINCRBY', KEYS[1], ARGV[1], 1) redis.call('PEXPIRE', KEYS[1], ARGV[2]) return {-1, n}" 2 {key} redisson_lock_token:{key} {token} {ttl}`

	// Why a TTL lock keeps one holder, and where it stops.
	whyOneHolderTTL = "SET with NX lets one client in at a time, and every release and renewal checks the token first, so within the timing a TTL lock assumes (work, pauses and late replies well inside the TTL, and an honest clock on the Redis node) nobody else gets in while a holder works. Past that timing no TTL lock keeps one holder: a client paused longer than the TTL (a stop-the-world GC, a stalled VM) still believes it holds the lock after the key expired and another took it, and a clock that jumps ahead expires the key early. The lab judges one-holder only within the timing; no-stale-write shows what happens past it."
	// Why compare-then-act in one script never touches another's lock.
	whyCompareInScript = "The release and the renewal compare the key's value with this holder's random value and act in the same script, as the Redis documentation's single-instance lock does: a client whose lock expired and passed to another finds another value and leaves the key alone."
	// Why a TTL set in the same command frees the lock.
	whyTTLFrees = "The value and its TTL are set in one command, so a holder that crashes leaves a key that expires: the lock frees itself when the TTL runs out (the documentation's deadlock-free property)."
	// Why a lock without a fencing token lets a stale write through.
	whyNoToken = "There is no fencing token: a client paused past its TTL wakes, still believes it holds the lock and writes after the next holder did, and the storage cannot tell the writes apart. This is Kleppmann's counterexample; antirez's reply is that a storage able to check a token could check the lock's random value instead, with a compare-and-set, but a storage that takes every write checks nothing."
)

// lineSetNXEX is SET NX with the TTL in seconds, as clients that send a
// whole number of seconds write it.
const lineSetNXEX = "SET {key} {token} EX {ttl_s} NX"

// ttlLockVerdicts are the verdicts of a single-instance TTL lock without
// fencing: the first three hold, a stale write gets through.
func ttlLockVerdicts(oneHolder, foreign, frees, stale string) []Verdict {
	pick := func(own, shared string) string {
		if own != "" {
			return own
		}
		return shared
	}
	return []Verdict{
		{PropOneHolder, StatusHolds, pick(oneHolder, whyOneHolderTTL), RefKleppmann},
		{PropNoForeignRelease, StatusHolds, pick(foreign, whyCompareInScript), RefRedisDocs},
		{PropNoStaleWrite, StatusBroken, pick(stale, whyNoToken), RefKleppmann},
		{PropFreesAfterCrash, StatusHolds, pick(frees, whyTTLFrees), RefRedisDocs},
	}
}

// redlockVerdicts are the verdicts of a Redlock library on five nodes
// under the default fault model: a clock that jumps on one node hands the
// lock to two clients, and without a token a stale write gets through.
func redlockVerdicts() []Verdict {
	return []Verdict{
		{PropOneHolder, StatusBroken, whyRedlockClock, RefKleppmann},
		{PropNoForeignRelease, StatusHolds, whyCompareInScript + " On every node the script compares with this client's value, so a release or renewal after the lock passed on leaves the other client's keys alone.", RefRedisDocs},
		{PropNoStaleWrite, StatusBroken, whyNoToken + " A majority of nodes changes nothing here: the paused client's lock expired on all of them.", RefKleppmann},
		{PropFreesAfterCrash, StatusHolds, "Every node's key is set with its TTL in one command; a client that crashes leaves keys that expire on every node, and the lock frees itself.", RefRedisDocs},
	}
}

// whyRedlockClock is Kleppmann's clock-jump counterexample to Redlock,
// and antirez's answer.
const whyRedlockClock = "Two clients cannot both hold a majority of five nodes, unless a node forgets a key before its time. Kleppmann's counterexample: a client holds the lock on a majority, the clock of one of those nodes jumps ahead and its key expires early, and another client takes that node and the two it did not have: a majority each, and both believe they hold the lock, with no pause past the TTL. The lab judges one-holder with the clocks of at most a minority of the nodes jumping, and finds this. antirez's reply is that Redlock assumes clocks that do not jump (an administrator must not step a server's clock); the documentation's answer to the same case with a restart, a node kept down for longer than the TTL, is in the fault model here, and is why no restart breaks it."

const counterWhy = "Redis writes every command to its append-only file with fsync always here, so a restart keeps the fencing counter: a counter that a restart loses hands out the same token twice, and no recipe on one Redis can fix that."

// Library returns the gallery's entries: the locks of widely used Redis
// libraries, each as a recipe of our own that sends the commands the
// library's scripts send and reads their replies the same way.
func Library() []LibraryEntry {
	// A lock whose fencing counter is kept in Redis is checked where
	// Redis keeps its data across a restart.
	counterKept := persistent
	return []LibraryEntry{
		{
			ID: "redis-py", Name: "redis-py Lock", Library: "redis/redis-py", Language: "Python",
			Source: "https://github.com/redis/redis-py/blob/81e4d0bf5134f6b4d47781a26a7486dcacc6e1de/redis/lock.py",
			Commit: "81e4d0bf5134f6b4d47781a26a7486dcacc6e1de",
			Recipe: Recipe{Acquire: []string{lineSetNXPX}, Release: []string{pyCompareDelete}, Extend: []string{pyAddTime}},
			Differences: []string{
				"The lock is created with timeout set to the lab's TTL. redis-py's default is no timeout at all: SET NX without PX, a lock that never frees itself if its holder dies (frees-after-crash would break).",
				"extend(additional_time) adds the time to what the key has left, as here; extend(..., replace_ttl=True) and reacquire() set the TTL instead. Both check the token first.",
				"acquire() polls every sleep (0.1 s) until blocking_timeout; the lab's clients retry after a random delay. The token is a uuid1 hex string; here {token}.",
			},
			Verdicts: ttlLockVerdicts("", "", "Even with extend adding time, the TTL the holder set is what a crash leaves; it runs out and the lock frees itself.", ""),
		},
		{
			ID: "redsync", Name: "redsync Mutex", Library: "go-redsync/redsync", Language: "Go",
			Source: "https://github.com/go-redsync/redsync/blob/ef3eedddf638a105dd4063858da3c37bbfc27f60/mutex.go",
			Commit: "ef3eedddf638a105dd4063858da3c37bbfc27f60",
			Recipe: Recipe{Acquire: []string{lineSetNXPX}, Release: []string{lineCompareDelete}, Extend: []string{lineCompareExtend}, Nodes: 5},
			Differences: []string{
				NodesNote,
				"Lock() tries up to 32 times with a random delay, and counts the lock taken only if a quorum answered before until: the expiry less the time taken less expiry times the drift factor 0.01 (the lab's drift adds 2 ms to that); the lab's clients retry after a random delay. Extend() at this commit counts a quorum's renewals whatever the time they took, where the lab counts them only within the validity.",
				"The value is 16 random bytes in base64; here {token}. Extend() renews with PEXPIRE and counts a node when the script answers 1; Unlock() when it answers anything but 0.",
			},
			Verdicts: redlockVerdicts(),
		},
		{
			ID: "redislock", Name: "bsm/redislock", Library: "bsm/redislock", Language: "Go",
			Source: "https://github.com/bsm/redislock/blob/926e29453543a088d9773f7b22d56e69edbfa6eb/redislock.go",
			Commit: "926e29453543a088d9773f7b22d56e69edbfa6eb",
			Recipe: Recipe{Acquire: []string{lineSetNXEX}, Release: []string{lineCompareDelete}, Extend: []string{lineCompareExtend}},
			Differences: []string{
				"Obtain sends SetNX with the TTL, which go-redis writes as SET ... EX 2 NX for a TTL of whole seconds (PX otherwise); the lab's TTL is 2 s.",
				"By default Obtain does not retry (NoRetry) and a caller asks again; the lab's clients retry after a random delay. Release and Refresh succeed only on a reply of exactly 1, which for one key is what the lab reads as success.",
				"Options.Metadata, appended to the random token, is not modelled. Later versions obtain several keys at once in one script; this commit locks one key.",
			},
			Verdicts: ttlLockVerdicts("", "", "", ""),
		},
		{
			ID: "redisson-rlock", Name: "Redisson RLock", Library: "redisson/redisson", Language: "Java",
			Source: "https://github.com/redisson/redisson/blob/4339c99bd6244a1168d16a7802567544b84010e1/redisson/src/main/java/org/redisson/RedissonLock.java",
			Commit: "4339c99bd6244a1168d16a7802567544b84010e1",
			Recipe: Recipe{Acquire: []string{redissonLockLine}, Release: []string{redissonUnlock}, Extend: []string{redissonRenew},
				TakenWhen: &Decide{Line: 1, Reply: `^\(nil\)$`}},
			Differences: []string{
				"The lock is a hash: one field per holder, named by the client's id and its thread id, holding a count of re-entrant holds. Here the field is {token}, new at each acquisition, so a re-entrant hold never happens; in Redisson two acquisitions by one thread share the field.",
				"The lease is 30 s (lockWatchdogTimeout), renewed by a watchdog every 10 s for as long as the JVM runs; here the lease is the lab's 2 s TTL and the holder renews once, halfway through its work. A JVM paused past its lease stops its watchdog too, so the lock expires as in the lab.",
				"A client that does not get the lock subscribes to the lock's channel and waits for the release's message or the TTL the script answered; the lab's clients retry after a random delay. The channel is named here with {key}.",
			},
			Verdicts: ttlLockVerdicts(
				"The acquire script creates the hash only when it does not exist or already holds this holder's field, in one step, so one holder at a time within the timing a TTL lock assumes. Past it, Redisson is a TTL lock like the others: a JVM paused longer than its lease (its watchdog paused with it) still believes it holds the lock after another took it.",
				"The release and the renewal look for this holder's own field and act in the same script: a holder whose lease ran out finds another's hash and leaves it alone.",
				"The hash is created with its lease by the same script; a crashed JVM renews nothing, and the lease runs out.",
				""),
		},
		{
			ID: "redisson-fenced", Name: "Redisson RFencedLock", Library: "redisson/redisson", Language: "Java",
			Source: "https://github.com/redisson/redisson/blob/c5e0aee04746ba3b0e4c1dc49f20c6f308cd3f32/redisson/src/main/java/org/redisson/RedissonFencedLock.java",
			Commit: "c5e0aee04746ba3b0e4c1dc49f20c6f308cd3f32",
			Recipe: Recipe{Acquire: []string{redissonFencedAcquire}, Release: []string{redissonUnlock}, Extend: []string{redissonRenew}, Fencing: true,
				TakenWhen: &Decide{Line: 1, Reply: `^1\) \(integer\) -1\n`}, TokenFrom: &TokenFrom{Line: 1, Element: 2}},
			Model: &counterKept, ModelWhy: counterWhy,
			Differences: []string{
				"RFencedLock is RLock with a counter bumped by the acquire script: the reply is the pair {-1, token} when taken, {TTL left, -1} when not, and lockAndGetToken() returns the token. The storage must refuse a token lower than one it has seen; Redisson leaves that check to the service it protects, as the lab's storage does with fencing on.",
				"The release is RedissonLock's unlock at this commit without its unlock latch (a key that makes a retried unlock answer the same; the lab does not retry); the renewal is the watchdog's, as in the RLock entry.",
				"The hash field is {token}, new at each acquisition, as in the RLock entry; the lease is the lab's 2 s TTL, renewed once halfway through the work.",
			},
			Verdicts: []Verdict{
				{PropOneHolder, StatusHolds, "The same hash lock as RLock: one holder at a time within the timing a TTL lock assumes.", RefKleppmann},
				{PropNoForeignRelease, StatusHolds, "The release and the renewal act only on this holder's own field, in the same script.", RefRedisDocs},
				{PropNoStaleWrite, StatusHolds, "The token comes from INCR in the acquire script, with the lock, so a later holder always has a higher token, and the storage refuses the lower one: a client paused past its lease wakes and writes, and its write is rejected. This is Kleppmann's fencing token, which he found missing from Redlock; it holds here because Redis keeps the counter across restarts.", RefKleppmann},
				{PropFreesAfterCrash, StatusHolds, "The hash is created with its lease by the same script, and a crashed holder renews nothing.", RefRedisDocs},
			},
		},
		{
			ID: "node-redlock", Name: "node-redlock", Library: "mike-marcacci/node-redlock", Language: "TypeScript",
			Source: "https://github.com/mike-marcacci/node-redlock/blob/83d9dc278155c0ee175ec43dfdfbc1c45450a43b/src/index.ts",
			Commit: "83d9dc278155c0ee175ec43dfdfbc1c45450a43b",
			Recipe: Recipe{
				Acquire:      []string{`EVAL "local n = #KEYS for i = 1, n do if redis.call('EXISTS', KEYS[i]) == 1 then return 0 end end for i = 1, n do redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2]) end return n" 1 {key} {token} {ttl}`},
				Release:      []string{`EVAL "local c = 0 for i = 1, #KEYS do if redis.call('GET', KEYS[i]) == ARGV[1] then redis.pcall('DEL', KEYS[i]) c = c + 1 end end return c" 1 {key} {token}`},
				Extend:       []string{`EVAL "for i = 1, #KEYS do if redis.call('GET', KEYS[i]) ~= ARGV[1] then return 0 end end for i = 1, #KEYS do redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2]) end return #KEYS" 1 {key} {token} {ttl}`},
				TakenWhen:    &Decide{Line: 1, Reply: `^\(integer\) 1$`},
				RenewedWhen:  &Decide{Line: 1, Reply: `^\(integer\) 1$`},
				ReleasedWhen: &Decide{Line: 1, Reply: `^\(integer\) 1$`},
				Nodes:        5,
			},
			Differences: []string{
				NodesNote,
				"Its scripts lock several resources at once: every key or none. Here the lock has one resource, {key}, and a node votes for an operation when the script answers the number of keys, 1, as the replies above say.",
				"acquire() at this commit does not check the validity: it returns a Lock whose expiration (start + duration - drift) may already have passed, and leaves the caller to look. The lab's client drops a round whose validity ran out, as the Redis documentation's algorithm does; a caller of node-redlock that does not look can hold an expired lock after a late reply.",
				"acquire() retries 10 times, 200 ms apart with 100 ms of jitter, and using() extends the lock automatically 500 ms before it expires; extend() first refuses, on the client, a lock whose expiration has passed. The lab's clients retry after a random delay and renew once, halfway through their work.",
			},
			Verdicts: redlockVerdicts(),
		},
		{
			ID: "python-redis-lock", Name: "python-redis-lock", Library: "ionelmc/python-redis-lock", Language: "Python",
			Source: "https://github.com/ionelmc/python-redis-lock/blob/004333aa583abcf59f904eee5fd0dc21bd98a3b1/src/redis_lock/__init__.py",
			Commit: "004333aa583abcf59f904eee5fd0dc21bd98a3b1",
			Recipe: Recipe{
				Acquire:      []string{lineSetNXEX},
				Release:      []string{`EVAL "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 1 end redis.call('DEL', KEYS[2]) redis.call('LPUSH', KEYS[2], 1) redis.call('DEL', KEYS[1]) return 0" 2 {key} {key}:signal {token}`, "DEL {key}:signal"},
				Extend:       []string{`EVAL "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 1 end if redis.call('TTL', KEYS[1]) < 0 then return 2 end redis.call('EXPIRE', KEYS[1], ARGV[2]) return 0" 1 {key} {token} {ttl_s}`},
				RenewedWhen:  &Decide{Line: 1, Reply: `^\(integer\) 0$`},
				ReleasedWhen: &Decide{Line: 1, Reply: `^\(integer\) 0$`},
			},
			Differences: []string{
				"Its scripts answer 0 for success and an error code otherwise (1: not this lock's id; 2: no TTL), so the recipe says so: released and renewed when line 1 answers 0.",
				"A waiting client blocks in BLPOP on a signal list that the release pushes to, and the release then deletes the list (the second release line). The lab's clients do not block; they retry after a random delay. The list is named {key}:signal here, lock-signal:NAME in the library.",
				"With auto_renewal a thread renews every two thirds of expire; here the holder renews once, halfway through its work. expire is in whole seconds (SET ... EX), the lab's 2 s TTL.",
			},
			Verdicts: ttlLockVerdicts("", "The release and the renewal compare the key with this lock's id and act in the same script; a lock that expired and passed to another answers 1 and is left alone.", "", ""),
		},
		{
			ID: "redlock-net", Name: "RedLock.net", Library: "samcook/RedLock.net", Language: "C#",
			Source: "https://github.com/samcook/RedLock.net/blob/d440ad730953ff53be07375ef8b84fcb11318961/RedLockNet.SERedis.Shared/RedLock.cs",
			Commit: "d440ad730953ff53be07375ef8b84fcb11318961",
			Recipe: Recipe{
				Acquire: []string{lineSetNXEX},
				Release: []string{lineCompareDelete},
				Extend:  []string{`EVAL "local v = redis.call('GET', KEYS[1]) if v == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end if v then return -1 end if redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) then return 1 end return 0" 1 {key} {token} {ttl}`},
				Nodes:   5,
			},
			Differences: []string{
				NodesNote,
				"Its extend script (Lua/Extend.lua at the same commit) takes the key again when it has expired and nobody else took it, and answers -1 when another holds it. The lab's holder renews once, halfway through its work; RedLock.net's timer renews every half TTL.",
				"Acquire tries 3 times, a random delay of up to 400 ms apart, and counts the lock only if a quorum answered within the validity time (1% of the expiry plus 2 ms of drift, as in the lab); the lab's clients retry after a random delay.",
				"StackExchange.Redis writes StringSet with a whole number of seconds as SET ... EX 2 NX. A failed renewal only sets IsAcquired to false, and the caller's code must check it; the lab's client stops its work when a renewal fails.",
			},
			Verdicts: redlockVerdicts(),
		},
	}
}

// ModelText says the fault model the entry is checked under and why,
// when it is its own; "" when it is the default.
func (e LibraryEntry) ModelText() string {
	if e.Model == nil {
		return ""
	}
	return "Checked under its own fault model. " + e.Model.Text() + " " + e.ModelWhy
}

// StatusWords says a status in the report's words: "holds", "broken",
// "not judged".
func StatusWords(status string) string {
	switch status {
	case StatusHolds:
		return "holds"
	case StatusBroken:
		return "broken"
	}
	return "not judged"
}

// LoadedText says, once the entry is in the editor, what the learner has
// and what to do next.
func (e LibraryEntry) LoadedText() string {
	what := "Its recipe is in the editor"
	if e.Model != nil {
		what = "Its recipe, and the fault model it is checked under, are in the editor"
	}
	return fmt.Sprintf("Loaded %s (%s at %s). %s, written as the lab's own lines; press Check it and compare what breaks with the verdicts the gallery expects.", e.Name, e.Library, e.ShortCommit(), what)
}
