package lab

import (
	"context"
	"strings"
	"testing"
	"time"
)

// The recipes of real locks and of the SETNX documentation, written as
// the lab takes them.
const (
	// valueExpiryAcquire is the SETNX documentation's lock, in one
	// script: the value is the time the lock expires, and an expired
	// lock is taken over with GETSET.
	valueExpiryAcquire = `EVAL "local t = redis.call('TIME') local now = t[1] * 1000 + math.floor(t[2] / 1000) if redis.call('SETNX', KEYS[1], now + ARGV[1] + 1) == 1 then return 1 end local v = tonumber(redis.call('GET', KEYS[1])) if v and v < now then local old = tonumber(redis.call('GETSET', KEYS[1], now + ARGV[1] + 1)) if old and old < now then return 1 end end return 0" 1 {key} {ttl}`
	valueExpiryRelease = `EVAL "local t = redis.call('TIME') local now = t[1] * 1000 + math.floor(t[2] / 1000) local v = tonumber(redis.call('GET', KEYS[1])) if v and v > now then return redis.call('DEL', KEYS[1]) end return 0" 1 {key}`
	// addTimeExtend is redis-py's Lock.extend by default: it adds the
	// time to what the key has left.
	addTimeExtend = `EVAL "local token = redis.call('get', KEYS[1]) if not token or token ~= ARGV[1] then return 0 end local expiration = redis.call('pttl', KEYS[1]) if not expiration then expiration = 0 end if expiration < 0 then return 0 end redis.call('pexpire', KEYS[1], ARGV[2] + expiration) return 1" 1 {key} {token} {ttl}`
	// redissonAcquire answers nil when the lock is taken, and the TTL
	// left when another holds it (RedissonLock's tryLockInnerAsync).
	redissonAcquire = `EVAL "if (redis.call('exists', KEYS[1]) == 0) or (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then redis.call('hincrby', KEYS[1], ARGV[2], 1) redis.call('pexpire', KEYS[1], ARGV[1]) return nil end return redis.call('pttl', KEYS[1])" 1 {key} {ttl} {token}`
	redissonRelease = `EVAL "if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then return nil end local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1) if (counter > 0) then redis.call('pexpire', KEYS[1], ARGV[2]) return 0 else redis.call('del', KEYS[1]) redis.call('publish', KEYS[2], ARGV[1]) return 1 end" 2 {key} {key}:channel 0 {ttl} {token}`
	// fencedTable hands out the lock and its fencing token in a table.
	fencedTable = `EVAL "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {1, redis.call('INCR', KEYS[2])} end return {0, 0}" 2 {key} {key}:fence {token} {ttl}`
)

func status(t *testing.T, rep Report, p Property) PropertyResult {
	t.Helper()
	pr, ok := rep.Property(p)
	if !ok {
		t.Fatalf("no result for %s", p)
	}
	return pr
}

