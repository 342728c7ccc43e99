package playground

// The command table, lookupCommand, is generated from a real redis-server
// so that arities, flags and key positions are Redis's own.
//go:generate go run ./internal/gencommands -o commands_table.go -help-o commands_help.go

import "strings"

// command is what the playground knows of a Redis command.
type command struct {
	name              string // lower case, as Redis names it in its errors ("script|load")
	arity             int    // argc including the name; negative: at least -arity
	flags             cmdFlags
	first, last, step int // key positions, as in COMMAND; last < 0 counts from the end
	// quick is the most arguments, the name included, with which the
	// command surely runs in microseconds in a sandbox of few keys; 0 if
	// it never does. It is the playground's own declaration (gencommands'
	// quick), not Redis's.
	quick int
}

// cmdFlags are the COMMAND flags the playground acts on.
type cmdFlags uint8

const (
	flagWrite cmdFlags = 1 << iota
	flagReadOnly
	flagNoScript
	flagBlocking
	flagPubSub
	flagMovableKeys
)

// arityOK reports whether argc arguments (the name included) suit c.
func (c command) arityOK(argc int) bool {
	if c.arity >= 0 {
		return argc == c.arity
	}
	return argc >= -c.arity
}

// keys returns the key arguments of argv by the command's key positions.
// Commands with movable keys (EVAL, ZUNIONSTORE, ...) are handled by
// movableKeys.
func (c command) keys(argv []string) []string {
	if c.flags&flagMovableKeys != 0 {
		return movableKeys(argv)
	}
	if c.first <= 0 {
		return nil
	}
	last := c.last
	if last < 0 {
		last += len(argv)
	}
	var keys []string
	for i := c.first; i <= last && i < len(argv); i += max(c.step, 1) {
		keys = append(keys, argv[i])
	}
	return keys
}

// movableKeys finds the keys of the allowed commands whose keys follow a
// count (ZUNIONSTORE dst 2 a b, SINTERCARD 2 a b, LMPOP 2 a b LEFT, ...).
// EVAL's keys are the script's business: each redis.call is checked on its
// own.
func movableKeys(argv []string) []string {
	name := strings.ToUpper(argv[0])
	start := 1 // position of the count
	var keys []string
	switch name {
	case "ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE":
		if len(argv) < 2 {
			return nil
		}
		keys = append(keys, argv[1])
		start = 2
	case "ZUNION", "ZINTER", "ZDIFF", "SINTERCARD", "ZINTERCARD", "LMPOP", "ZMPOP":
	default:
		return nil
	}
	if start >= len(argv) {
		return keys
	}
	n, ok := parseInt(argv[start])
	if !ok || n < 0 {
		return keys
	}
	for i := start + 1; i <= start+int(n) && i < len(argv); i++ {
		keys = append(keys, argv[i])
	}
	return keys
}

// allowed reports whether the playground runs the command (upper case): the
// commands of strings, keys and TTLs, hashes, lists, sets, sorted sets,
// scripting and transactions, and a few harmless server commands. Every
// other command Redis knows gets refusal's explanation instead.
func allowed(name string) bool {
	switch name {
	// Strings.
	case "APPEND", "DECR", "DECRBY", "GET", "GETDEL", "GETEX", "GETRANGE", "GETSET",
		"INCR", "INCRBY", "INCRBYFLOAT", "MGET", "MSET", "MSETNX", "PSETEX", "SET",
		"SETEX", "SETNX", "SETRANGE", "STRLEN", "GETBIT", "SETBIT", "BITCOUNT", "BITPOS", "LCS":
		return true
	case "SORT", "SORT_RO":
		return true
	// Keys and TTLs.
	case "DEL", "UNLINK", "EXISTS", "EXPIRE", "EXPIREAT", "EXPIRETIME", "PEXPIRE",
		"PEXPIREAT", "PEXPIRETIME", "PERSIST", "TTL", "PTTL", "TYPE", "KEYS", "SCAN",
		"RENAME", "RENAMENX", "RANDOMKEY", "TOUCH", "COPY", "OBJECT":
		return true
	// Hashes.
	case "HDEL", "HEXISTS", "HGET", "HGETALL", "HINCRBY", "HINCRBYFLOAT", "HKEYS",
		"HLEN", "HMGET", "HMSET", "HRANDFIELD", "HSCAN", "HSET", "HSETNX", "HSTRLEN", "HVALS":
		return true
	// Lists.
	case "LINDEX", "LINSERT", "LLEN", "LMOVE", "LMPOP", "LPOP", "LPOS", "LPUSH", "LPUSHX",
		"LRANGE", "LREM", "LSET", "LTRIM", "RPOP", "RPOPLPUSH", "RPUSH", "RPUSHX":
		return true
	// Sets.
	case "SADD", "SCARD", "SDIFF", "SDIFFSTORE", "SINTER", "SINTERCARD", "SINTERSTORE",
		"SISMEMBER", "SMEMBERS", "SMISMEMBER", "SMOVE", "SPOP", "SRANDMEMBER", "SREM",
		"SSCAN", "SUNION", "SUNIONSTORE":
		return true
	// Sorted sets.
	case "ZADD", "ZCARD", "ZCOUNT", "ZINCRBY", "ZINTER", "ZINTERSTORE", "ZLEXCOUNT",
		"ZMPOP", "ZMSCORE", "ZPOPMAX", "ZPOPMIN", "ZRANDMEMBER", "ZRANGE", "ZRANGEBYLEX",
		"ZRANGEBYSCORE", "ZRANK", "ZREM", "ZREMRANGEBYLEX", "ZREMRANGEBYRANK",
		"ZREMRANGEBYSCORE", "ZREVRANGE", "ZREVRANGEBYLEX", "ZREVRANGEBYSCORE", "ZREVRANK",
		"ZSCAN", "ZSCORE", "ZUNION", "ZUNIONSTORE":
		return true
	// Scripting and transactions.
	case "EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO", "SCRIPT", "FUNCTION", "FCALL", "FCALL_RO",
		"MULTI", "EXEC", "DISCARD", "WATCH", "UNWATCH":
		return true
	// Server.
	case "PING", "ECHO", "TIME", "DBSIZE", "FLUSHDB", "FLUSHALL",
		"WAIT", "PUBLISH", "SELECT", "CLIENT", "COMMAND":
		return true
	}
	return false
}

