package store

// Transfer codes that carry a learner's progress to another device (the
// rules are package carry's). Each code is kept until it expires plus
// carryGrace, so that a learner who types a used or expired code is told
// which it was; then it is dropped (by Redis's own expiry, or by the bolt
// store's sweep). Each learner has at most one current code: a new one
// drops the previous.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	bolt "go.etcd.io/bbolt"

	"github.com/locklab/locklab/carry"
)

// carryGrace is how long a used or expired code is remembered.
const carryGrace = time.Hour

// carryBackend is what a back end does for transfer codes.
type carryBackend interface {
	putCarry(ctx context.Context, code string, t carry.Ticket) error
	liveCarry(ctx context.Context, learner string, now time.Time) (string, carry.Ticket, error)
	takeCarry(ctx context.Context, code string, now time.Time) (carry.Ticket, error)
}

func checkCarryCode(code string) error {
	if _, err := carry.Parse(code); err != nil || len(code) != carry.Length {
		return fmt.Errorf("carry code %q: %w", code, carry.ErrMalformed)
	}
	return nil
}

// PutCarryCode keeps a new code for t.Learner (carry.Store).
func (s *Store) PutCarryCode(ctx context.Context, code string, t carry.Ticket) error {
	if err := checkCarryCode(code); err != nil {
		return err
	}
	if err := checkLearner(t.Learner); err != nil {
		return err
	}
	if err := s.b.putCarry(ctx, code, t); err != nil {
		return fmt.Errorf("store: put carry code: %w", err)
	}
	return nil
}

// LiveCarryCode returns the learner's current usable code (carry.Store).
func (s *Store) LiveCarryCode(ctx context.Context, learner string, now time.Time) (string, carry.Ticket, error) {
	if err := checkLearner(learner); err != nil {
		return "", carry.Ticket{}, err
	}
	code, t, err := s.b.liveCarry(ctx, learner, now)
	if err != nil {
		return "", carry.Ticket{}, fmt.Errorf("store: live carry code: %w", err)
	}
	return code, t, nil
}

// TakeCarryCode uses a code up, once (carry.Store).
func (s *Store) TakeCarryCode(ctx context.Context, code string, now time.Time) (carry.Ticket, error) {
	if err := checkCarryCode(code); err != nil {
		return carry.Ticket{}, err
	}
	t, err := s.b.takeCarry(ctx, code, now)
	if err != nil {
		return carry.Ticket{}, fmt.Errorf("store: take carry code: %w", err)
	}
	return t, nil
}

// Bolt: carryBucket maps a code to its record (8 bytes of expiry in Unix
// milliseconds, a used flag, then the learner id, emptied once used);
// carryByBucket maps a learner to their current code.
var (
	carryBucket   = []byte("carry-codes")
	carryByBucket = []byte("carry-codes-by-learner")
)

type carryRecord struct {
	expires time.Time
	used    bool
	learner string
}

func (r carryRecord) bytes() []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(r.expires.UnixMilli()))
	used := byte(0)
	if r.used {
		used = 1
	}
	return append(append(b, used), r.learner...)
}

func parseCarryRecord(v []byte) (carryRecord, bool) {
	if len(v) < 9 {
		return carryRecord{}, false
	}
	return carryRecord{
		expires: time.UnixMilli(int64(binary.BigEndian.Uint64(v))),
		used:    v[8] == 1,
		learner: string(v[9:]),
	}, true
}

func (b *boltBackend) putCarry(_ context.Context, code string, t carry.Ticket) error {
	return b.db.Update(func(tx *bolt.Tx) error {
		codes, by := tx.Bucket(carryBucket), tx.Bucket(carryByBucket)
		if codes.Get([]byte(code)) != nil {
			return carry.ErrTaken
		}
		if old := by.Get([]byte(t.Learner)); old != nil {
			if r, ok := parseCarryRecord(codes.Get(old)); ok && r.learner == t.Learner && !r.used {
				if err := codes.Delete(old); err != nil {
					return err
				}
			}
		}
		if err := codes.Put([]byte(code), carryRecord{expires: t.Expires, learner: t.Learner}.bytes()); err != nil {
			return err
		}
		// A learner who carries their progress elsewhere means to keep
		// it: the size cap never drops them for room.
		if err := keepLearner(tx, []byte(t.Learner), keptCarried); err != nil {
			return err
		}
		return by.Put([]byte(t.Learner), []byte(code))
	})
}

func (b *boltBackend) liveCarry(_ context.Context, learner string, now time.Time) (string, carry.Ticket, error) {
	var code string
	var t carry.Ticket
	err := b.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(carryByBucket).Get([]byte(learner))
		r, ok := parseCarryRecord(tx.Bucket(carryBucket).Get(c))
		if c == nil || !ok || r.used || r.learner != learner || !now.Before(r.expires) {
			return carry.ErrUnknown
		}
		code, t = string(c), carry.Ticket{Learner: learner, Expires: r.expires}
		return nil
	})
	return code, t, err
}

func (b *boltBackend) takeCarry(_ context.Context, code string, now time.Time) (carry.Ticket, error) {
	var t carry.Ticket
	err := b.db.Update(func(tx *bolt.Tx) error {
		codes, by := tx.Bucket(carryBucket), tx.Bucket(carryByBucket)
		r, ok := parseCarryRecord(codes.Get([]byte(code)))
		switch {
		case !ok:
			return carry.ErrUnknown
		case r.used:
			return carry.ErrUsed
		case !now.Before(r.expires):
			return carry.ErrExpired
		}
		t = carry.Ticket{Learner: r.learner, Expires: r.expires}
		if string(by.Get([]byte(r.learner))) == code {
			if err := by.Delete([]byte(r.learner)); err != nil {
				return err
			}
		}
		// The owner's id is not kept past its use.
		return codes.Put([]byte(code), carryRecord{expires: r.expires, used: true}.bytes())
	})
	return t, err
}

