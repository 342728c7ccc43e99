package playground

// helpText is what "help" prints: what the playground runs, and how it
// differs from a real redis-cli session. Each paragraph and each group of
// commands is one line, with no column layout: the terminal wraps it to
// its own width, a phone's too, so a line is never broken twice (once
// here, once again by a narrow screen). The sandbox adds its limits
// (Limits.helpLine).
const helpText = `Lock Lab playground: a Redis 7 sandbox of your own, driven by two clients, A and B.

Commands you can use:
strings: SET GET GETDEL GETEX GETSET SETNX SETEX PSETEX MSET MSETNX MGET APPEND STRLEN INCR INCRBY INCRBYFLOAT DECR DECRBY GETRANGE SETRANGE GETBIT SETBIT BITCOUNT BITPOS LCS
keys and TTL: DEL UNLINK EXISTS TYPE KEYS SCAN SORT SORT_RO RENAME RENAMENX COPY TOUCH RANDOMKEY EXPIRE PEXPIRE EXPIREAT PEXPIREAT EXPIRETIME PEXPIRETIME PERSIST TTL PTTL OBJECT ENCODING|REFCOUNT|FREQ|IDLETIME
hashes: HSET HSETNX HMSET HGET HMGET HGETALL HDEL HEXISTS HINCRBY HINCRBYFLOAT HKEYS HVALS HLEN HSTRLEN HRANDFIELD HSCAN
lists: LPUSH RPUSH LPUSHX RPUSHX LPOP RPOP LRANGE LINDEX LINSERT LLEN LMOVE LMPOP LPOS LREM LSET LTRIM RPOPLPUSH
sets: SADD SREM SMEMBERS SISMEMBER SMISMEMBER SCARD SPOP SRANDMEMBER SMOVE SINTER SINTERCARD SINTERSTORE SUNION SUNIONSTORE SDIFF SDIFFSTORE SSCAN
sorted sets: ZADD ZREM ZSCORE ZMSCORE ZINCRBY ZCARD ZCOUNT ZLEXCOUNT ZRANK ZREVRANK ZRANGE ZRANGEBYSCORE ZRANGEBYLEX ZREVRANGE ZREVRANGEBYSCORE ZREVRANGEBYLEX ZPOPMIN ZPOPMAX ZMPOP ZRANDMEMBER ZREMRANGEBYRANK ZREMRANGEBYSCORE ZREMRANGEBYLEX ZUNION ZUNIONSTORE ZINTER ZINTERSTORE ZSCAN
scripting: EVAL EVALSHA EVAL_RO EVALSHA_RO SCRIPT LOAD|EXISTS|FLUSH
functions: FUNCTION LOAD|LIST|DELETE|FLUSH|STATS|KILL|HELP FCALL FCALL_RO
transactions: MULTI EXEC DISCARD WATCH UNWATCH
server: PING ECHO TIME DBSIZE FLUSHDB FLUSHALL SELECT 0 CLIENT SETNAME|GETNAME WAIT PUBLISH

Five nodes, for Redlock: a line goes to node 1 unless it starts with @2 to @5; @all sends it to every node in turn and prints each reply with the time it took (and, for SET ... NX PX, the Redlock verdict: OK count, majority, validity left). @storage is the fenced storage service of the race, Lock Lab's own and not Redis: WRITE <token> <data>, READ. node N stop, node N start [persist], node N restart [persist] and node N clock +MS or -MS act on a node as an operator would; nodes lists them. Nodes 2 to 5 start when first used and share your sandbox's room.
Each client has its own connection: MULTI and WATCH belong to the client that sent them.
TTLs run in real time on the sandbox clock; the clock buttons move it forward.
Functions are your sandbox's own, as in Redis 7: FUNCTION LOAD "#!lua name=mylib\nredis.register_function('f', function(keys, args) return keys[1] end)" then FCALL f 1 k. They count with your scripts, outlive FLUSHALL and go with a reset; a function's upvalues start afresh on every call. FUNCTION DUMP gives your libraries as Redis's payload, which FUNCTION RESTORE loads again (here or on a Redis 7).
WAIT answers 0 at once: a sandbox has no replicas, so no write is ever acknowledged by one (the fact behind the lesson's failover caveat). PUBLISH answers 0: nobody can subscribe to a sandbox.
Not available: pub/sub, blocking commands (BLPOP and friends; after MULTI they are queued and run without waiting, as in Redis), and commands that manage the server, switch the protocol or reach other servers.`
