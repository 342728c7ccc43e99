package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/workshop"
)

// workshopTTL drops a workshop this long after its last write. Every write
// refreshes the TTL of all the workshop's keys together, so no part of a
// workshop outlives the rest.
const workshopTTL = 400 * 24 * time.Hour

// A workshop lives in these keys, under <prefix>ws:{<code>}; the scripts
// below refer to them by position in wsKeys. The braces make the code the
// keys' hash tag, so on a Redis Cluster they are all in one slot and a
// script may touch them together. (Before there were tags, the keys were
// named without braces; Upgrade renames them.)
//
//	ws:{<code>}          hash: title, started, ended (Unix ms; ended only once
//	                     ended), closed ("1" while closed to newcomers), v
//	                     (the version: see workshop_version.go)
//	ws:{<code>}:members  hash: learner -> joined (Unix ms)
//	ws:{<code>}:nicks    hash: learner -> nickname
//	ws:{<code>}:seen     hash: learner -> last active (Unix ms)
//	ws:{<code>}:counts   hash: counter -> count
//	ws:{<code>}:pcounts  hash: <learner>/<counter> -> count
//	ws:{<code>}:first    set: <learner>/<question> answered
//	ws:{<code>}:completed set: <learner>/<topic> completed
//	ws:{<code>}:polls    hash: <poll> -> the poll as JSON, <poll>/choices ->
//	                     its outcome ids joined by commas, <poll>/revealed
//	                     -> Unix ms (only once revealed)
//	ws:{<code>}:picks    hash: <poll>/<learner> -> prediction (ids, commas)
//	ws:{<code>}:lab      set: <learner>/<challenge> solved
//	ws:{<code>}:pollcounts hash: <poll>/<outcome> -> participants who picked it,
//	                     <poll>/#answered -> participants who predicted
//	ws:{<code>}:nickidx  hash: k/<nickname key> -> the learner who has it,
//	                     l/<learner> -> their nickname key
//	ws:{<code>}:removed  set: learners the instructor removed
//
// The workshop hash also holds poll (the current poll's id) and polls (how
// many were opened). Polls live in fixed keys, not one key per poll, so
// every write's TTL refresh covers them too.
//
// <prefix>workshops is a sorted set of codes by start time, for
// Workshops; codes of expired workshops are dropped from it as they are
// found. It is written apart from a workshop's keys (it is in another
// slot): after the workshop is created, and pruned only of a code whose
// start time is still the one found expired.
func (r *redisBackend) wsKeys(code string) []string {
	k := r.prefix + "ws:{" + code + "}"
	return []string{k, k + ":members", k + ":nicks", k + ":seen", k + ":counts", k + ":pcounts", k + ":" + workshop.GateFirst, k + ":" + workshop.GateCompleted,
		k + ":polls", k + ":picks", k + ":pollcounts", k + ":" + workshop.GateLab, k + ":nickidx", k + ":removed"}
}

func (r *redisBackend) wsIndex() string { return r.prefix + "workshops" }

// Positions in wsKeys, for Go; the scripts use them plus one.
const (
	wsKeyMeta = iota
	wsKeyMembers
	wsKeyNicks
	wsKeySeen
	wsKeyCounts
	wsKeyPcounts
	wsKeyFirst
	wsKeyCompleted
	wsKeyPolls
	wsKeyPicks
	wsKeyPollCounts
	wsKeyLab
	wsKeyNickIdx
	wsKeyRemoved
)

// Scripts return these; each runs atomically, so a check (does the
// workshop exist, has it ended, has the learner joined) and the writes it
// allows cannot be split by another replica's write.
const (
	scriptOK        = 1
	scriptIgnored   = 0
	scriptNotFound  = -1
	scriptExists    = -2
	scriptEnded     = -3
	scriptFull      = -4
	scriptNotJoined = -5
	scriptNoPoll    = -6
	scriptRevealed  = -7
	scriptBadInput  = -8
	scriptTooMany   = -9
	scriptNoMember  = -10
	scriptRemoved   = -11
	scriptClosed    = -12
	scriptNickTaken = -13
	scriptChanged   = -14
)

