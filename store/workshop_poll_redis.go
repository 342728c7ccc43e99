package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/workshop"
)

// Polls on Redis: see wsKeys for where they live. Every write is one
// script, so a prediction's swap of old counts for new ones cannot be
// split by a replica's write of the same learner, and a reveal closes
// predictions at one instant for every replica.

// openPollScript: KEYS = wsKeys; ARGV = poll id, poll JSON, choices,
// ttl ms, most polls.
const openPollScript = `
if redis.call('HEXISTS', KEYS[1], 'started') == 0 then return -1 end
if redis.call('HEXISTS', KEYS[1], 'ended') == 1 then return -3 end
if tonumber(redis.call('HGET', KEYS[1], 'polls') or '0') >= tonumber(ARGV[5]) then return -9 end
if redis.call('HEXISTS', KEYS[9], ARGV[1]) == 1 then return -2 end
redis.call('HINCRBY', KEYS[1], 'polls', 1)
redis.call('HSET', KEYS[1], 'poll', ARGV[1])
redis.call('HSET', KEYS[9], ARGV[1], ARGV[2], ARGV[1] .. '/choices', ARGV[3])
redis.call('HINCRBY', KEYS[1], 'v', 1)
for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ARGV[4]) end
return 1
`

// predictScript stores a prediction and adds its tally to the poll's
// counters, both worked out by package workshop; the script only guards
// them. It reads the workshop.PredictState of the prediction and returns
// predictStateBase plus its Bits, changing nothing, unless ARGV[8] allows
// that state; it returns scriptChanged if the learner's stored prediction
// is no longer the one the tally replaces.
// KEYS = wsKeys; ARGV = poll id, learner, at, ttl ms, the prediction as
// stored, the stored prediction it replaces (empty for none), the verdict
// ('ok'; 'bad' if workshop refused the prediction; 'unread' if the poll
// was not there to check it against), the states that allow a prediction
// (one '1' or '0' for each state's Bits, from 0), then counter and change
// pairs.
const predictScript = `
local state = 0
if redis.call('HEXISTS', KEYS[1], 'started') == 1 then state = state + 1 end
if redis.call('HEXISTS', KEYS[1], 'ended') == 1 then state = state + 2 end
if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 1 then state = state + 4 end
if redis.call('HEXISTS', KEYS[9], ARGV[1]) == 1 then state = state + 8 end
if redis.call('HEXISTS', KEYS[9], ARGV[1] .. '/revealed') == 1 then state = state + 16 end
if string.sub(ARGV[8], state + 1, state + 1) ~= '1' then return 100 + state end
if ARGV[7] == 'bad' then return -8 end
if ARGV[7] ~= 'ok' then return -14 end
local field = ARGV[1] .. '/' .. ARGV[2]
if (redis.call('HGET', KEYS[10], field) or '') ~= ARGV[6] then return -14 end
for i = 9, #ARGV, 2 do redis.call('HINCRBY', KEYS[11], ARGV[1] .. '/' .. ARGV[i], ARGV[i + 1]) end
redis.call('HSET', KEYS[10], field, ARGV[5])
local last = redis.call('HGET', KEYS[4], ARGV[2])
if not last or tonumber(last) < tonumber(ARGV[3]) then
  redis.call('HSET', KEYS[4], ARGV[2], ARGV[3])
end
for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ARGV[4]) end
return 1
`

// predictStateBase is added to a workshop.PredictState's Bits when
// predictScript returns it.
const predictStateBase = 100

// predictAllowed is predictScript's ARGV[8]: a '1' at each state's Bits
// in which workshop allows a prediction, a '0' at every other.
var predictAllowed = func() string {
	b := make([]byte, workshop.PredictStates)
	for n := range b {
		b[n] = '0'
		if workshop.PredictStateOf(n).MayPredict() == nil {
			b[n] = '1'
		}
	}
	return string(b)
}()

// revealScript: KEYS = wsKeys; ARGV = poll id, at, ttl ms.
const revealScript = `
if redis.call('HEXISTS', KEYS[1], 'started') == 0 then return -1 end
if redis.call('HEXISTS', KEYS[9], ARGV[1]) == 0 then return -6 end
redis.call('HSETNX', KEYS[9], ARGV[1] .. '/revealed', ARGV[2])
redis.call('HINCRBY', KEYS[1], 'v', 1)
for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ARGV[3]) end
return 1
`

// pollResultScript reads one poll and only its own counters, whatever
// the number of participants: KEYS = wsKeys; ARGV = poll id, or ” for
// the current one. It returns {found, id, JSON, revealed, participants,
// answered, then outcome and count pairs}; found is -1 for no workshop,
// 0 for no poll.
const pollResultScript = `
if redis.call('HEXISTS', KEYS[1], 'started') == 0 then return {-1} end
local id = ARGV[1]
if id == '' then id = redis.call('HGET', KEYS[1], 'poll') or '' end
if id == '' then return {0} end
local js = redis.call('HGET', KEYS[9], id)
if not js then return {0} end
local out = {1, id, js, redis.call('HGET', KEYS[9], id .. '/revealed') or '',
  redis.call('HLEN', KEYS[2]), redis.call('HGET', KEYS[11], id .. '/#answered') or '0'}
local choices = redis.call('HGET', KEYS[9], id .. '/choices') or ''
for o in string.gmatch(choices, '[^,]+') do
  out[#out + 1] = o
  out[#out + 1] = redis.call('HGET', KEYS[11], id .. '/' .. o) or '0'
end
return out
`

