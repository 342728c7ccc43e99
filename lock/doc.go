// Package lock is a distributed lock on Redis: acquire with a random token,
// release and extend only while the token is still ours, fencing tokens that
// grow with every grant, and Redlock over several independent Redis
// instances.
//
// It works with any go-redis v9 client that can run scripts (the
// redis.Scripter interface): *redis.Client, *redis.Ring, *redis.ClusterClient,
// *redis.Conn or any redis.UniversalClient. Every operation is a single Lua script, so each step is
// atomic on the server. On Redis Cluster the lock key and its fencing key
// must hash to the same slot: give the key a hash tag, such as "{orders}",
// and the default fencing key "{orders}:fence" lands next to it.
//
// # Single instance
//
// A Locker acquires with SET key token NX PX ttl, where token is 128 random
// bits in hex, and in the same script increments the companion key
// "<key>:fence" to hand out a fencing token. Release deletes the key only if
// it still holds our token (compare-and-delete); Extend resets its TTL only
// under the same condition. Both report ErrNotHeld when the lock had already
// expired or passed to someone else. Acquire can retry with random delays
// (jitter), so that clients that collide do not collide again in step.
//
// # Redlock
//
// A Redlock acquires the same token on N independent instances, each call
// bounded by a short per-node timeout. It holds the lock only when a majority
// (N/2+1) said yes and the validity left, TTL - elapsed - drift with
// drift = TTL/100 + 2ms, is still positive; otherwise it releases on every
// node, including those that did not answer, and may retry after a random
// delay. A Redlock has no fencing token: independent counters on N nodes do
// not give one number that grows with every grant.
//
// # What no lock with a TTL can promise
//
// A lock that expires by itself is safe only while no holder stops for
// longer than the TTL. A holder can be paused at any point (a garbage
// collector, a swapped-out page, a stopped VM, a slow network) and wake up
// after its lock expired and another client took it, with no chance to
// check in between: Lock.Until and Extend narrow the window, they do not
// close it. Redlock adds its own assumptions: bounded clock drift on every
// node, and nodes that come back after a crash only once every TTL they had
// granted has passed (or that persist with fsync). If correctness matters,
// and not only efficiency, pass Lock.Fence to the storage you protect and
// let it reject any write that carries a token lower than the highest it has
// seen. Only that check, at the storage, makes a late write harmless.
//
// # Compared with redsync and redislock
//
// go-redsync/redsync implements Redlock over a list of pools; a mutex is
// configured once with options (expiry, tries, retry delay, drift factor)
// and then locked, extended and unlocked, with a value generator you can
// replace. bsm/redislock works against one Redis (or a cluster with a hash
// tag) and lets you choose a retry strategy (linear, exponential, limited)
// per call. This package keeps both in one small API: Locker for one
// instance and Redlock for N, the same Options (retries with jitter, clock,
// random source) and the same Lock type with Release and Extend. It adds
// fencing tokens to the single-instance lock, which neither offers, and it
// takes its clock and randomness as dependencies so that the timing, the
// tokens and the retry delays can be replayed in tests and simulations.
package lock
