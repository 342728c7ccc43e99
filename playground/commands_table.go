// Code generated from the COMMAND reply of Redis 7.0.15; DO NOT EDIT by hand
// except to follow a newer Redis. TestCommandTableMatchesRedis checks it
// against a real redis-server.

package playground

// lookupCommand returns what Redis 7 says about the command name (upper
// case): its arity, flags and key positions. Subcommands are named
// "SCRIPT|LOAD".
func lookupCommand(name string) (command, bool) {
	switch name {
	case "ACL":
		return command{"acl", -2, 0, 0, 0, 0}, true
	case "ACL|LOAD":
		return command{"acl|load", 2, flagNoScript, 0, 0, 0}, true
	case "ACL|DELUSER":
		return command{"acl|deluser", -3, flagNoScript, 0, 0, 0}, true
	case "ACL|GENPASS":
		return command{"acl|genpass", -2, flagNoScript, 0, 0, 0}, true
	case "ACL|WHOAMI":
		return command{"acl|whoami", 2, flagNoScript, 0, 0, 0}, true
	case "ACL|LOG":
		return command{"acl|log", -2, flagNoScript, 0, 0, 0}, true
	case "ACL|USERS":
		return command{"acl|users", 2, flagNoScript, 0, 0, 0}, true
	case "ACL|DRYRUN":
		return command{"acl|dryrun", -4, flagNoScript, 0, 0, 0}, true
	case "ACL|CAT":
		return command{"acl|cat", -2, flagNoScript, 0, 0, 0}, true
	case "ACL|SAVE":
		return command{"acl|save", 2, flagNoScript, 0, 0, 0}, true
	case "ACL|LIST":
		return command{"acl|list", 2, flagNoScript, 0, 0, 0}, true
	case "ACL|HELP":
		return command{"acl|help", 2, 0, 0, 0, 0}, true
	case "ACL|SETUSER":
		return command{"acl|setuser", -3, flagNoScript, 0, 0, 0}, true
	case "ACL|GETUSER":
		return command{"acl|getuser", 3, flagNoScript, 0, 0, 0}, true
	case "APPEND":
		return command{"append", 3, flagWrite, 1, 1, 1}, true
	case "ASKING":
		return command{"asking", 1, 0, 0, 0, 0}, true
	case "AUTH":
		return command{"auth", -2, flagNoScript, 0, 0, 0}, true
	case "BGREWRITEAOF":
		return command{"bgrewriteaof", 1, flagNoScript, 0, 0, 0}, true
	case "BGSAVE":
		return command{"bgsave", -1, flagNoScript, 0, 0, 0}, true
	case "BITCOUNT":
		return command{"bitcount", -2, flagReadOnly, 1, 1, 1}, true
	case "BITFIELD":
		return command{"bitfield", -2, flagWrite, 1, 1, 1}, true
	case "BITFIELD_RO":
		return command{"bitfield_ro", -2, flagReadOnly, 1, 1, 1}, true
	case "BITOP":
		return command{"bitop", -4, flagWrite, 2, -1, 1}, true
	case "BITPOS":
		return command{"bitpos", -3, flagReadOnly, 1, 1, 1}, true
	case "BLMOVE":
		return command{"blmove", 6, flagWrite | flagNoScript | flagBlocking, 1, 2, 1}, true
	case "BLMPOP":
		return command{"blmpop", -5, flagWrite | flagBlocking | flagMovableKeys, 0, 0, 0}, true
	case "BLPOP":
		return command{"blpop", -3, flagWrite | flagNoScript | flagBlocking, 1, -2, 1}, true
	case "BRPOP":
		return command{"brpop", -3, flagWrite | flagNoScript | flagBlocking, 1, -2, 1}, true
	case "BRPOPLPUSH":
		return command{"brpoplpush", 4, flagWrite | flagNoScript | flagBlocking, 1, 2, 1}, true
	case "BZMPOP":
		return command{"bzmpop", -5, flagWrite | flagBlocking | flagMovableKeys, 0, 0, 0}, true
	case "BZPOPMAX":
		return command{"bzpopmax", -3, flagWrite | flagNoScript | flagBlocking, 1, -2, 1}, true
	case "BZPOPMIN":
		return command{"bzpopmin", -3, flagWrite | flagNoScript | flagBlocking, 1, -2, 1}, true
	case "CLIENT":
		return command{"client", -2, 0, 0, 0, 0}, true
	case "CLIENT|ID":
		return command{"client|id", 2, flagNoScript, 0, 0, 0}, true
	case "CLIENT|UNBLOCK":
		return command{"client|unblock", -3, flagNoScript, 0, 0, 0}, true
	case "CLIENT|GETNAME":
		return command{"client|getname", 2, flagNoScript, 0, 0, 0}, true
	case "CLIENT|TRACKINGINFO":
		return command{"client|trackinginfo", 2, flagNoScript, 0, 0, 0}, true
	case "CLIENT|REPLY":
		return command{"client|reply", 3, flagNoScript, 0, 0, 0}, true
	case "CLIENT|SETNAME":
		return command{"client|setname", 3, flagNoScript, 0, 0, 0}, true
	case "CLIENT|GETREDIR":
		return command{"client|getredir", 2, flagNoScript, 0, 0, 0}, true
	case "CLIENT|CACHING":
		return command{"client|caching", 3, flagNoScript, 0, 0, 0}, true
	case "CLIENT|LIST":
		return command{"client|list", -2, flagNoScript, 0, 0, 0}, true
	case "CLIENT|INFO":
		return command{"client|info", 2, flagNoScript, 0, 0, 0}, true
	case "CLIENT|KILL":
		return command{"client|kill", -3, flagNoScript, 0, 0, 0}, true
	case "CLIENT|HELP":
		return command{"client|help", 2, 0, 0, 0, 0}, true
	case "CLIENT|TRACKING":
		return command{"client|tracking", -3, flagNoScript, 0, 0, 0}, true
	case "CLIENT|PAUSE":
		return command{"client|pause", -3, flagNoScript, 0, 0, 0}, true
	case "CLIENT|NO-EVICT":
		return command{"client|no-evict", 3, flagNoScript, 0, 0, 0}, true
	case "CLIENT|UNPAUSE":
		return command{"client|unpause", 2, flagNoScript, 0, 0, 0}, true
	case "CLUSTER":
		return command{"cluster", -2, 0, 0, 0, 0}, true
	case "CLUSTER|NODES":
		return command{"cluster|nodes", 2, 0, 0, 0, 0}, true
	case "CLUSTER|BUMPEPOCH":
		return command{"cluster|bumpepoch", 2, 0, 0, 0, 0}, true
	case "CLUSTER|SAVECONFIG":
		return command{"cluster|saveconfig", 2, 0, 0, 0, 0}, true
	case "CLUSTER|SLOTS":
		return command{"cluster|slots", 2, 0, 0, 0, 0}, true
	case "CLUSTER|ADDSLOTSRANGE":
		return command{"cluster|addslotsrange", -4, 0, 0, 0, 0}, true
	case "CLUSTER|KEYSLOT":
		return command{"cluster|keyslot", 3, 0, 0, 0, 0}, true
	case "CLUSTER|REPLICAS":
		return command{"cluster|replicas", 3, 0, 0, 0, 0}, true
	case "CLUSTER|FAILOVER":
		return command{"cluster|failover", -2, 0, 0, 0, 0}, true
	case "CLUSTER|SET-CONFIG-EPOCH":
		return command{"cluster|set-config-epoch", 3, 0, 0, 0, 0}, true
	case "CLUSTER|MEET":
		return command{"cluster|meet", -4, 0, 0, 0, 0}, true
	case "CLUSTER|HELP":
		return command{"cluster|help", 2, 0, 0, 0, 0}, true
	case "CLUSTER|COUNT-FAILURE-REPORTS":
		return command{"cluster|count-failure-reports", 3, 0, 0, 0, 0}, true
	case "CLUSTER|DELSLOTS":
		return command{"cluster|delslots", -3, 0, 0, 0, 0}, true
	case "CLUSTER|RESET":
		return command{"cluster|reset", -2, flagNoScript, 0, 0, 0}, true
	case "CLUSTER|COUNTKEYSINSLOT":
		return command{"cluster|countkeysinslot", 3, 0, 0, 0, 0}, true
	case "CLUSTER|FLUSHSLOTS":
		return command{"cluster|flushslots", 2, 0, 0, 0, 0}, true
	case "CLUSTER|REPLICATE":
		return command{"cluster|replicate", 3, 0, 0, 0, 0}, true
	case "CLUSTER|GETKEYSINSLOT":
		return command{"cluster|getkeysinslot", 4, 0, 0, 0, 0}, true
	case "CLUSTER|DELSLOTSRANGE":
		return command{"cluster|delslotsrange", -4, 0, 0, 0, 0}, true
	case "CLUSTER|ADDSLOTS":
		return command{"cluster|addslots", -3, 0, 0, 0, 0}, true
	case "CLUSTER|SHARDS":
		return command{"cluster|shards", 2, 0, 0, 0, 0}, true
	case "CLUSTER|MYID":
		return command{"cluster|myid", 2, 0, 0, 0, 0}, true
	case "CLUSTER|SETSLOT":
		return command{"cluster|setslot", -4, 0, 0, 0, 0}, true
	case "CLUSTER|LINKS":
		return command{"cluster|links", 2, 0, 0, 0, 0}, true
	case "CLUSTER|FORGET":
		return command{"cluster|forget", 3, 0, 0, 0, 0}, true
	case "CLUSTER|INFO":
		return command{"cluster|info", 2, 0, 0, 0, 0}, true
	case "CLUSTER|SLAVES":
		return command{"cluster|slaves", 3, 0, 0, 0, 0}, true
	case "COMMAND":
		return command{"command", -1, 0, 0, 0, 0}, true
	case "COMMAND|DOCS":
		return command{"command|docs", -2, 0, 0, 0, 0}, true
	case "COMMAND|LIST":
		return command{"command|list", -2, 0, 0, 0, 0}, true
	case "COMMAND|COUNT":
		return command{"command|count", 2, 0, 0, 0, 0}, true
	case "COMMAND|INFO":
		return command{"command|info", -2, 0, 0, 0, 0}, true
	case "COMMAND|GETKEYS":
		return command{"command|getkeys", -4, 0, 0, 0, 0}, true
	case "COMMAND|GETKEYSANDFLAGS":
		return command{"command|getkeysandflags", -4, 0, 0, 0, 0}, true
	case "COMMAND|HELP":
		return command{"command|help", 2, 0, 0, 0, 0}, true
	case "CONFIG":
		return command{"config", -2, 0, 0, 0, 0}, true
	case "CONFIG|RESETSTAT":
		return command{"config|resetstat", 2, flagNoScript, 0, 0, 0}, true
	case "CONFIG|HELP":
		return command{"config|help", 2, 0, 0, 0, 0}, true
	case "CONFIG|GET":
		return command{"config|get", -3, flagNoScript, 0, 0, 0}, true
	case "CONFIG|REWRITE":
		return command{"config|rewrite", 2, flagNoScript, 0, 0, 0}, true
	case "CONFIG|SET":
		return command{"config|set", -4, flagNoScript, 0, 0, 0}, true
	case "COPY":
		return command{"copy", -3, flagWrite, 1, 2, 1}, true
	case "DBSIZE":
		return command{"dbsize", 1, flagReadOnly, 0, 0, 0}, true
	case "DEBUG":
		return command{"debug", -2, flagNoScript, 0, 0, 0}, true
	case "DECR":
		return command{"decr", 2, flagWrite, 1, 1, 1}, true
	case "DECRBY":
		return command{"decrby", 3, flagWrite, 1, 1, 1}, true
	case "DEL":
		return command{"del", -2, flagWrite, 1, -1, 1}, true
	case "DISCARD":
		return command{"discard", 1, flagNoScript, 0, 0, 0}, true
	case "DUMP":
		return command{"dump", 2, flagReadOnly, 1, 1, 1}, true
	case "ECHO":
		return command{"echo", 2, 0, 0, 0, 0}, true
	case "EVAL":
		return command{"eval", -3, flagNoScript | flagMovableKeys, 0, 0, 0}, true
	case "EVALSHA":
		return command{"evalsha", -3, flagNoScript | flagMovableKeys, 0, 0, 0}, true
	case "EVALSHA_RO":
		return command{"evalsha_ro", -3, flagReadOnly | flagNoScript | flagMovableKeys, 0, 0, 0}, true
	case "EVAL_RO":
		return command{"eval_ro", -3, flagReadOnly | flagNoScript | flagMovableKeys, 0, 0, 0}, true
	case "EXEC":
		return command{"exec", 1, flagNoScript, 0, 0, 0}, true
	case "EXISTS":
		return command{"exists", -2, flagReadOnly, 1, -1, 1}, true
	case "EXPIRE":
		return command{"expire", -3, flagWrite, 1, 1, 1}, true
	case "EXPIREAT":
		return command{"expireat", -3, flagWrite, 1, 1, 1}, true
	case "EXPIRETIME":
		return command{"expiretime", 2, flagReadOnly, 1, 1, 1}, true
	case "FAILOVER":
		return command{"failover", -1, flagNoScript, 0, 0, 0}, true
	case "FCALL":
		return command{"fcall", -3, flagNoScript | flagMovableKeys, 0, 0, 0}, true
	case "FCALL_RO":
		return command{"fcall_ro", -3, flagReadOnly | flagNoScript | flagMovableKeys, 0, 0, 0}, true
	case "FLUSHALL":
		return command{"flushall", -1, flagWrite, 0, 0, 0}, true
	case "FLUSHDB":
		return command{"flushdb", -1, flagWrite, 0, 0, 0}, true
	case "FUNCTION":
		return command{"function", -2, 0, 0, 0, 0}, true
	case "FUNCTION|RESTORE":
		return command{"function|restore", -3, flagWrite | flagNoScript, 0, 0, 0}, true
	case "FUNCTION|DUMP":
		return command{"function|dump", 2, flagNoScript, 0, 0, 0}, true
	case "FUNCTION|LIST":
		return command{"function|list", -2, flagNoScript, 0, 0, 0}, true
	case "FUNCTION|DELETE":
		return command{"function|delete", 3, flagWrite | flagNoScript, 0, 0, 0}, true
	case "FUNCTION|FLUSH":
		return command{"function|flush", -2, flagWrite | flagNoScript, 0, 0, 0}, true
	case "FUNCTION|KILL":
		return command{"function|kill", 2, flagNoScript, 0, 0, 0}, true
	case "FUNCTION|HELP":
		return command{"function|help", 2, 0, 0, 0, 0}, true
	case "FUNCTION|LOAD":
		return command{"function|load", -3, flagWrite | flagNoScript, 0, 0, 0}, true
	case "FUNCTION|STATS":
		return command{"function|stats", 2, flagNoScript, 0, 0, 0}, true
	case "GEOADD":
		return command{"geoadd", -5, flagWrite, 1, 1, 1}, true
	case "GEODIST":
		return command{"geodist", -4, flagReadOnly, 1, 1, 1}, true
	case "GEOHASH":
		return command{"geohash", -2, flagReadOnly, 1, 1, 1}, true
	case "GEOPOS":
		return command{"geopos", -2, flagReadOnly, 1, 1, 1}, true
	case "GEORADIUS":
		return command{"georadius", -6, flagWrite | flagMovableKeys, 1, 1, 1}, true
	case "GEORADIUSBYMEMBER":
		return command{"georadiusbymember", -5, flagWrite | flagMovableKeys, 1, 1, 1}, true
	case "GEORADIUSBYMEMBER_RO":
		return command{"georadiusbymember_ro", -5, flagReadOnly, 1, 1, 1}, true
	case "GEORADIUS_RO":
		return command{"georadius_ro", -6, flagReadOnly, 1, 1, 1}, true
	case "GEOSEARCH":
		return command{"geosearch", -7, flagReadOnly, 1, 1, 1}, true
	case "GEOSEARCHSTORE":
		return command{"geosearchstore", -8, flagWrite, 1, 2, 1}, true
	case "GET":
		return command{"get", 2, flagReadOnly, 1, 1, 1}, true
	case "GETBIT":
		return command{"getbit", 3, flagReadOnly, 1, 1, 1}, true
	case "GETDEL":
		return command{"getdel", 2, flagWrite, 1, 1, 1}, true
	case "GETEX":
		return command{"getex", -2, flagWrite, 1, 1, 1}, true
	case "GETRANGE":
		return command{"getrange", 4, flagReadOnly, 1, 1, 1}, true
	case "GETSET":
		return command{"getset", 3, flagWrite, 1, 1, 1}, true
	case "HDEL":
		return command{"hdel", -3, flagWrite, 1, 1, 1}, true
	case "HELLO":
		return command{"hello", -1, flagNoScript, 0, 0, 0}, true
	case "HEXISTS":
		return command{"hexists", 3, flagReadOnly, 1, 1, 1}, true
	case "HGET":
		return command{"hget", 3, flagReadOnly, 1, 1, 1}, true
	case "HGETALL":
		return command{"hgetall", 2, flagReadOnly, 1, 1, 1}, true
	case "HINCRBY":
		return command{"hincrby", 4, flagWrite, 1, 1, 1}, true
	case "HINCRBYFLOAT":
		return command{"hincrbyfloat", 4, flagWrite, 1, 1, 1}, true
	case "HKEYS":
		return command{"hkeys", 2, flagReadOnly, 1, 1, 1}, true
	case "HLEN":
		return command{"hlen", 2, flagReadOnly, 1, 1, 1}, true
	case "HMGET":
		return command{"hmget", -3, flagReadOnly, 1, 1, 1}, true
	case "HMSET":
		return command{"hmset", -4, flagWrite, 1, 1, 1}, true
	case "HRANDFIELD":
		return command{"hrandfield", -2, flagReadOnly, 1, 1, 1}, true
	case "HSCAN":
		return command{"hscan", -3, flagReadOnly, 1, 1, 1}, true
	case "HSET":
		return command{"hset", -4, flagWrite, 1, 1, 1}, true
	case "HSETNX":
		return command{"hsetnx", 4, flagWrite, 1, 1, 1}, true
	case "HSTRLEN":
		return command{"hstrlen", 3, flagReadOnly, 1, 1, 1}, true
	case "HVALS":
		return command{"hvals", 2, flagReadOnly, 1, 1, 1}, true
	case "INCR":
		return command{"incr", 2, flagWrite, 1, 1, 1}, true
	case "INCRBY":
		return command{"incrby", 3, flagWrite, 1, 1, 1}, true
	case "INCRBYFLOAT":
		return command{"incrbyfloat", 3, flagWrite, 1, 1, 1}, true
	case "INFO":
		return command{"info", -1, 0, 0, 0, 0}, true
	case "KEYS":
		return command{"keys", 2, flagReadOnly, 0, 0, 0}, true
	case "LASTSAVE":
		return command{"lastsave", 1, 0, 0, 0, 0}, true
	case "LATENCY":
		return command{"latency", -2, 0, 0, 0, 0}, true
	case "LATENCY|HISTOGRAM":
		return command{"latency|histogram", -2, flagNoScript, 0, 0, 0}, true
	case "LATENCY|HISTORY":
		return command{"latency|history", 3, flagNoScript, 0, 0, 0}, true
	case "LATENCY|LATEST":
		return command{"latency|latest", 2, flagNoScript, 0, 0, 0}, true
	case "LATENCY|GRAPH":
		return command{"latency|graph", 3, flagNoScript, 0, 0, 0}, true
	case "LATENCY|DOCTOR":
		return command{"latency|doctor", 2, flagNoScript, 0, 0, 0}, true
	case "LATENCY|HELP":
		return command{"latency|help", 2, 0, 0, 0, 0}, true
	case "LATENCY|RESET":
		return command{"latency|reset", -2, flagNoScript, 0, 0, 0}, true
	case "LCS":
		return command{"lcs", -3, flagReadOnly, 1, 2, 1}, true
	case "LINDEX":
		return command{"lindex", 3, flagReadOnly, 1, 1, 1}, true
	case "LINSERT":
		return command{"linsert", 5, flagWrite, 1, 1, 1}, true
	case "LLEN":
		return command{"llen", 2, flagReadOnly, 1, 1, 1}, true
	case "LMOVE":
		return command{"lmove", 5, flagWrite, 1, 2, 1}, true
	case "LMPOP":
		return command{"lmpop", -4, flagWrite | flagMovableKeys, 0, 0, 0}, true
	case "LOLWUT":
		return command{"lolwut", -1, flagReadOnly, 0, 0, 0}, true
	case "LPOP":
		return command{"lpop", -2, flagWrite, 1, 1, 1}, true
	case "LPOS":
		return command{"lpos", -3, flagReadOnly, 1, 1, 1}, true
	case "LPUSH":
		return command{"lpush", -3, flagWrite, 1, 1, 1}, true
	case "LPUSHX":
		return command{"lpushx", -3, flagWrite, 1, 1, 1}, true
	case "LRANGE":
		return command{"lrange", 4, flagReadOnly, 1, 1, 1}, true
	case "LREM":
		return command{"lrem", 4, flagWrite, 1, 1, 1}, true
	case "LSET":
		return command{"lset", 4, flagWrite, 1, 1, 1}, true
	case "LTRIM":
		return command{"ltrim", 4, flagWrite, 1, 1, 1}, true
	case "MEMORY":
		return command{"memory", -2, 0, 0, 0, 0}, true
	case "MEMORY|PURGE":
		return command{"memory|purge", 2, 0, 0, 0, 0}, true
	case "MEMORY|MALLOC-STATS":
		return command{"memory|malloc-stats", 2, 0, 0, 0, 0}, true
	case "MEMORY|STATS":
		return command{"memory|stats", 2, 0, 0, 0, 0}, true
	case "MEMORY|USAGE":
		return command{"memory|usage", -3, flagReadOnly, 0, 0, 0}, true
	case "MEMORY|DOCTOR":
		return command{"memory|doctor", 2, 0, 0, 0, 0}, true
	case "MEMORY|HELP":
		return command{"memory|help", 2, 0, 0, 0, 0}, true
	case "MGET":
		return command{"mget", -2, flagReadOnly, 1, -1, 1}, true
	case "MIGRATE":
		return command{"migrate", -6, flagWrite | flagMovableKeys, 3, 3, 1}, true
	case "MODULE":
		return command{"module", -2, 0, 0, 0, 0}, true
	case "MODULE|HELP":
		return command{"module|help", 2, 0, 0, 0, 0}, true
	case "MODULE|LIST":
		return command{"module|list", 2, flagNoScript, 0, 0, 0}, true
	case "MODULE|LOADEX":
		return command{"module|loadex", -3, flagNoScript, 0, 0, 0}, true
	case "MODULE|LOAD":
		return command{"module|load", -3, flagNoScript, 0, 0, 0}, true
	case "MODULE|UNLOAD":
		return command{"module|unload", 3, flagNoScript, 0, 0, 0}, true
	case "MONITOR":
		return command{"monitor", 1, flagNoScript, 0, 0, 0}, true
	case "MOVE":
		return command{"move", 3, flagWrite, 1, 1, 1}, true
	case "MSET":
		return command{"mset", -3, flagWrite, 1, -1, 2}, true
	case "MSETNX":
		return command{"msetnx", -3, flagWrite, 1, -1, 2}, true
	case "MULTI":
		return command{"multi", 1, flagNoScript, 0, 0, 0}, true
	case "OBJECT":
		return command{"object", -2, 0, 0, 0, 0}, true
	case "OBJECT|IDLETIME":
		return command{"object|idletime", 3, flagReadOnly, 0, 0, 0}, true
	case "OBJECT|HELP":
		return command{"object|help", 2, 0, 0, 0, 0}, true
	case "OBJECT|FREQ":
		return command{"object|freq", 3, flagReadOnly, 0, 0, 0}, true
	case "OBJECT|ENCODING":
		return command{"object|encoding", 3, flagReadOnly, 0, 0, 0}, true
	case "OBJECT|REFCOUNT":
		return command{"object|refcount", 3, flagReadOnly, 0, 0, 0}, true
	case "PERSIST":
		return command{"persist", 2, flagWrite, 1, 1, 1}, true
	case "PEXPIRE":
		return command{"pexpire", -3, flagWrite, 1, 1, 1}, true
	case "PEXPIREAT":
		return command{"pexpireat", -3, flagWrite, 1, 1, 1}, true
	case "PEXPIRETIME":
		return command{"pexpiretime", 2, flagReadOnly, 1, 1, 1}, true
	case "PFADD":
		return command{"pfadd", -2, flagWrite, 1, 1, 1}, true
	case "PFCOUNT":
		return command{"pfcount", -2, flagReadOnly, 1, -1, 1}, true
	case "PFDEBUG":
		return command{"pfdebug", 3, flagWrite, 2, 2, 1}, true
	case "PFMERGE":
		return command{"pfmerge", -2, flagWrite, 1, -1, 1}, true
	case "PFSELFTEST":
		return command{"pfselftest", 1, 0, 0, 0, 0}, true
	case "PING":
		return command{"ping", -1, 0, 0, 0, 0}, true
	case "PSETEX":
		return command{"psetex", 4, flagWrite, 1, 1, 1}, true
	case "PSUBSCRIBE":
		return command{"psubscribe", -2, flagPubSub | flagNoScript, 0, 0, 0}, true
	case "PSYNC":
		return command{"psync", -3, flagNoScript, 0, 0, 0}, true
	case "PTTL":
		return command{"pttl", 2, flagReadOnly, 1, 1, 1}, true
	case "PUBLISH":
		return command{"publish", 3, flagPubSub, 0, 0, 0}, true
	case "PUBSUB":
		return command{"pubsub", -2, 0, 0, 0, 0}, true
	case "PUBSUB|NUMPAT":
		return command{"pubsub|numpat", 2, flagPubSub, 0, 0, 0}, true
	case "PUBSUB|HELP":
		return command{"pubsub|help", 2, 0, 0, 0, 0}, true
	case "PUBSUB|CHANNELS":
		return command{"pubsub|channels", -2, flagPubSub, 0, 0, 0}, true
	case "PUBSUB|SHARDNUMSUB":
		return command{"pubsub|shardnumsub", -2, flagPubSub, 0, 0, 0}, true
	case "PUBSUB|NUMSUB":
		return command{"pubsub|numsub", -2, flagPubSub, 0, 0, 0}, true
	case "PUBSUB|SHARDCHANNELS":
		return command{"pubsub|shardchannels", -2, flagPubSub, 0, 0, 0}, true
	case "PUNSUBSCRIBE":
		return command{"punsubscribe", -1, flagPubSub | flagNoScript, 0, 0, 0}, true
	case "QUIT":
		return command{"quit", -1, flagNoScript, 0, 0, 0}, true
	case "RANDOMKEY":
		return command{"randomkey", 1, flagReadOnly, 0, 0, 0}, true
	case "READONLY":
		return command{"readonly", 1, 0, 0, 0, 0}, true
	case "READWRITE":
		return command{"readwrite", 1, 0, 0, 0, 0}, true
	case "RENAME":
		return command{"rename", 3, flagWrite, 1, 2, 1}, true
	case "RENAMENX":
		return command{"renamenx", 3, flagWrite, 1, 2, 1}, true
	case "REPLCONF":
		return command{"replconf", -1, flagNoScript, 0, 0, 0}, true
	case "REPLICAOF":
		return command{"replicaof", 3, flagNoScript, 0, 0, 0}, true
	case "RESET":
		return command{"reset", 1, flagNoScript, 0, 0, 0}, true
	case "RESTORE":
		return command{"restore", -4, flagWrite, 1, 1, 1}, true
	case "RESTORE-ASKING":
		return command{"restore-asking", -4, flagWrite, 1, 1, 1}, true
	case "ROLE":
		return command{"role", 1, flagNoScript, 0, 0, 0}, true
	case "RPOP":
		return command{"rpop", -2, flagWrite, 1, 1, 1}, true
	case "RPOPLPUSH":
		return command{"rpoplpush", 3, flagWrite, 1, 2, 1}, true
	case "RPUSH":
		return command{"rpush", -3, flagWrite, 1, 1, 1}, true
	case "RPUSHX":
		return command{"rpushx", -3, flagWrite, 1, 1, 1}, true
	case "SADD":
		return command{"sadd", -3, flagWrite, 1, 1, 1}, true
	case "SAVE":
		return command{"save", 1, flagNoScript, 0, 0, 0}, true
	case "SCAN":
		return command{"scan", -2, flagReadOnly, 0, 0, 0}, true
	case "SCARD":
		return command{"scard", 2, flagReadOnly, 1, 1, 1}, true
	case "SCRIPT":
		return command{"script", -2, 0, 0, 0, 0}, true
	case "SCRIPT|FLUSH":
		return command{"script|flush", -2, flagNoScript, 0, 0, 0}, true
	case "SCRIPT|DEBUG":
		return command{"script|debug", 3, flagNoScript, 0, 0, 0}, true
	case "SCRIPT|EXISTS":
		return command{"script|exists", -3, flagNoScript, 0, 0, 0}, true
	case "SCRIPT|KILL":
		return command{"script|kill", 2, flagNoScript, 0, 0, 0}, true
	case "SCRIPT|HELP":
		return command{"script|help", 2, 0, 0, 0, 0}, true
	case "SCRIPT|LOAD":
		return command{"script|load", 3, flagNoScript, 0, 0, 0}, true
	case "SDIFF":
		return command{"sdiff", -2, flagReadOnly, 1, -1, 1}, true
	case "SDIFFSTORE":
		return command{"sdiffstore", -3, flagWrite, 1, -1, 1}, true
	case "SELECT":
		return command{"select", 2, 0, 0, 0, 0}, true
	case "SET":
		return command{"set", -3, flagWrite, 1, 1, 1}, true
	case "SETBIT":
		return command{"setbit", 4, flagWrite, 1, 1, 1}, true
	case "SETEX":
		return command{"setex", 4, flagWrite, 1, 1, 1}, true
	case "SETNX":
		return command{"setnx", 3, flagWrite, 1, 1, 1}, true
	case "SETRANGE":
		return command{"setrange", 4, flagWrite, 1, 1, 1}, true
	case "SHUTDOWN":
		return command{"shutdown", -1, flagNoScript, 0, 0, 0}, true
	case "SINTER":
		return command{"sinter", -2, flagReadOnly, 1, -1, 1}, true
	case "SINTERCARD":
		return command{"sintercard", -3, flagReadOnly | flagMovableKeys, 0, 0, 0}, true
	case "SINTERSTORE":
		return command{"sinterstore", -3, flagWrite, 1, -1, 1}, true
	case "SISMEMBER":
		return command{"sismember", 3, flagReadOnly, 1, 1, 1}, true
	case "SLAVEOF":
		return command{"slaveof", 3, flagNoScript, 0, 0, 0}, true
	case "SLOWLOG":
		return command{"slowlog", -2, 0, 0, 0, 0}, true
	case "SLOWLOG|HELP":
		return command{"slowlog|help", 2, 0, 0, 0, 0}, true
	case "SLOWLOG|GET":
		return command{"slowlog|get", -2, 0, 0, 0, 0}, true
	case "SLOWLOG|LEN":
		return command{"slowlog|len", 2, 0, 0, 0, 0}, true
	case "SLOWLOG|RESET":
		return command{"slowlog|reset", 2, 0, 0, 0, 0}, true
	case "SMEMBERS":
		return command{"smembers", 2, flagReadOnly, 1, 1, 1}, true
	case "SMISMEMBER":
		return command{"smismember", -3, flagReadOnly, 1, 1, 1}, true
	case "SMOVE":
		return command{"smove", 4, flagWrite, 1, 2, 1}, true
	case "SORT":
		return command{"sort", -2, flagWrite | flagMovableKeys, 1, 1, 1}, true
	case "SORT_RO":
		return command{"sort_ro", -2, flagReadOnly | flagMovableKeys, 1, 1, 1}, true
	case "SPOP":
		return command{"spop", -2, flagWrite, 1, 1, 1}, true
	case "SPUBLISH":
		return command{"spublish", 3, flagPubSub, 1, 1, 1}, true
	case "SRANDMEMBER":
		return command{"srandmember", -2, flagReadOnly, 1, 1, 1}, true
	case "SREM":
		return command{"srem", -3, flagWrite, 1, 1, 1}, true
	case "SSCAN":
		return command{"sscan", -3, flagReadOnly, 1, 1, 1}, true
	case "SSUBSCRIBE":
		return command{"ssubscribe", -2, flagPubSub | flagNoScript, 1, -1, 1}, true
	case "STRLEN":
		return command{"strlen", 2, flagReadOnly, 1, 1, 1}, true
	case "SUBSCRIBE":
		return command{"subscribe", -2, flagPubSub | flagNoScript, 0, 0, 0}, true
	case "SUBSTR":
		return command{"substr", 4, flagReadOnly, 1, 1, 1}, true
	case "SUNION":
		return command{"sunion", -2, flagReadOnly, 1, -1, 1}, true
	case "SUNIONSTORE":
		return command{"sunionstore", -3, flagWrite, 1, -1, 1}, true
	case "SUNSUBSCRIBE":
		return command{"sunsubscribe", -1, flagPubSub | flagNoScript, 1, -1, 1}, true
	case "SWAPDB":
		return command{"swapdb", 3, flagWrite, 0, 0, 0}, true
	case "SYNC":
		return command{"sync", 1, flagNoScript, 0, 0, 0}, true
	case "TIME":
		return command{"time", 1, 0, 0, 0, 0}, true
	case "TOUCH":
		return command{"touch", -2, flagReadOnly, 1, -1, 1}, true
	case "TTL":
		return command{"ttl", 2, flagReadOnly, 1, 1, 1}, true
	case "TYPE":
		return command{"type", 2, flagReadOnly, 1, 1, 1}, true
	case "UNLINK":
		return command{"unlink", -2, flagWrite, 1, -1, 1}, true
	case "UNSUBSCRIBE":
		return command{"unsubscribe", -1, flagPubSub | flagNoScript, 0, 0, 0}, true
	case "UNWATCH":
		return command{"unwatch", 1, flagNoScript, 0, 0, 0}, true
	case "WAIT":
		return command{"wait", 3, flagNoScript, 0, 0, 0}, true
	case "WATCH":
		return command{"watch", -2, flagNoScript, 1, -1, 1}, true
	case "XACK":
		return command{"xack", -4, flagWrite, 1, 1, 1}, true
	case "XADD":
		return command{"xadd", -5, flagWrite, 1, 1, 1}, true
	case "XAUTOCLAIM":
		return command{"xautoclaim", -6, flagWrite, 1, 1, 1}, true
	case "XCLAIM":
		return command{"xclaim", -6, flagWrite, 1, 1, 1}, true
	case "XDEL":
		return command{"xdel", -3, flagWrite, 1, 1, 1}, true
	case "XGROUP":
		return command{"xgroup", -2, 0, 0, 0, 0}, true
	case "XGROUP|CREATE":
		return command{"xgroup|create", -5, flagWrite, 0, 0, 0}, true
	case "XGROUP|DELCONSUMER":
		return command{"xgroup|delconsumer", 5, flagWrite, 0, 0, 0}, true
	case "XGROUP|DESTROY":
		return command{"xgroup|destroy", 4, flagWrite, 0, 0, 0}, true
	case "XGROUP|SETID":
		return command{"xgroup|setid", -5, flagWrite, 0, 0, 0}, true
	case "XGROUP|CREATECONSUMER":
		return command{"xgroup|createconsumer", 5, flagWrite, 0, 0, 0}, true
	case "XGROUP|HELP":
		return command{"xgroup|help", 2, 0, 0, 0, 0}, true
	case "XINFO":
		return command{"xinfo", -2, 0, 0, 0, 0}, true
	case "XINFO|HELP":
		return command{"xinfo|help", 2, 0, 0, 0, 0}, true
	case "XINFO|CONSUMERS":
		return command{"xinfo|consumers", 4, flagReadOnly, 0, 0, 0}, true
	case "XINFO|STREAM":
		return command{"xinfo|stream", -3, flagReadOnly, 0, 0, 0}, true
	case "XINFO|GROUPS":
		return command{"xinfo|groups", 3, flagReadOnly, 0, 0, 0}, true
	case "XLEN":
		return command{"xlen", 2, flagReadOnly, 1, 1, 1}, true
	case "XPENDING":
		return command{"xpending", -3, flagReadOnly, 1, 1, 1}, true
	case "XRANGE":
		return command{"xrange", -4, flagReadOnly, 1, 1, 1}, true
	case "XREAD":
		return command{"xread", -4, flagReadOnly | flagBlocking | flagMovableKeys, 0, 0, 0}, true
	case "XREADGROUP":
		return command{"xreadgroup", -7, flagWrite | flagBlocking | flagMovableKeys, 0, 0, 0}, true
	case "XREVRANGE":
		return command{"xrevrange", -4, flagReadOnly, 1, 1, 1}, true
	case "XSETID":
		return command{"xsetid", -3, flagWrite, 1, 1, 1}, true
	case "XTRIM":
		return command{"xtrim", -4, flagWrite, 1, 1, 1}, true
	case "ZADD":
		return command{"zadd", -4, flagWrite, 1, 1, 1}, true
	case "ZCARD":
		return command{"zcard", 2, flagReadOnly, 1, 1, 1}, true
	case "ZCOUNT":
		return command{"zcount", 4, flagReadOnly, 1, 1, 1}, true
	case "ZDIFF":
		return command{"zdiff", -3, flagReadOnly | flagMovableKeys, 0, 0, 0}, true
	case "ZDIFFSTORE":
		return command{"zdiffstore", -4, flagWrite | flagMovableKeys, 1, 1, 1}, true
	case "ZINCRBY":
		return command{"zincrby", 4, flagWrite, 1, 1, 1}, true
	case "ZINTER":
		return command{"zinter", -3, flagReadOnly | flagMovableKeys, 0, 0, 0}, true
	case "ZINTERCARD":
		return command{"zintercard", -3, flagReadOnly | flagMovableKeys, 0, 0, 0}, true
	case "ZINTERSTORE":
		return command{"zinterstore", -4, flagWrite | flagMovableKeys, 1, 1, 1}, true
	case "ZLEXCOUNT":
		return command{"zlexcount", 4, flagReadOnly, 1, 1, 1}, true
	case "ZMPOP":
		return command{"zmpop", -4, flagWrite | flagMovableKeys, 0, 0, 0}, true
	case "ZMSCORE":
		return command{"zmscore", -3, flagReadOnly, 1, 1, 1}, true
	case "ZPOPMAX":
		return command{"zpopmax", -2, flagWrite, 1, 1, 1}, true
	case "ZPOPMIN":
		return command{"zpopmin", -2, flagWrite, 1, 1, 1}, true
	case "ZRANDMEMBER":
		return command{"zrandmember", -2, flagReadOnly, 1, 1, 1}, true
	case "ZRANGE":
		return command{"zrange", -4, flagReadOnly, 1, 1, 1}, true
	case "ZRANGEBYLEX":
		return command{"zrangebylex", -4, flagReadOnly, 1, 1, 1}, true
	case "ZRANGEBYSCORE":
		return command{"zrangebyscore", -4, flagReadOnly, 1, 1, 1}, true
	case "ZRANGESTORE":
		return command{"zrangestore", -5, flagWrite, 1, 2, 1}, true
	case "ZRANK":
		return command{"zrank", 3, flagReadOnly, 1, 1, 1}, true
	case "ZREM":
		return command{"zrem", -3, flagWrite, 1, 1, 1}, true
	case "ZREMRANGEBYLEX":
		return command{"zremrangebylex", 4, flagWrite, 1, 1, 1}, true
	case "ZREMRANGEBYRANK":
		return command{"zremrangebyrank", 4, flagWrite, 1, 1, 1}, true
	case "ZREMRANGEBYSCORE":
		return command{"zremrangebyscore", 4, flagWrite, 1, 1, 1}, true
	case "ZREVRANGE":
		return command{"zrevrange", -4, flagReadOnly, 1, 1, 1}, true
	case "ZREVRANGEBYLEX":
		return command{"zrevrangebylex", -4, flagReadOnly, 1, 1, 1}, true
	case "ZREVRANGEBYSCORE":
		return command{"zrevrangebyscore", -4, flagReadOnly, 1, 1, 1}, true
	case "ZREVRANK":
		return command{"zrevrank", 3, flagReadOnly, 1, 1, 1}, true
	case "ZSCAN":
		return command{"zscan", -3, flagReadOnly, 1, 1, 1}, true
	case "ZSCORE":
		return command{"zscore", 3, flagReadOnly, 1, 1, 1}, true
	case "ZUNION":
		return command{"zunion", -3, flagReadOnly | flagMovableKeys, 0, 0, 0}, true
	case "ZUNIONSTORE":
		return command{"zunionstore", -4, flagWrite | flagMovableKeys, 1, 1, 1}, true
	}
	return command{}, false
}