// Redis: "carry:<code>" is a hash (learner, exp in Unix ms, used) that
// Redis drops carryGrace after it expires; "carry-by:<learner>" names the
// learner's current code and expires with it. The two are in different
// slots of a cluster, so no script touches both: each step is a script on
// one key, atomic however many replicas ask at once, and the steps are
// ordered so that one cut short leaves nothing a learner can misuse (a
// code replaced but not yet dropped expires; a learner's pointer to a used
// code reads as no code).
var (
	// putCarryScript creates a code for a learner unless it exists.
	// KEYS = code; ARGV = learner, exp ms, drop at ms.
	putCarryScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'learner', ARGV[1], 'exp', ARGV[2])
redis.call('PEXPIREAT', KEYS[1], ARGV[3])
return 1`)
	// pointCarryScript makes code the learner's current one and returns
	// the one it replaces. KEYS = carry-by; ARGV = code, exp ms.
	pointCarryScript = redis.NewScript(`
local old = redis.call('GET', KEYS[1])
redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[2])
return old`)
	// dropCarryScript deletes a replaced code, if it is still the
	// learner's. KEYS = code; ARGV = learner.
	dropCarryScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'learner') == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1`)
	// takeCarryScript uses a code once. KEYS = code; ARGV = now ms.
	takeCarryScript = redis.NewScript(`
local v = redis.call('HMGET', KEYS[1], 'learner', 'exp', 'used')
if not v[2] then return {'unknown'} end
if v[3] then return {'used'} end
if tonumber(v[2]) <= tonumber(ARGV[1]) then return {'expired'} end
redis.call('HSET', KEYS[1], 'used', '1')
redis.call('HDEL', KEYS[1], 'learner')
return {'ok', v[1], v[2]}`)
	// unpointCarryScript forgets a learner's code once used, if it is
	// still their current one. KEYS = carry-by; ARGV = code.
	unpointCarryScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1`)
)

func (r *redisBackend) carryKey(code string) string      { return r.prefix + "carry:" + code }
func (r *redisBackend) carryByKey(learner string) string { return r.prefix + "carry-by:" + learner }

func (r *redisBackend) putCarry(ctx context.Context, code string, t carry.Ticket) error {
	ctx, cancel := context.WithTimeout(ctx, r.opTimeout)
	defer cancel()
	exp := t.Expires.UnixMilli()
	ok, err := r.write(ctx, putCarryScript, []string{r.carryKey(code)}, t.Learner, exp, t.Expires.Add(carryGrace).UnixMilli()).Int()
	if err != nil {
		return unavailable(err)
	}
	if ok == 0 {
		return carry.ErrTaken
	}
	old, err := r.write(ctx, pointCarryScript, []string{r.carryByKey(t.Learner)}, code, exp).Text()
	if errors.Is(err, redis.Nil) {
		return nil
	}
	if err != nil {
		return unavailable(err)
	}
	if old != code {
		// The learner's earlier code goes: one live code per learner.
		err = dropCarryScript.Run(ctx, r.rdb, []string{r.carryKey(old)}, t.Learner).Err()
	}
	return unavailable(err)
}

func (r *redisBackend) liveCarry(ctx context.Context, learner string, now time.Time) (string, carry.Ticket, error) {
	ctx, cancel := context.WithTimeout(ctx, r.opTimeout)
	defer cancel()
	code, err := r.rdb.Get(ctx, r.carryByKey(learner)).Result()
	if errors.Is(err, redis.Nil) {
		return "", carry.Ticket{}, carry.ErrUnknown
	}
	if err != nil {
		return "", carry.Ticket{}, unavailable(err)
	}
	v, err := r.rdb.HMGet(ctx, r.carryKey(code), "learner", "exp", "used").Result()
	if err != nil {
		return "", carry.Ticket{}, unavailable(err)
	}
	owner, _ := v[0].(string)
	expires, _ := v[1].(string)
	if owner != learner || v[2] != nil {
		return "", carry.Ticket{}, carry.ErrUnknown
	}
	exp, ok := parseMillis(expires)
	if !ok || !now.Before(exp) {
		return "", carry.Ticket{}, carry.ErrUnknown
	}
	return code, carry.Ticket{Learner: learner, Expires: exp}, nil
}

func (r *redisBackend) takeCarry(ctx context.Context, code string, now time.Time) (carry.Ticket, error) {
	ctx, cancel := context.WithTimeout(ctx, r.opTimeout)
	defer cancel()
	v, err := r.write(ctx, takeCarryScript, []string{r.carryKey(code)}, now.UnixMilli()).StringSlice()
	if err != nil {
		return carry.Ticket{}, unavailable(err)
	}
	switch v[0] {
	case "unknown":
		return carry.Ticket{}, carry.ErrUnknown
	case "used":
		return carry.Ticket{}, carry.ErrUsed
	case "expired":
		return carry.Ticket{}, carry.ErrExpired
	}
	if len(v) != 3 {
		return carry.Ticket{}, fmt.Errorf("%w: unexpected reply %q", ErrUnavailable, v)
	}
	exp, _ := parseMillis(v[2])
	// The code is used; the learner's pointer to it is tidied after. If
	// that fails, the pointer names a used code, which reads as none.
	_ = unpointCarryScript.Run(ctx, r.rdb, []string{r.carryByKey(v[1])}, code).Err()
	return carry.Ticket{Learner: v[1], Expires: exp}, nil
}

func parseMillis(s string) (time.Time, bool) {
	ms, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.UnixMilli(ms), true
}