// refusal explains why the playground does not run a command Redis knows.
// The text follows "the playground does not support NAME: ". Blocking pops
// are refused rather than run without blocking: a learner who types BLPOP
// expects to wait, and the playground cannot wait for the other client while
// it holds the sandbox.
func refusal(name string, c command) string {
	switch name {
	case "SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE":
		return "it would keep your connection waiting for messages"
	case "UNSUBSCRIBE", "PUNSUBSCRIBE", "SUNSUBSCRIBE", "SPUBLISH", "PUBSUB":
		return "there is no pub/sub in the playground, as nobody could subscribe"
	case "MONITOR":
		return "it would turn your connection into a feed of every command"
	case "HELLO":
		return "it switches the protocol; the playground speaks RESP2 like a plain redis-cli"
	case "CLIENT":
		return "your two clients A and B are fixed; there are no others to list or kill, and only their names (SETNAME, GETNAME) can be set"
	case "AUTH", "ACL":
		return "a sandbox has no users or passwords"
	case "SELECT", "SWAPDB", "MOVE":
		return "a sandbox has only database 0"
	case "DEBUG", "CONFIG", "SHUTDOWN", "SAVE", "BGSAVE", "BGREWRITEAOF", "LASTSAVE",
		"REPLICAOF", "SLAVEOF", "SYNC", "PSYNC", "FAILOVER", "MODULE", "LATENCY",
		"SLOWLOG", "MEMORY", "INFO", "ROLE", "LOLWUT", "RESET", "QUIT":
		return "it manages the server itself, and the playground's server is shared"
	case "MIGRATE", "RESTORE", "RESTORE-ASKING", "DUMP":
		return "it moves keys between servers, and a sandbox cannot reach another server"
	case "CLUSTER", "READONLY", "READWRITE", "ASKING":
		return "a sandbox is a single node, not a cluster"
	}
	if nb := nonBlocking(name); nb != "" {
		return "it blocks the connection until data arrives, which would hold up your sandbox; use " + nb + ", which does not wait (after MULTI it is queued and runs without waiting, as in Redis)"
	}
	if strings.HasPrefix(name, "X") && c.flags&flagPubSub == 0 {
		return "streams are not part of this course"
	}
	return "it is not part of this course"
}

// nonBlocking names the non-blocking cousin of a blocking command.
func nonBlocking(name string) string {
	switch name {
	case "BLPOP":
		return "LPOP"
	case "BRPOP":
		return "RPOP"
	case "BRPOPLPUSH":
		return "RPOPLPUSH"
	case "BLMOVE":
		return "LMOVE"
	case "BLMPOP":
		return "LMPOP"
	case "BZPOPMIN":
		return "ZPOPMIN"
	case "BZPOPMAX":
		return "ZPOPMAX"
	case "BZMPOP":
		return "ZMPOP"
	}
	return ""
}

// LineKeys returns the keys a line names, each once, in order, by the
// command table's key positions: after redis-cli's repeat count, with a
// subcommand's positions for OBJECT and the like, and the keys that
// follow the count of EVAL, EVALSHA and FCALL (whose scripts may touch
// others; those are theirs). A line Exec would not run names none.
func LineKeys(line string) []string {
	if len(line) > defaultMaxLineBytes {
		return nil
	}
	t, line, err := SplitTarget(line)
	if err != nil || t.Storage {
		return nil
	}
	argv, err := Tokenize(line)
	if err != nil || len(argv) == 0 {
		return nil
	}
	_, argv, ok := splitRepeat(argv)
	if !ok {
		return nil
	}
	name := strings.ToUpper(argv[0])
	cmd, ok := lookupCommand(name)
	if !ok {
		return nil
	}
	if cmd.first == 0 && len(argv) > 1 {
		if sub, ok := lookupCommand(name + "|" + strings.ToUpper(argv[1])); ok {
			cmd = sub
		}
	}
	var keys []string
	switch name {
	case "EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO", "FCALL", "FCALL_RO":
		if len(argv) > 2 {
			if n, ok := parseInt(argv[2]); ok && n > 0 {
				keys = argv[3:min(3+int(min(n, int64(len(argv)))), len(argv))]
			}
		}
	default:
		keys = cmd.keys(argv)
	}
	out := make([]string, 0, len(keys))
	seen := make(map[string]struct{}, len(keys))
	for _, k := range keys {
		if _, dup := seen[k]; !dup {
			seen[k] = struct{}{}
			out = append(out, k)
		}
	}
	return out
}