// TestBrokenFixesAreNotSolved: a fix that breaks another property of a
// lock does not solve its challenge, and the report says what it broke.
func TestBrokenFixesAreNotSolved(t *testing.T) {
	for _, tt := range []struct {
		challenge string
		fix       Recipe
		says      string
	}{
		{"setnx-then-expire", Recipe{Acquire: []string{"SET {key} {token} PX {ttl}"}, Release: []string{lineCompareDelete}}, "lets two clients hold the lock"},
		{"no-fencing", Recipe{Acquire: []string{"INCR {key}"}, Release: []string{lineCompareDelete}, Fencing: true}, "lets two clients hold the lock"},
		{"plain-del", Recipe{Acquire: []string{lineSetNXPX}, Release: []string{"PING"}}, "does not work as a lock"},
		{"plain-del", Recipe{Acquire: []string{lineSetNXPX}, Release: []string{`EVALSHA 0123456789abcdef0123456789abcdef01234567 1 {key} {token}`}}, "NOSCRIPT"},
	} {
		t.Run(tt.challenge, func(t *testing.T) {
			rep, err := Check(context.Background(), Request{Recipe: tt.fix, Challenge: tt.challenge}, Budget{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Passed == nil || *rep.Passed {
				t.Errorf("Passed = %v; want false for %v", rep.Passed, tt.fix)
			}
			if !strings.Contains(rep.PassText, tt.says) {
				t.Errorf("PassText = %q; want it to say %q", rep.PassText, tt.says)
			}
		})
	}
}

// TestNeverTakenIsNotJudged: a recipe that never takes the lock holds
// nothing; every property is not judged.
func TestNeverTakenIsNotJudged(t *testing.T) {
	rep, err := Check(context.Background(), Request{Recipe: Recipe{Acquire: []string{"GET {key}"}, Release: []string{"DEL {key}"}}}, Budget{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Properties {
		if p.Status != StatusNotJudged || p.Holds || p.Explored != 0 || !strings.HasPrefix(p.Note, "Not judged") {
			t.Errorf("%s: status %s, holds %v, explored %d, note %q; want not judged", p.ID, p.Status, p.Holds, p.Explored, p.Note)
		}
	}
}

// TestStaleWriteJudgedWithoutFencing: without fencing, no-stale-write is
// judged in the schedules with writes from two holders, and broken.
func TestStaleWriteJudgedWithoutFencing(t *testing.T) {
	pr := status(t, checkT(t, Request{Recipe: Textbook()}), PropNoStaleWrite)
	if pr.Status != StatusBroken || pr.Explored == 0 {
		t.Errorf("no-stale-write: %s in %d schedules; want broken", pr.Status, pr.Explored)
	}
}

// TestShortPausesTogetherAreNotJudged: two pauses each inside the margin
// but together past it do not make one-holder break for the textbook
// lock, at any seed.
func TestShortPausesTogetherAreNotJudged(t *testing.T) {
	seeds := 12
	if raceCPUFactor > 1 {
		seeds = 3
	}
	for seed := range seeds {
		rep, err := Check(context.Background(), Request{Recipe: Textbook(), Seed: uint64(seed + 1)}, Budget{Random: 128})
		if err != nil {
			t.Fatal(err)
		}
		if pr := status(t, rep, PropOneHolder); pr.Status != StatusHolds {
			t.Errorf("seed %d: one-holder %s: %s (%v)", seed+1, pr.Status, ceText(pr.Counterexample), pr.Counterexample.Faults)
		}
	}
}

// TestFreesAfterCrashRealLocks: a lock whose expiry is in its value, and
// a lock whose extend adds time, both free after a crash when the TTL
// their holder set runs out.
func TestFreesAfterCrashRealLocks(t *testing.T) {
	for name, r := range map[string]Recipe{
		"value expiry (SETNX docs)": {Acquire: []string{valueExpiryAcquire}, Release: []string{valueExpiryRelease}},
		"redis-py extend adds time": {Acquire: []string{lineSetNXPX}, Release: []string{lineCompareDelete}, Extend: []string{addTimeExtend}},
		"Redisson RLock":            {Acquire: []string{redissonAcquire}, Release: []string{redissonRelease}, TakenWhen: &Decide{Line: 1, Reply: `^\(nil\)$`}},
	} {
		t.Run(name, func(t *testing.T) {
			rep := checkT(t, Request{Recipe: r})
			if !rep.Works {
				t.Fatalf("does not work: %s", rep.WorksText)
			}
			if pr := status(t, rep, PropFreesAfterCrash); pr.Status != StatusHolds {
				t.Errorf("frees-after-crash %s: %s %v", pr.Status, ceText(pr.Counterexample), pr.Counterexample.Faults)
			}
		})
	}
}

// TestRedissonHoldsALock: a lock taken when its script answers nil holds
// every property a TTL lock can.
func TestRedissonHoldsALock(t *testing.T) {
	r := Recipe{Acquire: []string{redissonAcquire}, Release: []string{redissonRelease}, TakenWhen: &Decide{Line: 1, Reply: `^\(nil\)$`}}
	wantHolds(t, checkT(t, Request{Recipe: r}), map[Property]bool{PropOneHolder: true, PropNoForeignRelease: true, PropFreesAfterCrash: true})
}

// TestTwoFaultViolationAtEverySeed: a fencing counter kept in a Redis
// without persistence lets a stale write through after a restart during
// a long pause: two faults, found whatever the seed, as the systematic
// part does not depend on it.
func TestTwoFaultViolationAtEverySeed(t *testing.T) {
	for seed := range 20 {
		rep, err := Check(context.Background(), Request{Recipe: Fenced(), Seed: uint64(seed + 1)}, Budget{Random: 1, CPU: 3 * time.Second * raceCPUFactor})
		if err != nil {
			t.Fatal(err)
		}
		pr := status(t, rep, PropNoStaleWrite)
		if pr.Status != StatusBroken || len(pr.Counterexample.Faults) != 2 {
			t.Fatalf("seed %d: no-stale-write %s; want broken by two faults", seed+1, pr.Status)
		}
		if seed == 0 {
			t.Logf("two faults: %v", pr.Counterexample.Faults)
		}
	}
}

// TestPlainPexpireFoundAtEverySeed: a renewal with a plain PEXPIRE
// breaks frees-after-crash and no-foreign-release at every seed.
func TestPlainPexpireFoundAtEverySeed(t *testing.T) {
	r := Recipe{Acquire: []string{lineSetNXPX}, Release: []string{lineCompareDelete}, Extend: []string{"PEXPIRE {key} {ttl}"}}
	for seed := range 20 {
		rep, err := Check(context.Background(), Request{Recipe: r, Seed: uint64(seed + 1)}, Budget{Random: 1, CPU: 3 * time.Second * raceCPUFactor})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []Property{PropFreesAfterCrash, PropNoForeignRelease} {
			if pr := status(t, rep, p); pr.Status != StatusBroken {
				t.Errorf("seed %d: %s %s; want broken", seed+1, p, pr.Status)
			}
		}
	}
}

// TestRecipesSayWhatRealLocksSay: a deciding line and its replies, a
// token inside a table, a renewal that answers 0.
func TestRecipesSayWhatRealLocksSay(t *testing.T) {
	getThenSet := Recipe{Acquire: []string{"GET {key}", "SET {key} {token} PX {ttl}"}, Release: []string{lineCompareDelete}, TakenWhen: &Decide{Line: 1, Reply: `^\(nil\)$`}}
	rep := checkT(t, Request{Recipe: getThenSet})
	pr := status(t, rep, PropOneHolder)
	if !rep.Works || pr.Status != StatusBroken || len(pr.Counterexample.Faults) != 1 {
		t.Errorf("GET then SET: works %v, one-holder %s; want it broken by one pause", rep.Works, pr.Status)
	}

	table := Recipe{Acquire: []string{fencedTable}, Release: []string{lineCompareDelete}, Fencing: true,
		TakenWhen: &Decide{Line: 1, Reply: `^1\) \(integer\) 1\n`}, TokenFrom: &TokenFrom{Line: 1, Element: 2}}
	rep = checkT(t, Request{Recipe: table, Model: &persistent})
	wantHolds(t, rep, map[Property]bool{PropOneHolder: true, PropNoStaleWrite: true, PropFreesAfterCrash: true, PropNoForeignRelease: true})
	ce, err := Replay(context.Background(), table, &persistent, scheduleSeed(1, 0))
	if err != nil {
		t.Fatal(err)
	}
	if ce.Events[0].Fence != 1 || !strings.Contains(ce.Events[0].Text, "fencing token 1") {
		t.Errorf("first event = %+v; want client 1 to read token 1 from the table", ce.Events[0].Event)
	}

	// python-redis-lock's extend answers 0 when it renewed the lock.
	zero := `EVAL "if redis.call('get', KEYS[1]) ~= ARGV[1] then return 1 elseif redis.call('ttl', KEYS[1]) < 0 then return 2 else redis.call('pexpire', KEYS[1], ARGV[2]) return 0 end" 1 {key} {token} {ttl}`
	r := Recipe{Acquire: []string{lineSetNXPX}, Release: []string{lineCompareDelete}, Extend: []string{zero}, RenewedWhen: &Decide{Line: 1, Reply: `^\(integer\) 0$`}}
	rep = checkT(t, Request{Recipe: r})
	if !rep.Works {
		t.Errorf("renewed when 0: works = false: %s", rep.WorksText)
	}
	wantHolds(t, rep, map[Property]bool{PropOneHolder: true, PropNoForeignRelease: true, PropFreesAfterCrash: true})
}

// TestNarrationMatchesReplies: the renewal says the TTL the key has, and
// a successful release's second line is not "no longer its own".
func TestNarrationMatchesReplies(t *testing.T) {
	r := Recipe{Acquire: []string{lineSetNXPX}, Release: []string{"GET {key}", "DEL {key}"}, Extend: []string{addTimeExtend}}
	ce, err := Replay(context.Background(), r, nil, scheduleSeed(1, 0))
	if err != nil {
		t.Fatal(err)
	}
	var renewed, released bool
	for _, e := range ce.Events {
		switch e.Kind {
		case "extend-ok":
			renewed = true
			// 150 ms into a 2000 ms lock, adding 2000 ms leaves 3850 ms.
			if !strings.Contains(e.Text, "TTL is now 3850 ms") {
				t.Errorf("renewal narrated as %q; want the key's TTL after it, 3850 ms", e.Text)
			}
		case "release-ok":
			released = true
		}
		if strings.Contains(e.Text, "no longer its own") {
			t.Errorf("fault-free schedule says %q", e.Text)
		}
	}
	if !renewed || !released {
		t.Errorf("renewed %v, released %v; want both in the schedule without faults", renewed, released)
	}
}

func TestDecideValidation(t *testing.T) {
	ok := []string{lineCompareDelete}
	for _, tt := range []struct {
		r    Recipe
		want string
	}{
		{Recipe{Acquire: []string{lineSetNXPX}, Release: ok, TakenWhen: &Decide{Line: 2, Reply: "^OK$"}}, "taken_when.line 2"},
		{Recipe{Acquire: []string{lineSetNXPX}, Release: ok, RenewedWhen: &Decide{Line: 1, Reply: "^OK$"}}, "extend, which has none"},
		{Recipe{Acquire: []string{lineSetNXPX}, Release: ok, ReleasedWhen: &Decide{Line: -1, Reply: "(("}}, "not a regular expression"},
		{Recipe{Acquire: []string{lineSetNXPX}, Release: ok, TakenWhen: &Decide{Line: 1, Reply: ""}}, "empty"},
		{Recipe{Acquire: []string{lineSetNXPX}, Release: ok, TakenWhen: &Decide{Line: 1, Reply: strings.Repeat("a", MaxPatternBytes+1)}}, "at most"},
		{Recipe{Acquire: []string{lineSetNXPX}, Release: ok, TokenFrom: &TokenFrom{Line: 1, Element: MaxElement + 1}}, "token_from.element"},
	} {
		if err := tt.r.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Validate() = %v; want an error saying %q", err, tt.want)
		}
	}
}

// TestShrinkVariants: a random plan's variants drop its faults and its
// third client, and each is replayable under its own number.
func TestShrinkVariants(t *testing.T) {
	p := plan{clients: 3, random: true, faults: []fault{
		{kind: faultPause, client: 0, step: 1, d: ttl},
		{kind: faultCrash, client: 2, step: 0},
		{kind: faultDelay, client: 1, step: 0, d: ttl},
	}}
	for _, tt := range []struct {
		v       int
		ok      bool
		faults  int
		clients int
	}{
		{0, true, 3, 3}, {1, true, 2, 3}, {7, true, 0, 3}, {8, true, 2, 2}, {9, true, 1, 2}, {10, false, 0, 0},
	} {
		got, ok := shrink(p, tt.v)
		if ok != tt.ok || (ok && (len(got.faults) != tt.faults || got.clients != tt.clients)) {
			t.Errorf("shrink(v=%d) = %d faults, %d clients, %v; want %d, %d, %v", tt.v, len(got.faults), got.clients, ok, tt.faults, tt.clients, tt.ok)
		}
	}
	two := plan{clients: 2, random: true, faults: []fault{{kind: faultCrash, client: 0, step: 0}}}
	if _, ok := shrink(two, 8); ok {
		t.Error("dropping the third client of a two-client plan is a variant")
	}
	if _, ok := shrink(two, 2); ok {
		t.Error("dropping a second fault of a one-fault plan is a variant")
	}
	// A variant's number replays it.
	r := Textbook()
	m := DefaultModel()
	sp := newSpace(r, m)
	for v := range variants {
		want, ok := sp.randomOf(r, m, 3, sp.randomNumber(5, v))
		if !ok {
			continue
		}
		ce, err := Replay(context.Background(), r, nil, scheduleSeed(3, sp.randomNumber(5, v)))
		if err != nil {
			t.Fatal(err)
		}
		if len(ce.Faults) != len(want.faults) || len(ce.Lanes)-2 != want.clients {
			t.Errorf("variant %d replayed with %d faults and %d clients; want %d and %d", v, len(ce.Faults), len(ce.Lanes)-2, len(want.faults), want.clients)
		}
	}
}

// TestRealWorldPatterns judges locks written as public projects write
// them, each expected to hold or break as its scripts say.
func TestRealWorldPatterns(t *testing.T) {
	release := lineCompareDelete
	for _, tt := range []struct {
		name  string
		r     Recipe
		holds map[Property]bool
	}{
		{
			// Re-entrant: the holder may take its own lock again.
			name: "re-entrant SET: own token renews, else SET NX PX",
			r: Recipe{Acquire: []string{`EVAL "if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 'OK' else return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) end" 1 {key} {token} {ttl}`},
				Release: []string{release}},
			holds: map[Property]bool{PropOneHolder: true, PropNoForeignRelease: true, PropFreesAfterCrash: true},
		},
		{
			// A script that answers the string "OK" or "FAIL".
			name: `script answering "OK" or "FAIL"`,
			r: Recipe{Acquire: []string{`EVAL "local val = redis.call('get', KEYS[1]) if not val or val == ARGV[1] then redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 'OK' else return 'FAIL' end" 1 {key} {token} {ttl}`},
				Release: []string{release}, TakenWhen: &Decide{Line: 1, Reply: `^"OK"$`}},
			holds: map[Property]bool{PropOneHolder: true, PropNoForeignRelease: true, PropFreesAfterCrash: true},
		},
		{
			// A hash per holder, with a TTL in seconds.
			name: "HSET holder with EXPIRE in seconds",
			r: Recipe{Acquire: []string{`EVAL "if redis.call('exists', KEYS[1]) == 0 then redis.call('hset', KEYS[1], ARGV[1], 1) redis.call('expire', KEYS[1], ARGV[2]) return 1 end if redis.call('hexists', KEYS[1], ARGV[1]) == 1 then redis.call('hincrby', KEYS[1], ARGV[1], 1) redis.call('expire', KEYS[1], ARGV[2]) return 1 end return 0" 1 {key} {token} {ttl_s}`},
				Release: []string{`EVAL "if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then return 0 end redis.call('del', KEYS[1]) return 1" 1 {key} {token}`}},
			holds: map[Property]bool{PropOneHolder: true, PropNoForeignRelease: true, PropFreesAfterCrash: true},
		},
		{
			// The same, but the renewal is a plain EXPIRE.
			name: "HSET holder renewed with a plain EXPIRE",
			r: Recipe{Acquire: []string{`EVAL "if redis.call('exists', KEYS[1]) == 0 then redis.call('hset', KEYS[1], ARGV[1], 1) redis.call('pexpire', KEYS[1], ARGV[2]) return 1 end return 0" 1 {key} {token} {ttl}`},
				Release: []string{`EVAL "if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then return 0 end redis.call('del', KEYS[1]) return 1" 1 {key} {token}`},
				Extend:  []string{"PEXPIRE {key} {ttl}"}},
			holds: map[Property]bool{PropNoForeignRelease: false},
		},
		{
			// Check-then-act on the client: EXISTS, then SET.
			name:  "EXISTS, then SET",
			r:     Recipe{Acquire: []string{"EXISTS {key}", "SET {key} {token} PX {ttl}"}, Release: []string{release}, TakenWhen: &Decide{Line: 1, Reply: `^\(integer\) 0$`}},
			holds: map[Property]bool{PropOneHolder: false},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rep := checkT(t, Request{Recipe: tt.r})
			if !rep.Works {
				t.Fatalf("does not work: %s", rep.WorksText)
			}
			wantHolds(t, rep, tt.holds)
		})
	}
}
