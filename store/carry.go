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
// learner's current code and expires with it. Each step is one script, so
// it is atomic however many replicas ask at once.
var (
	putCarryScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local old = redis.call('GET', KEYS[2])
if old and old ~= ARGV[4] then
  local k = ARGV[5] .. old
  if redis.call('HGET', k, 'learner') == ARGV[1] then redis.call('DEL', k) end
end
redis.call('HSET', KEYS[1], 'learner', ARGV[1], 'exp', ARGV[2])
redis.call('PEXPIREAT', KEYS[1], ARGV[3])
redis.call('SET', KEYS[2], ARGV[4])
redis.call('PEXPIREAT', KEYS[2], ARGV[2])
return 1`)
	liveCarryScript = redis.NewScript(`
local code = redis.call('GET', KEYS[1])
if not code then return false end
local v = redis.call('HMGET', ARGV[1] .. code, 'learner', 'exp', 'used')
return {code, v[1] or '', v[2] or '', v[3] or ''}`)
	takeCarryScript = redis.NewScript(`
local v = redis.call('HMGET', KEYS[1], 'learner', 'exp', 'used')
if not v[2] then return {'unknown'} end
if v[3] then return {'used'} end
if tonumber(v[2]) <= tonumber(ARGV[1]) then return {'expired'} end
redis.call('HSET', KEYS[1], 'used', '1')
redis.call('HDEL', KEYS[1], 'learner')
local by = ARGV[2] .. v[1]
if redis.call('GET', by) == ARGV[3] then redis.call('DEL', by) end
return {'ok', v[1], v[2]}`)
)

func (r *redisBackend) carryKey(code string) string      { return r.prefix + "carry:" + code }
func (r *redisBackend) carryByKey(learner string) string { return r.prefix + "carry-by:" + learner }

func (r *redisBackend) putCarry(ctx context.Context, code string, t carry.Ticket) error {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	exp := t.Expires.UnixMilli()
	ok, err := putCarryScript.Run(ctx, r.rdb, []string{r.carryKey(code), r.carryByKey(t.Learner)},
		t.Learner, exp, t.Expires.Add(carryGrace).UnixMilli(), code, r.prefix+"carry:").Int()
	if err != nil {
		return unavailable(err)
	}
	if ok == 0 {
		return carry.ErrTaken
	}
	return nil
}

func (r *redisBackend) liveCarry(ctx context.Context, learner string, now time.Time) (string, carry.Ticket, error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	v, err := liveCarryScript.Run(ctx, r.rdb, []string{r.carryByKey(learner)}, r.prefix+"carry:").StringSlice()
	if errors.Is(err, redis.Nil) {
		return "", carry.Ticket{}, carry.ErrUnknown
	}
	if err != nil {
		return "", carry.Ticket{}, unavailable(err)
	}
	if len(v) != 4 || v[1] != learner || v[3] != "" {
		return "", carry.Ticket{}, carry.ErrUnknown
	}
	exp, ok := parseMillis(v[2])
	if !ok || !now.Before(exp) {
		return "", carry.Ticket{}, carry.ErrUnknown
	}
	return v[0], carry.Ticket{Learner: learner, Expires: exp}, nil
}

func (r *redisBackend) takeCarry(ctx context.Context, code string, now time.Time) (carry.Ticket, error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	v, err := takeCarryScript.Run(ctx, r.rdb, []string{r.carryKey(code)}, now.UnixMilli(), r.prefix+"carry-by:", code).StringSlice()
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
	return carry.Ticket{Learner: v[1], Expires: exp}, nil
}

func parseMillis(s string) (time.Time, bool) {
	ms, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.UnixMilli(ms), true
}