// createScript: KEYS = wsKeys; ARGV = title, started, ttl ms.
const createScript = `
if redis.call('EXISTS', KEYS[1]) == 1 then return -2 end
for i = 2, #KEYS do redis.call('DEL', KEYS[i]) end
redis.call('HSET', KEYS[1], 'title', ARGV[1], 'started', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`

// endScript: KEYS = wsKeys; ARGV = ended, ttl ms.
const endScript = `
if redis.call('HEXISTS', KEYS[1], 'started') == 0 then return -1 end
redis.call('HSETNX', KEYS[1], 'ended', ARGV[1])
redis.call('HINCRBY', KEYS[1], 'v', 1)
for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ARGV[2]) end
return 1
`

// joinScript: KEYS = wsKeys; ARGV = learner, nickname, at, ttl ms, most
// participants, nickname key.
const joinScript = `
if redis.call('HEXISTS', KEYS[1], 'started') == 0 then return -1 end
if redis.call('HEXISTS', KEYS[1], 'ended') == 1 then return -3 end
if redis.call('SISMEMBER', KEYS[14], ARGV[1]) == 1 then return -11 end
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then
  if redis.call('HEXISTS', KEYS[1], 'closed') == 1 then return -12 end
  if redis.call('HLEN', KEYS[2]) >= tonumber(ARGV[5]) then return -4 end
end
if ARGV[2] ~= '' then
  local holder = redis.call('HGET', KEYS[13], 'k/' .. ARGV[6])
  if holder and holder ~= ARGV[1] then return -13 end
  local old = redis.call('HGET', KEYS[13], 'l/' .. ARGV[1])
  if old and old ~= ARGV[6] then redis.call('HDEL', KEYS[13], 'k/' .. old) end
  redis.call('HSET', KEYS[13], 'k/' .. ARGV[6], ARGV[1], 'l/' .. ARGV[1], ARGV[6])
  redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
end
redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[3])
local last = redis.call('HGET', KEYS[4], ARGV[1])
if not last or tonumber(last) < tonumber(ARGV[3]) then
  redis.call('HSET', KEYS[4], ARGV[1], ARGV[3])
end
for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ARGV[4]) end
return 1
`

// flushScript adds a batch: KEYS = wsKeys; ARGV = ttl ms, then for each
// learner: the learner, their first and last event times (Unix ms), the
// workshop counters and then their own as a length and name-count pairs,
// and their gated plans as a length and, for each, the gate key's
// position, the gate member, and the names of its workshop counters and
// then of the learner's, each list a length and its names. A learner who
// is not a participant, or whose first event came after the end, is
// skipped. Counters are added with HINCRBY and the last-active time only
// moves forward, so replicas flushing at once add up.
const flushScript = `
if redis.call('HEXISTS', KEYS[1], 'started') == 0 then return -1 end
local ended = tonumber(redis.call('HGET', KEYS[1], 'ended') or '0')
local i = 2
local function counts(key, prefix, apply)
  local n = tonumber(ARGV[i])
  i = i + 1
  for j = 1, n do
    if apply then redis.call('HINCRBY', key, prefix .. ARGV[i], ARGV[i + 1]) end
    i = i + 2
  end
end
local function names(key, prefix, apply)
  local n = tonumber(ARGV[i])
  i = i + 1
  for j = 1, n do
    if apply then redis.call('HINCRBY', key, prefix .. ARGV[i], 1) end
    i = i + 1
  end
end
while i <= #ARGV do
  local learner, first, last = ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 2]
  i = i + 3
  local apply = redis.call('HEXISTS', KEYS[2], learner) == 1 and (ended == 0 or first <= ended)
  local mine = learner .. '/'
  counts(KEYS[5], '', apply)
  counts(KEYS[6], mine, apply)
  local gates = tonumber(ARGV[i])
  i = i + 1
  for g = 1, gates do
    local pos, member = tonumber(ARGV[i]), ARGV[i + 1]
    i = i + 2
    local new = apply and redis.call('SADD', KEYS[pos], member) == 1
    names(KEYS[5], '', new)
    names(KEYS[6], mine, new)
  end
  if apply then
    local seen = redis.call('HGET', KEYS[4], learner)
    if not seen or tonumber(seen) < tonumber(last) then redis.call('HSET', KEYS[4], learner, last) end
  end
end
for k = 1, #KEYS do redis.call('PEXPIRE', KEYS[k], ARGV[1]) end
return 1
`