// learnerScript: KEYS = wsKeys; ARGV = learner. It returns {found,
// title, started, ended, nickname, poll JSON, revealed, prediction};
// found is -1 for no workshop, -5 for a learner who has not joined it.
const learnerScript = `
if redis.call('HEXISTS', KEYS[1], 'started') == 0 then return {-1} end
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then return {-5} end
local m = redis.call('HMGET', KEYS[1], 'title', 'started', 'ended', 'poll')
local out = {1, m[1], m[2], m[3] or '', redis.call('HGET', KEYS[3], ARGV[1]) or ''}
local id = m[4]
if not id then return out end
out[6] = redis.call('HGET', KEYS[9], id) or ''
out[7] = redis.call('HGET', KEYS[9], id .. '/revealed') or ''
out[8] = redis.call('HGET', KEYS[10], id .. '/' .. ARGV[1]) or ''
return out
`

func (r *redisBackend) openPoll(ctx context.Context, code string, p workshop.Poll, limit int) error {
	ctx, cancel := context.WithTimeout(ctx, r.opTimeout)
	defer cancel()
	js, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return r.run(ctx, openPollScript, r.wsKeys(code), p.ID, js, choiceIDs(p), ttlMillis(), limit)
}

// choiceIDs is a poll's outcome ids joined by commas, as pollResultScript
// reads the poll's counters by them.
func choiceIDs(p workshop.Poll) string { return workshop.JoinPrediction(choiceList(p)) }

// choiceList is a poll's outcome ids.
func choiceList(p workshop.Poll) []string {
	ids := make([]string, len(p.Choices))
	for i, c := range p.Choices {
		ids[i] = c.ID
	}
	return ids
}

// maxTallyTries bounds how often a prediction or a removal is worked out
// again when the same learner's prediction changed on another replica
// between reading it and writing.
const maxTallyTries = 5

func (r *redisBackend) predict(ctx context.Context, code, id, learner string, prediction []string, at int64) error {
	ctx, cancel := context.WithTimeout(ctx, r.opTimeout)
	defer cancel()
	keys := r.wsKeys(code)
	for range maxTallyTries {
		// A poll's choices never change once it is open, so it is read
		// before the script; the stored prediction is read too, and the
		// script writes only if it is still the same.
		var js, old *redis.StringCmd
		_, _ = r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			js = p.HGet(ctx, keys[wsKeyPolls], id)
			old = p.HGet(ctx, keys[wsKeyPicks], id+"/"+learner)
			return nil
		})
		for _, c := range []*redis.StringCmd{js, old} {
			if err := c.Err(); err != nil && !errors.Is(err, redis.Nil) {
				return unavailable(err)
			}
		}
		args := []any{id, learner, at, ttlMillis(), "", old.Val(), "unread", predictAllowed}
		if js.Val() != "" { // else the script reports what is missing
			p, err := decodePoll(js.Val(), "")
			if err != nil {
				return fmt.Errorf("workshop %s: %w", code, err)
			}
			set, err := p.CheckPrediction(prediction)
			if err != nil {
				args[6] = "bad"
			} else {
				args[4], args[6] = workshop.JoinPrediction(set), "ok"
				for name, n := range workshop.Tally(workshop.SplitPrediction(old.Val()), set) {
					args = append(args, name, n)
				}
			}
		}
		n, err := r.write(ctx, redis.NewScript(predictScript), keys, args...).Int()
		if err != nil {
			return unavailable(err)
		}
		if n >= predictStateBase {
			if err := workshop.PredictStateOf(n - predictStateBase).MayPredict(); err != nil {
				return err
			}
			return fmt.Errorf("poll %s: prediction refused in a state that allows it (%d)", id, n-predictStateBase)
		}
		if err := scriptErr(n); !errors.Is(err, errChanged) {
			return err
		}
	}
	return unavailable(fmt.Errorf("poll %s: prediction of %s kept changing: %w", id, learner, errChanged))
}

func (r *redisBackend) revealPoll(ctx context.Context, code, id string, at int64) error {
	ctx, cancel := context.WithTimeout(ctx, r.opTimeout)
	defer cancel()
	return r.run(ctx, revealScript, r.wsKeys(code), id, at, ttlMillis())
}

