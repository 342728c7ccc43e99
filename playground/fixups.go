package playground

import (
	"strings"

	"github.com/locklab/locklab/resp"
)

// override answers the commands where miniredis's reply differs from Redis
// 7 in a way a learner would notice, instead of sending them to miniredis.
func (s *Sandbox) override(c *conn, name string, argv []string) (resp.Value, bool) {
	switch name {
	case "TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME":
		// Redis rounds to the nearest second; miniredis truncates, so a
		// fresh EX 100 would show 99. And far expiries are the sandbox's.
		return s.ttlReply(name, argv[1]), true
	case "SET":
		return s.set(c, argv), true
	case "SETEX", "PSETEX":
		return s.setex(c, name, argv), true
	case "GETEX":
		return s.getex(c, argv), true
	case "EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT":
		return s.expire(name, argv), true
	case "INCR", "DECR", "INCRBY", "DECRBY":
		return s.incr(c, name, argv), true
	case "INCRBYFLOAT":
		return s.incrbyfloat(c, argv), true
	case "HINCRBY":
		return s.hincrby(c, argv), true
	case "HINCRBYFLOAT":
		return s.hincrbyfloat(c, argv), true
	case "LCS":
		// miniredis has no LCS, nor SORT.
		return s.lcs(argv), true
	case "SORT", "SORT_RO":
		return s.sortCmd(c, name, argv), true
	case "LPUSH", "LPUSHX":
		if v, ok := s.lpush(name, argv); ok {
			return v, true
		}
	case "WAIT", "PUBLISH", "SELECT", "CLIENT", "OBJECT", "COMMAND":
		if v, ok := s.serverCommand(c, name, argv); ok {
			return v, true
		}
	case "ZADD", "ZINCRBY":
		out, errv := s.scoreArgs(name, argv)
		if errv != nil {
			return *errv, true
		}
		return fixScores(name, argv, fixReply(name, s.dispatch(c, out...))), true
	}
	if errv := s.strictInts(name, argv); errv != nil {
		return *errv, true
	}
	return resp.Value{}, false
}

// afterDispatch repairs what miniredis leaves behind differently from
// Redis. A *STORE command with an empty result leaves an empty set in
// miniredis, which later commands trip over; Redis deletes the destination.
func (s *Sandbox) afterDispatch(name string, argv []string, v resp.Value) {
	switch name {
	case "FLUSHDB", "FLUSHALL":
		clear(s.far)
	case "SUNIONSTORE", "SINTERSTORE", "SDIFFSTORE", "ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE":
		if v.Kind == resp.Integer && v.Int == 0 {
			s.m.Del(argv[1])
		}
	}
}

// fixReply rewords the miniredis errors that say the same as Redis 7 in
// other words.
func fixReply(name string, v resp.Value) resp.Value {
	if v.Kind != resp.Error {
		return v
	}
	if rest, ok := strings.CutPrefix(v.Str, "ERR invalid expire time in "); ok && !strings.Contains(rest, "'") {
		v.Str = "ERR invalid expire time in '" + strings.ToLower(name) + "' command"
	}
	// Arity checked by the command itself (MSET's pairs, HSET's): Redis
	// words it as it words every arity error.
	if rest, ok := strings.CutPrefix(v.Str, "ERR wrong number of arguments for "); ok && !strings.Contains(rest, "'") {
		v.Str = "ERR wrong number of arguments for '" + strings.ToLower(name) + "' command"
	}
	return v
}