// closeScript: KEYS = wsKeys; ARGV = "1" to close, "" to open, ttl ms.
const closeScript = `
if redis.call('HEXISTS', KEYS[1], 'started') == 0 then return -1 end
if redis.call('HEXISTS', KEYS[1], 'ended') == 1 then return -3 end
if ARGV[1] == '1' then redis.call('HSET', KEYS[1], 'closed', '1') else redis.call('HDEL', KEYS[1], 'closed') end
redis.call('HINCRBY', KEYS[1], 'v', 1)
for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ARGV[2]) end
return 1
`

// removeScript: KEYS = wsKeys; ARGV = learner, ttl ms, the number n of
// polls the learner predicted on, n pairs of poll id and stored
// prediction, then counter and change pairs (the workshop.Tally of taking
// those predictions away). It guards that the learner's stored
// predictions are still those, on every poll, else it returns
// scriptChanged and changes nothing; a workshop has at most
// workshop.MaxPolls polls.
const removeScript = `
if redis.call('HEXISTS', KEYS[1], 'started') == 0 then return -1 end
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then return -10 end
local n = tonumber(ARGV[3])
local want = {}
for i = 4, 3 + 2 * n, 2 do want[ARGV[i]] = ARGV[i + 1] end
for _, id in ipairs(redis.call('HKEYS', KEYS[9])) do
  if not string.find(id, '/', 1, true) then
    if (redis.call('HGET', KEYS[10], id .. '/' .. ARGV[1]) or '') ~= (want[id] or '') then return -14 end
  end
end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
local nick = redis.call('HGET', KEYS[13], 'l/' .. ARGV[1])
if nick then
  redis.call('HDEL', KEYS[13], 'l/' .. ARGV[1])
  if redis.call('HGET', KEYS[13], 'k/' .. nick) == ARGV[1] then redis.call('HDEL', KEYS[13], 'k/' .. nick) end
end
redis.call('SADD', KEYS[14], ARGV[1])
for i = 4, 3 + 2 * n, 2 do redis.call('HDEL', KEYS[10], ARGV[i] .. '/' .. ARGV[1]) end
for i = 4 + 2 * n, #ARGV, 2 do redis.call('HINCRBY', KEYS[11], ARGV[i], ARGV[i + 1]) end
redis.call('HINCRBY', KEYS[1], 'v', 1)
for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ARGV[2]) end
return 1
`

// errChanged means a script found that what it was to replace had changed
// since it was read, and changed nothing; the caller reads and tries
// again.
var errChanged = errors.New("changed since read")

// run runs a script and turns its result into an error.
func (r *redisBackend) run(ctx context.Context, src string, keys []string, args ...any) error {
	n, err := r.write(ctx, redis.NewScript(src), keys, args...).Int()
	if err != nil {
		return unavailable(err)
	}
	return scriptErr(n)
}

// scriptErr is the error of a workshop script's answer n, nil for
// scriptOK and scriptIgnored.
func scriptErr(n int) error {
	switch n {
	case scriptOK, scriptIgnored:
		return nil
	case scriptNotFound:
		return workshop.ErrNotFound
	case scriptExists:
		return workshop.ErrExists
	case scriptEnded:
		return workshop.ErrEnded
	case scriptFull:
		return workshop.ErrFull
	case scriptNotJoined:
		return workshop.ErrNotJoined
	case scriptNoPoll:
		return workshop.ErrNoPoll
	case scriptRevealed:
		return workshop.ErrRevealed
	case scriptBadInput:
		return workshop.ErrBadInput
	case scriptTooMany:
		return workshop.ErrTooManyPolls
	case scriptNoMember:
		return workshop.ErrNoParticipant
	case scriptRemoved:
		return workshop.ErrRemoved
	case scriptClosed:
		return workshop.ErrJoinClosed
	case scriptNickTaken:
		return workshop.ErrNicknameTaken
	case scriptChanged:
		return errChanged
	}
	return fmt.Errorf("workshop script returned %d", n)
}

