package playground

import (
	"strings"

	"github.com/locklab/locklab/resp"
)

// CallRESP3 runs a script's redis.call after redis.setresp(3): the
// command runs as Call runs it, and its RESP2 reply takes the RESP3 shape
// Redis 7.0 gives it, which the script then sees as {map=...},
// {set=...} and {double=n}. The shapes are those of the commands a
// sandbox has whose RESP3 reply differs: maps, sets, scores as doubles.
func (sc scriptCaller) CallRESP3(argv []string, readOnly bool) resp.Value {
	v := sc.Call(argv, readOnly)
	if v.Kind == resp.Error {
		return v
	}
	return toRESP3(argv, v)
}

// resp3Shapes names, per command, the RESP3 shape of its reply.
var resp3Shapes = map[string]string{
	"HGETALL":  "map",
	"SMEMBERS": "set", "SINTER": "set", "SUNION": "set", "SDIFF": "set",
	"ZSCORE": "double", "ZINCRBY": "double", "ZADD": "double", // ZADD with INCR only
	"ZMSCORE": "doubles",
	"ZRANGE":  "scores", "ZRANGEBYSCORE": "scores", "ZREVRANGE": "scores", "ZREVRANGEBYSCORE": "scores",
	"ZUNION": "scores", "ZINTER": "scores", "ZDIFF": "scores", "ZRANDMEMBER": "scores",
	"ZPOPMIN": "pop", "ZPOPMAX": "pop",
}

// toRESP3 gives v, the RESP2 reply of argv, its RESP3 shape.
func toRESP3(argv []string, v resp.Value) resp.Value {
	name := strings.ToUpper(argv[0])
	switch resp3Shapes[name] {
	case "map":
		if v.Kind == resp.Array {
			v.Kind = resp.Map
		}
	case "set":
		if v.Kind == resp.Array {
			v.Kind = resp.Set
		}
	case "double":
		if v.Kind == resp.Bulk && (name != "ZADD" || hasWord(argv[2:], "INCR")) {
			v.Kind = resp.Double
		}
	case "doubles":
		if v.Kind == resp.Array {
			elems := make([]resp.Value, len(v.Elems))
			for i, e := range v.Elems {
				if e.Kind == resp.Bulk {
					e.Kind = resp.Double
				}
				elems[i] = e
			}
			v.Elems = elems
		}
	case "scores":
		if hasWord(argv[2:], "WITHSCORES") {
			v = scorePairs(v)
		}
	case "pop":
		// Without a count, one member and its score; with one, pairs.
		if len(argv) > 2 {
			v = scorePairs(v)
		} else if v.Kind == resp.Array && len(v.Elems) == 2 {
			v.Elems = []resp.Value{v.Elems[0], {Kind: resp.Double, Str: v.Elems[1].Str}}
		}
	}
	return v
}

// scorePairs turns members and scores in turn into [member, score] pairs,
// the score a double.
func scorePairs(v resp.Value) resp.Value {
	if v.Kind != resp.Array || len(v.Elems)%2 != 0 {
		return v
	}
	pairs := make([]resp.Value, 0, len(v.Elems)/2)
	for i := 0; i < len(v.Elems); i += 2 {
		pairs = append(pairs, resp.Arr(v.Elems[i], resp.Value{Kind: resp.Double, Str: v.Elems[i+1].Str}))
	}
	v.Elems = pairs
	return v
}

// hasWord reports whether args holds word, in any case.
func hasWord(args []string, word string) bool {
	for _, a := range args {
		if strings.EqualFold(a, word) {
			return true
		}
	}
	return false
}

// LookupCommand reports whether Redis 7.0's lookupCommand finds argv, for
// redis.acl_check_cmd: a command of its table, in any case, and for a
// command with subcommands (every one has HELP) given more than its name,
// one of those.
func (sc scriptCaller) LookupCommand(argv []string) bool {
	name := strings.ToUpper(argv[0])
	if _, ok := lookupCommand(name); !ok {
		return false
	}
	if _, container := lookupCommand(name + "|HELP"); container && len(argv) > 1 {
		_, ok := lookupCommand(name + "|" + strings.ToUpper(argv[1]))
		return ok
	}
	return true
}
