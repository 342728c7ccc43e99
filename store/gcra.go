package store

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// bucket is one limit kept in Redis as a GCRA (generic cell rate
// algorithm): a unit comes back every `every`, up to burst, and each key
// stores only the time at which its bucket will be full again.
type bucket struct {
	every  time.Duration
	burst  int
	prefix string
}

// newBucket is the bucket of n units every per, up to burst, its keys
// under prefix ("l:" for limiters, "m:" for meters). A unit comes back
// every per/n, at least a microsecond (the script's clock).
func newBucket(n int, per time.Duration, burst int, prefix string) bucket {
	return bucket{every: max(per/time.Duration(max(n, 1)), time.Microsecond), burst: burst, prefix: prefix}
}

// bucketAsk is one key of a bucket in a batch: it must hold need units,
// and then gives up take (or all it holds, if that is fewer).
type bucketAsk struct {
	b          bucket
	key        string
	need, take int
}

// gcraScript answers a batch of buckets at once, on Redis's clock.
// KEYS = one per bucket; ARGV = for each, the microseconds a unit takes to
// come back, the burst, the units it must hold and the units to take.
//
// A key holds the time, in microseconds, at which its bucket is full again
// (the "theoretical arrival time"), and expires then; a key with no value
// or an older time is full. A bucket holds burst less the units still to
// come back. Nothing is written unless every key holds what it must. It
// returns the position of the first key that did not (0 if none), then
// what each key held, up to that one.
var gcraScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local held, full = {0}, {}
for i = 1, #KEYS do
  local a = 4 * (i - 1)
  local every, burst = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
  local tat = math.max(tonumber(redis.call('GET', KEYS[i]) or 0) or 0, now)
  local have = math.max(math.floor((burst * every - (tat - now)) / every), 0)
  held[i + 1] = have
  if have < tonumber(ARGV[a + 3]) then
    held[1] = i
    return held
  end
  full[i] = tat + math.min(tonumber(ARGV[a + 4]), have) * every
end
for i = 1, #KEYS do
  if tonumber(ARGV[4 * i]) > 0 and full[i] > now then
    redis.call('SET', KEYS[i], string.format('%d', full[i]), 'PX', math.ceil((full[i] - now) / 1000))
  end
end
return held`)

// gcraPrefix is where the buckets' keys live.
const gcraPrefix = "gcra:"

// gcra runs q in one call of gcraScript. It returns the index of the ask
// that refused (-1 if none) and what each key held, up to that one.
func (r *redisBackend) gcra(ctx context.Context, q []bucketAsk) (refused int, have []int, err error) {
	keys := make([]string, len(q))
	args := make([]any, 0, 4*len(q))
	for i, a := range q {
		keys[i] = r.prefix + gcraPrefix + a.b.prefix + a.key
		args = append(args, a.b.every.Microseconds(), a.b.burst, a.need, a.take)
	}
	vals, err := gcraScript.Run(ctx, r.rdb, keys, args...).Int64Slice()
	if err != nil {
		return -1, nil, err
	}
	if len(vals) == 0 || vals[0] < 0 || int(vals[0]) > len(q) || len(vals)-1 > len(q) {
		return -1, nil, fmt.Errorf("limit script answered %v for %d keys", vals, len(q))
	}
	have = make([]int, len(q))
	for i, v := range vals[1:] {
		have[i] = int(v)
	}
	return int(vals[0]) - 1, have, nil
}