func ttlMillis() int64 { return workshopTTL.Milliseconds() }

func (r *redisBackend) createWorkshop(ctx context.Context, w workshop.Workshop) error {
	ctx, cancel := context.WithTimeout(ctx, r.opTimeout)
	defer cancel()
	if err := r.run(ctx, createScript, r.wsKeys(w.Code), w.Title, toMillis(w.StartedAt), ttlMillis()); err != nil {
		return err
	}
	// Listed once it exists. Should Redis fail in between, the caller
	// hears it; the unlisted workshop is never used and expires.
	return unavailable(r.rdb.ZAdd(ctx, r.wsIndex(), redis.Z{Score: float64(toMillis(w.StartedAt)), Member: w.Code}).Err())
}

// getMeta reads a workshop's hash for parseMeta.
func getMeta(ctx context.Context, c redis.Cmdable, key string) *redis.SliceCmd {
	return c.HMGet(ctx, key, "title", "started", "ended", "closed")
}

// parseMeta reads what getMeta got (the title, start, end and closed
// fields; closed may be left out); ok is false if the workshop does not
// exist.
func parseMeta(code string, vals []any) (w workshop.Workshop, ok bool, err error) {
	if len(vals) < 3 || len(vals) > 4 || vals[1] == nil {
		return workshop.Workshop{}, false, nil
	}
	w.JoinClosed = len(vals) == 4 && vals[3] != nil
	w.Code = code
	w.Title, _ = vals[0].(string)
	started, err := strconv.ParseInt(fmt.Sprint(vals[1]), 10, 64)
	if err != nil {
		return workshop.Workshop{}, false, fmt.Errorf("workshop %s start: %w", code, err)
	}
	w.StartedAt = fromMillis(started)
	if vals[2] != nil {
		ended, err := strconv.ParseInt(fmt.Sprint(vals[2]), 10, 64)
		if err != nil {
			return workshop.Workshop{}, false, fmt.Errorf("workshop %s end: %w", code, err)
		}
		w.EndedAt = fromMillis(ended)
	}
	return w, true, nil
}

func (r *redisBackend) workshop(ctx context.Context, code string) (workshop.Workshop, error) {
	ctx, cancel := context.WithTimeout(ctx, r.opTimeout)
	defer cancel()
	vals, err := getMeta(ctx, r.rdb, r.wsKeys(code)[wsKeyMeta]).Result()
	if err != nil {
		return workshop.Workshop{}, unavailable(err)
	}
	w, ok, err := parseMeta(code, vals)
	if err == nil && !ok {
		err = workshop.ErrNotFound
	}
	return w, err
}

func (r *redisBackend) workshops(ctx context.Context, limit int) ([]workshop.Workshop, error) {
	ctx, cancel := context.WithTimeout(ctx, r.opTimeout)
	defer cancel()
	var (
		out  []workshop.Workshop
		gone []redis.Z
		seen = map[string]bool{}
	)
	// Page through the index, newest first, skipping codes whose workshop
	// has expired, until limit workshops are found.
	for start := int64(0); len(out) < limit; start += int64(limit) {
		codes, err := r.rdb.ZRevRangeWithScores(ctx, r.wsIndex(), start, start+int64(limit)-1).Result()
		if err != nil {
			return nil, unavailable(err)
		}
		cmds := make([]*redis.SliceCmd, len(codes))
		_, err = r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, z := range codes {
				cmds[i] = getMeta(ctx, p, r.wsKeys(z.Member.(string))[wsKeyMeta])
			}
			return nil
		})
		if err != nil {
			return nil, unavailable(err)
		}
		for i, z := range codes {
			code := z.Member.(string)
			w, ok, err := parseMeta(code, cmds[i].Val())
			switch {
			case err != nil:
				return nil, err
			case !ok:
				gone = append(gone, z)
			case !seen[code] && len(out) < limit:
				// A workshop created while we page moves the others
				// down one place, and one may show up twice.
				seen[code] = true
				out = append(out, w)
			}
		}
		if len(codes) < limit {
			break
		}
	}
	if len(gone) > 0 {
		args := make([]any, 0, 2*len(gone))
		for _, g := range gone {
			args = append(args, g.Member, g.Score)
		}
		// Tidying the index is not what the caller asked for: if it
		// fails, the list is still right and the next call tries again.
		_ = r.run(ctx, pruneScript, []string{r.wsIndex()}, args...)
	}
	return out, nil
}

