package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/locklab/locklab/limit"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/web"
	"github.com/locklab/locklab/workshop"
)

// This file is the one place where the server's limits are configured:
// every flag that caps what clients may use (rates, sandboxes, memory,
// workers, connections, streams, workshops, progress) is declared here
// with its default and checked here. Each is read one way: from the
// command line, or from the environment variable its help names
// (setFromEnv).

// addLimitFlags declares the limit flags into cfg. GOMEMLIMIT and GOGC,
// when set and their flag is not, are left to the Go runtime.
func addLimitFlags(fset *flag.FlagSet, getenv func(string) string, cfg *config) {
	// Rates (limit.Rates): -rate-limit 0 turns every rate limit off.
	sc := &cfg.security
	fset.IntVar(&sc.writeRate, "rate-limit", 20, "state-changing requests per second allowed per learner, with bursts of twice that; 0 turns every rate limit off (env LOCKLAB_RATE_LIMIT)")
	fset.IntVar(&sc.addressRate, "ip-rate-limit", 200, "state-changing requests per second allowed per client address, with bursts of twice that; raise it for a large workshop behind one address (env LOCKLAB_IP_RATE_LIMIT)")
	fset.IntVar(&sc.scriptRate, "script-rate-limit", 2, "playground lines that run Lua (EVAL, EVALSHA, ...) per second per learner, with bursts of twice that; ten times as many per client address (env LOCKLAB_SCRIPT_RATE_LIMIT)")
	fset.IntVar(&sc.raceRate, "race-rate-limit", 20, "race simulations (GET /api/race/..., /race pages with new settings) per second per client address, with bursts of twice that; a run that takes more than 5 ms counts once per 5 ms, and a run starts only when the address has a second's worth left; repeated runs come from a cache and are free (env LOCKLAB_RACE_RATE_LIMIT)")
	fset.DurationVar(&sc.scriptTimeout, "script-timeout", time.Second, "how long one playground script (EVAL) may run before it is stopped with an error; scripts' time is also metered per learner and address (env LOCKLAB_SCRIPT_TIMEOUT)")
	fset.IntVar(&cfg.joinRate, "join-rate-limit", limit.DefaultJoinRate, "workshop joins per second per client address, with bursts of twice that: a room of 300 behind one address joins within half a minute, and one address cannot fill a workshop in seconds; 0 turns it off (env LOCKLAB_JOIN_RATE_LIMIT)")
	fset.IntVar(&cfg.joinCodes, "join-code-limit", limit.DefaultWrongJoinCodes, "wrong workshop codes (a join link or form naming no workshop) per minute per client address, with bursts of as many; more get 429 with Retry-After; 0 turns it off (env LOCKLAB_JOIN_CODE_LIMIT)")
	fset.IntVar(&cfg.newcomers, "new-learners-per-address", limit.DefaultNewcomersPerDay, "learners new to the progress store whose progress one client address may have saved a day, all at once if they come together; beyond it a newcomer uses the course but is told their progress is not saved, and learners saved already are never refused; 0 turns it off, as -rate-limit 0 does (env LOCKLAB_NEW_LEARNERS_PER_ADDRESS)")

	// Workshops and progress.
	fset.IntVar(&cfg.maxParticipants, "max-participants", workshop.DefaultMaxParticipants, "most participants one workshop may have; newcomers beyond it are told the workshop is full (env LOCKLAB_MAX_PARTICIPANTS)")
	cfg.progressMax = store.DefaultMaxSize
	fset.Var((*byteSize)(&cfg.progressMax), "progress-max", "most bytes the learners' progress may take in the data directory's file, such as 1GiB; beyond it the longest idle anonymous learners are dropped to make room (never one who carried progress with a code or joined a workshop); with Redis, Redis's own maxmemory applies instead (env LOCKLAB_PROGRESS_MAX)")

	// The playground's sandboxes and their workers.
	fset.DurationVar(&cfg.idle, "sandbox-idle", 30*time.Minute, "drop a learner's playground sandbox after this long without commands (env LOCKLAB_SANDBOX_IDLE)")
	fset.IntVar(&cfg.sandboxes, "max-sandboxes", 10000, "most playground sandboxes alive at once; the longest idle go first (env LOCKLAB_MAX_SANDBOXES)")
	workers := 0
	if _, err := os.Executable(); err == nil {
		workers = 2 // the binary can start itself as a worker
	}
	fset.IntVar(&cfg.workers, "sandbox-workers", workers, "run the playground's sandboxes in this many worker processes, restarted if they crash; 0 runs them in the server process (env LOCKLAB_SANDBOX_WORKERS)")
	cfg.workerMemory = defaultWorkerMemory
	fset.Var((*byteSize)(&cfg.workerMemory), "worker-memory", "memory limit of each sandbox worker process, such as 256MiB (env LOCKLAB_WORKER_MEMORY)")

	// Memory (memory.go, gctune.go).
	mc := &cfg.memory
	mc.sandboxData, mc.perAddress = defaultSandboxMemory, defaultPerAddress
	mc.limit, mc.gcPercent = defaultMemoryLimit, defaultGCPercent
	if getenv("GOMEMLIMIT") != "" {
		mc.limit = 0
	}
	if getenv("GOGC") != "" {
		mc.gcPercent = 0
	}
	fset.Var((*byteSize)(&mc.sandboxData), "sandbox-memory", "data all playground sandboxes may hold together, counted as the 4 MiB limit of one sandbox counts it; near it, the least recently used idle sandboxes are reset, and when none is left, writes are refused (env LOCKLAB_SANDBOX_MEMORY)")
	fset.IntVar(&mc.perAddress, "sandboxes-per-address", mc.perAddress, "most playground sandboxes alive at once for the learners of one client address; at the cap, that address's least recently used one is reset (env LOCKLAB_SANDBOXES_PER_ADDRESS)")
	fset.Var((*byteSize)(&mc.limit), "memory-limit", "Go memory limit of the server process, such as 512MiB; 0 leaves GOMEMLIMIT to the Go runtime (env LOCKLAB_MEMORY_LIMIT; default 512MiB unless GOMEMLIMIT is set)")
	fset.IntVar(&mc.gcPercent, "gc-percent", mc.gcPercent, "most GOGC of the server process, and of its sandbox workers, while the live heap is small: the heap may grow to 64 MiB between collections (a worker's to a quarter of its heap limit), by this many percent at most, and by 100% once it is larger; 0 leaves GOGC to the Go runtime (env LOCKLAB_GC_PERCENT; default 400 unless GOGC is set)")

	// Connections and event streams (conns.go).
	cc := &cfg.conns
	fset.IntVar(&cc.perAddress, "max-conns-per-address", web.DefaultConnsPerAddress, "most connections one client address (an IPv6 one by its /64) may hold open; one more is closed as soon as it is accepted; trusted proxies are exempt; 0 is no cap (env LOCKLAB_MAX_CONNS_PER_ADDRESS)")
	fset.IntVar(&cc.idlePerAddress, "max-idle-conns-per-address", web.DefaultIdleConnsPerAddress, "most kept-alive connections one client address may hold idle; one more that goes idle is closed; trusted proxies are exempt; 0 is no cap (env LOCKLAB_MAX_IDLE_CONNS_PER_ADDRESS)")
	fset.IntVar(&cc.streamsPerLearner, "max-streams-per-learner", limit.DefaultStreamsPerLearner, "most live-update event streams one learner may hold open; one more gets 429 with Retry-After and its page asks every few seconds instead (env LOCKLAB_MAX_STREAMS_PER_LEARNER)")
	fset.IntVar(&cc.streamsPerAddress, "max-streams-per-address", limit.DefaultStreamsPerAddress, "most event streams one client address may hold open; raise it for a large workshop behind one address (env LOCKLAB_MAX_STREAMS_PER_ADDRESS)")
	fset.IntVar(&cc.streams, "max-streams", limit.DefaultStreams, "most event streams open in all; held to half the connections the file descriptor limit allows (env LOCKLAB_MAX_STREAMS)")
}