// decodePoll reads a poll's JSON and its reveal time (Unix ms, or "").
func decodePoll(js, revealed string) (workshop.Poll, error) {
	p, ok := decodedPolls.get(js)
	if !ok {
		if err := json.Unmarshal([]byte(js), &p); err != nil {
			return p, fmt.Errorf("poll: %w", err)
		}
		p.OpenedAt = fromMillis(p.OpenedAt.UnixMilli())
		p.RevealedAt = time.Time{}
		decodedPolls.put(js, p)
	}
	if revealed != "" {
		ms, err := strconv.ParseInt(revealed, 10, 64)
		if err != nil {
			return p, fmt.Errorf("poll %s reveal time: %w", p.ID, err)
		}
		p.RevealedAt = fromMillis(ms)
	}
	return p, nil
}

func (r *redisBackend) pollResult(ctx context.Context, code, id string) (workshop.PollResult, error) {
	ctx, cancel := context.WithTimeout(ctx, r.opTimeout)
	defer cancel()
	vals, err := redis.NewScript(pollResultScript).Run(ctx, r.rdb, r.wsKeys(code), id).Slice()
	if err != nil {
		return workshop.PollResult{}, unavailable(err)
	}
	switch fmt.Sprint(vals[0]) {
	case "-1":
		return workshop.PollResult{}, workshop.ErrNotFound
	case "0":
		return workshop.PollResult{}, workshop.ErrNoPoll
	}
	if len(vals) < 6 {
		return workshop.PollResult{}, fmt.Errorf("poll script returned %d values", len(vals))
	}
	p, err := decodePoll(fmt.Sprint(vals[2]), fmt.Sprint(vals[3]))
	if err != nil {
		return workshop.PollResult{}, err
	}
	ints := func(v any) int { n, _ := strconv.Atoi(fmt.Sprint(v)); return n }
	counters := map[string]int{workshop.AnsweredCounter: ints(vals[5])}
	for i := 6; i+1 < len(vals); i += 2 {
		counters[fmt.Sprint(vals[i])] = ints(vals[i+1])
	}
	return p.Result(counters, ints(vals[4])), nil
}

func (r *redisBackend) polls(ctx context.Context, code string) ([]workshop.PollResult, error) {
	ctx, cancel := context.WithTimeout(ctx, r.opTimeout)
	defer cancel()
	keys := r.wsKeys(code)
	var (
		started       *redis.BoolCmd
		polls, counts *redis.MapStringStringCmd
		joined        *redis.IntCmd
	)
	_, err := r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		started = p.HExists(ctx, keys[wsKeyMeta], "started")
		polls = p.HGetAll(ctx, keys[wsKeyPolls])
		counts = p.HGetAll(ctx, keys[wsKeyPollCounts])
		joined = p.HLen(ctx, keys[wsKeyMembers])
		return nil
	})
	if err != nil {
		return nil, unavailable(err)
	}
	if !started.Val() {
		return nil, workshop.ErrNotFound
	}
	var out []workshop.PollResult
	for field, js := range polls.Val() {
		if strings.Contains(field, "/") {
			continue
		}
		p, err := decodePoll(js, polls.Val()[field+"/revealed"])
		if err != nil {
			return nil, fmt.Errorf("workshop %s: %w", code, err)
		}
		counters := map[string]int{}
		for _, name := range append(choiceList(p), workshop.AnsweredCounter) {
			counters[name], _ = strconv.Atoi(counts.Val()[p.ID+"/"+name])
		}
		out = append(out, p.Result(counters, int(joined.Val())))
	}
	return out, nil
}

func (r *redisBackend) learnerState(ctx context.Context, code, learner string) (workshop.LearnerState, error) {
	ctx, cancel := context.WithTimeout(ctx, r.opTimeout)
	defer cancel()
	vals, err := r.learners.read(ctx, r.rdb, r.wsKeys(code), learner)
	if err != nil {
		return workshop.LearnerState{}, unavailable(err)
	}
	switch fmt.Sprint(vals[0]) {
	case "-1":
		return workshop.LearnerState{}, workshop.ErrNotFound
	case "-5":
		return workshop.LearnerState{}, workshop.ErrNotJoined
	}
	if len(vals) < 5 {
		return workshop.LearnerState{}, fmt.Errorf("learner script returned %d values", len(vals))
	}
	meta := []any{vals[1], vals[2], vals[3]}
	if vals[3] == "" {
		meta[2] = nil
	}
	w, ok, err := parseMeta(code, meta)
	if err != nil {
		return workshop.LearnerState{}, err
	}
	if !ok {
		return workshop.LearnerState{}, workshop.ErrNotFound
	}
	st := workshop.LearnerState{Workshop: w, Nickname: fmt.Sprint(vals[4])}
	if len(vals) >= 8 && vals[5] != "" {
		p, err := decodePoll(fmt.Sprint(vals[5]), fmt.Sprint(vals[6]))
		if err != nil {
			return workshop.LearnerState{}, fmt.Errorf("workshop %s: %w", code, err)
		}
		st.Poll = &p
		st.Prediction = workshop.SplitPrediction(fmt.Sprint(vals[7]))
	}
	return st, nil
}