// pruneScript drops codes from the index whose workshop has expired: each
// only if its start time is still the one found with it, as another
// replica may have just created a workshop with the same code and listed
// it anew. KEYS = index; ARGV = code, start time, code, start time...
const pruneScript = `
for i = 1, #ARGV, 2 do
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) == ARGV[i + 1] then redis.call('ZREM', KEYS[1], ARGV[i]) end
end
return 1
`

func (r *redisBackend) endWorkshop(ctx context.Context, code string, at int64) error {
	ctx, cancel := context.WithTimeout(ctx, r.opTimeout)
	defer cancel()
	return r.run(ctx, endScript, r.wsKeys(code), at, ttlMillis())
}

func (r *redisBackend) joinWorkshop(ctx context.Context, code string, j workshop.Joining) error {
	ctx, cancel := context.WithTimeout(ctx, r.opTimeout)
	defer cancel()
	return r.run(ctx, joinScript, r.wsKeys(code), j.Learner, j.Nickname, toMillis(j.At), ttlMillis(), j.Limit, j.NickKey)
}

func (r *redisBackend) isMember(ctx context.Context, code, learner string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, r.opTimeout)
	defer cancel()
	keys := r.wsKeys(code)
	var started, member *redis.BoolCmd
	_, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		started = p.HExists(ctx, keys[wsKeyMeta], "started")
		member = p.HExists(ctx, keys[wsKeyMembers], learner)
		return nil
	})
	if err != nil {
		return false, unavailable(err)
	}
	if !started.Val() {
		return false, workshop.ErrNotFound
	}
	return member.Val(), nil
}

// gatePositions are the scripts' positions (wsKeys plus one) of the gate
// sets.
var gatePositions = map[string]int{
	workshop.GateFirst:     wsKeyFirst + 1,
	workshop.GateCompleted: wsKeyCompleted + 1,
	workshop.GateLab:       wsKeyLab + 1,
}

func (r *redisBackend) flushWorkshop(ctx context.Context, code string, b workshop.Batch) error {
	ctx, cancel := context.WithTimeout(ctx, r.opTimeout)
	defer cancel()
	args := []any{ttlMillis()}
	counts := func(m map[string]int) {
		args = append(args, len(m))
		for name, n := range m {
			args = append(args, name, n)
		}
	}
	names := func(ns []string) {
		args = append(args, len(ns))
		for _, n := range ns {
			args = append(args, n)
		}
	}
	for learner, mb := range b {
		args = append(args, learner, toMillis(mb.First), toMillis(mb.Last))
		counts(mb.Counts)
		counts(mb.MemberCounts)
		args = append(args, len(mb.Gated))
		for _, p := range mb.Gated {
			pos, ok := gatePositions[p.Gate]
			if !ok {
				return fmt.Errorf("workshop %s: unknown gate %q", code, p.Gate)
			}
			args = append(args, pos, p.GateMember)
			names(p.GateCounts)
			names(p.GateMemberCounts)
		}
	}
	return r.run(ctx, flushScript, r.wsKeys(code), args...)
}

func (r *redisBackend) setJoinClosed(ctx context.Context, code string, closed bool) error {
	ctx, cancel := context.WithTimeout(ctx, r.opTimeout)
	defer cancel()
	flag := ""
	if closed {
		flag = "1"
	}
	return r.run(ctx, closeScript, r.wsKeys(code), flag, ttlMillis())
}

