package race

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
	KindRestart       Kind = "restart"        // a crashed node is back, empty
)

// Verdict sums up a run.
type Verdict string

// The verdicts, from worst to best. A run gets the first that applies.
const (
	VerdictForeignLockDeleted Verdict = "foreign-lock-deleted" // a client deleted a lock it did not hold
	VerdictTwoHolders         Verdict = "two-holders"          // two clients worked under the lock at once
	VerdictStaleWriteAccepted Verdict = "stale-write-accepted" // a write from a superseded holder got in
	VerdictStaleWriteRejected Verdict = "stale-write-rejected" // fencing stopped such a write
	VerdictSafe               Verdict = "safe"                 // one holder at a time, no stale write
)

// Timeline is the result of a run: what happened, in time order, and the
// verdict.
type Timeline struct {
	Scenario string  `json:"scenario"`
	Params   Params  `json:"params"`
	Events   []Event `json:"events"`
	Verdict  Verdict `json:"verdict"`
	Summary  string  `json:"summary"` // the verdict in one sentence
}

// Event is one step of a Timeline, with the state after it.
type Event struct {
	AtMS    int64  `json:"at_ms"`             // virtual time since the start
	Actor   string `json:"actor"`             // "client 1", "redis", "redis node 3", "storage"
	Kind    Kind   `json:"kind"`              // what happened
	Subject string `json:"subject,omitempty"` // the other client involved, if any
	Fence   int64  `json:"fence,omitempty"`   // the fencing token involved, if any
	Stale   bool   `json:"stale,omitempty"`   // a write from a holder whose lock has been granted again
	Text    string `json:"text"`              // one sentence for learners

	Nodes        []NodeState `json:"nodes"`         // the lock key on each node, after the event
	HighestToken int64       `json:"highest_token"` // the highest fencing token the storage has seen
}

// NodeState is the lock key on one Redis node at the time of an Event.
type NodeState struct {
	Node   int    `json:"node"`   // 1-based
	Up     bool   `json:"up"`     // false while crashed
	Holder string `json:"holder"` // the client whose token is in the key; "" if none
	TTLMS  int64  `json:"ttl_ms"` // remaining TTL; 0 if no key
}
