package sim

// Kind says what happened in an Event.
type Kind string

// The event kinds.
const (
	KindAcquireOK     Kind = "acquire-ok"     // a client got the lock
	KindAcquireFail   Kind = "acquire-fail"   // a client asked and got nil (or no majority)
	KindPauseStart    Kind = "pause-start"    // a client stops, unaware (GC, swap, VM)
	KindPauseEnd      Kind = "pause-end"      // the client runs again
	KindExpire        Kind = "expire"         // a key's TTL ran out on a node
	KindWriteAccepted Kind = "write-accepted" // the storage took a write
	KindWriteRejected Kind = "write-rejected" // the storage refused an older token
	KindReleaseOK     Kind = "release-ok"     // a client deleted its own lock
	KindReleaseNoop   Kind = "release-noop"   // a release found the lock no longer ours
	KindDeleteOther   Kind = "delete-other"   // a plain DEL removed another client's lock
	KindExtendOK      Kind = "extend-ok"      // a renewal reset the TTL
	KindExtendFail    Kind = "extend-fail"    // a renewal found the lock lost; the client stops
	KindStop          Kind = "stop"           // a client gives up: its validity ran out
	KindClockJump     Kind = "clock-jump"     // a node's clock jumped
	KindCrash         Kind = "crash"          // a node crashed and lost its data
	KindRestart       Kind = "restart"        // a crashed node is back (empty, or with its data)
	KindDelay         Kind = "delay"          // a reply is late: the client waits, unaware
	KindReplicate     Kind = "replicate"      // the replica copied the primary's writes
	KindFailover      Kind = "failover"       // the replica was promoted to primary
	KindWait          Kind = "wait"           // WAIT answered: how many replicas have the write
	KindRenewLimit    Kind = "renew-limit"    // a watchdog stopped renewing: no progress, or its limit
	KindStuck         Kind = "stuck"          // a client's work hangs for good; its process lives on
	KindCommand       Kind = "command"        // a recipe line that decides nothing ran
	KindExtendOther   Kind = "extend-other"   // a renewal extended another client's lock
	KindClientCrash   Kind = "client-crash"   // a client crashed; it never runs another line
	KindStillLocked   Kind = "still-locked"   // after a holder crashed, its lock is still taken
)

// Event is one step of a simulation, with the state after it.
type Event struct {
	AtMS    int64  `json:"at_ms"`             // virtual time since the start
	Actor   string `json:"actor"`             // "client 1", "redis", "redis node 3", "storage"
	Kind    Kind   `json:"kind"`              // what happened
	Subject string `json:"subject,omitempty"` // the other client involved, if any
	Fence   int64  `json:"fence,omitempty"`   // the fencing token involved, when fencing is on
	Stale   bool   `json:"stale,omitempty"`   // a write from a holder whose lock has been granted again
	Text    string `json:"text"`              // one sentence for learners
	// Jump is a clock jump in a drawing's few words ("+10 s", "−250 ms"),
	// set on KindClockJump events only.
	Jump string `json:"jump,omitempty"`

	Nodes        []NodeState `json:"nodes"`             // the lock key on each node, after the event
	HighestToken int64       `json:"highest_token"`     // the highest fencing token the storage has seen
	Holding      []string    `json:"holding,omitempty"` // the clients that believe they hold the lock, after the event
}

// NodeState is the lock key on one Redis node at the time of an Event.
type NodeState struct {
	Node   int    `json:"node"`   // 1-based
	Up     bool   `json:"up"`     // false while crashed
	Holder string `json:"holder"` // the client whose token is in the key; "" if none
	TTLMS  int64  `json:"ttl_ms"` // remaining TTL; 0 if no key
	// ClockAheadMS is how far the node's clock is ahead of true time.
	ClockAheadMS int64 `json:"clock_ahead_ms,omitempty"`
	// Role is "primary" or "replica" in the failover scenario, else "".
	Role string `json:"role,omitempty"`
}