func (r *redisBackend) removeParticipant(ctx context.Context, code, learner string) error {
	ctx, cancel := context.WithTimeout(ctx, r.opTimeout)
	defer cancel()
	keys := r.wsKeys(code)
	for range maxTallyTries {
		args, err := r.dropTally(ctx, keys, learner)
		if err != nil {
			return err
		}
		if err := r.run(ctx, removeScript, keys, args...); !errors.Is(err, errChanged) {
			return err
		}
	}
	return unavailable(fmt.Errorf("remove %s: predictions kept changing: %w", learner, errChanged))
}

// dropTally reads a learner's predictions on every poll of a workshop and
// makes removeScript's arguments: the predictions as read, and the
// workshop.Tally of taking each away.
func (r *redisBackend) dropTally(ctx context.Context, keys []string, learner string) ([]any, error) {
	fields, err := r.rdb.HKeys(ctx, keys[wsKeyPolls]).Result()
	if err != nil {
		return nil, unavailable(err)
	}
	var ids, picks []string
	for _, f := range fields {
		if !strings.Contains(f, "/") {
			ids = append(ids, f)
			picks = append(picks, f+"/"+learner)
		}
	}
	args := []any{learner, ttlMillis(), 0}
	if len(ids) == 0 {
		return args, nil
	}
	vals, err := r.rdb.HMGet(ctx, keys[wsKeyPicks], picks...).Result()
	if err != nil {
		return nil, unavailable(err)
	}
	var counters []any
	for i, v := range vals {
		old, ok := v.(string)
		if !ok {
			continue
		}
		args = append(args, ids[i], old)
		args[2] = args[2].(int) + 1
		for name, n := range workshop.Tally(workshop.SplitPrediction(old), nil) {
			counters = append(counters, ids[i]+"/"+name, n)
		}
	}
	return append(args, counters...), nil
}

func (r *redisBackend) workshopData(ctx context.Context, code string) (workshop.Data, error) {
	ctx, cancel := context.WithTimeout(ctx, r.opTimeout)
	defer cancel()
	keys := r.wsKeys(code)
	var (
		meta                                  *redis.SliceCmd
		members, nicks, seen, counts, pcounts *redis.MapStringStringCmd
	)
	// One MULTI/EXEC, so the parts are read at the same instant.
	_, err := r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		meta = getMeta(ctx, p, keys[wsKeyMeta])
		members = p.HGetAll(ctx, keys[wsKeyMembers])
		nicks = p.HGetAll(ctx, keys[wsKeyNicks])
		seen = p.HGetAll(ctx, keys[wsKeySeen])
		counts = p.HGetAll(ctx, keys[wsKeyCounts])
		pcounts = p.HGetAll(ctx, keys[wsKeyPcounts])
		return nil
	})
	if err != nil {
		return workshop.Data{}, unavailable(err)
	}
	w, ok, err := parseMeta(code, meta.Val())
	if err != nil {
		return workshop.Data{}, err
	}
	if !ok {
		return workshop.Data{}, workshop.ErrNotFound
	}
	d := workshop.Data{Workshop: w, Counts: map[string]int{}}
	for name, v := range counts.Val() {
		if d.Counts[name], err = strconv.Atoi(v); err != nil {
			return workshop.Data{}, fmt.Errorf("workshop %s counter %s: %w", code, name, err)
		}
	}
	perLearner := map[string]map[string]int{}
	for field, v := range pcounts.Val() {
		learner, name, ok := strings.Cut(field, learnerFieldSep)
		if !ok {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return workshop.Data{}, fmt.Errorf("workshop %s counter %s: %w", code, field, err)
		}
		if perLearner[learner] == nil {
			perLearner[learner] = map[string]int{}
		}
		perLearner[learner][name] = n
	}
	for learner, v := range members.Val() {
		joined, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return workshop.Data{}, fmt.Errorf("workshop %s participant %s: %w", code, learner, err)
		}
		last := joined
		if v, ok := seen.Val()[learner]; ok {
			if last, err = strconv.ParseInt(v, 10, 64); err != nil {
				return workshop.Data{}, fmt.Errorf("workshop %s participant %s: %w", code, learner, err)
			}
		}
		d.Members = append(d.Members, member(learner, nicks.Val()[learner], joined, last, perLearner[learner]))
	}
	return d, nil
}