// checkLimitFlags refuses limits the server cannot work with, naming the
// flag.
func checkLimitFlags(cfg config) error {
	sc := cfg.security
	if sc.writeRate < 0 || sc.addressRate < 0 || sc.scriptRate < 0 || sc.raceRate < 0 {
		return fmt.Errorf("-rate-limit, -ip-rate-limit, -script-rate-limit and -race-rate-limit must be 0 (off) or more")
	}
	if sc.scriptTimeout < 10*time.Millisecond || sc.scriptTimeout > 10*time.Second {
		return fmt.Errorf("-script-timeout must be between 10ms and 10s")
	}
	if cfg.joinRate < 0 || cfg.joinCodes < 0 {
		return fmt.Errorf("-join-rate-limit and -join-code-limit must be 0 (off) or more")
	}
	if cfg.newcomers < 0 {
		return fmt.Errorf("-new-learners-per-address must be 0 (off) or more")
	}
	if cfg.maxParticipants < 1 {
		return fmt.Errorf("-max-participants must be at least 1")
	}
	if cfg.progressMax < 1<<20 {
		return fmt.Errorf("-progress-max must be at least 1MiB")
	}
	if cfg.idle < time.Minute || cfg.sandboxes < 1 {
		return fmt.Errorf("-sandbox-idle must be at least 1m and -max-sandboxes at least 1")
	}
	if cfg.workers < 0 || cfg.workers > 64 {
		return fmt.Errorf("-sandbox-workers must be between 0 (in process) and 64")
	}
	if cfg.workerMemory < 32<<20 {
		return fmt.Errorf("-worker-memory must be at least 32MiB")
	}
	mc := cfg.memory
	if mc.sandboxData < 4<<20 {
		return fmt.Errorf("-sandbox-memory must be at least 4MiB, the data of one sandbox")
	}
	if mc.perAddress < 1 {
		return fmt.Errorf("-sandboxes-per-address must be at least 1")
	}
	if mc.limit != 0 && mc.limit < 64<<20 {
		return fmt.Errorf("-memory-limit must be 0 (the runtime's) or at least 64MiB")
	}
	if err := checkGCPercent(mc.gcPercent); err != nil {
		return err
	}
	cc := cfg.conns
	if cc.perAddress < 0 || cc.idlePerAddress < 0 {
		return fmt.Errorf("-max-conns-per-address and -max-idle-conns-per-address must be 0 (no cap) or more")
	}
	if cc.streamsPerLearner < 1 || cc.streamsPerAddress < 1 || cc.streams < 1 {
		return fmt.Errorf("-max-streams-per-learner, -max-streams-per-address and -max-streams must be at least 1")
	}
	return nil
}
