// Package race replays lock races on a virtual clock, step by step, so that a
// learner can watch what goes wrong and why.
//
// Each scenario drives the real lock package on the simulation kernel
// (package sim, which the lock lab runs on too): Redis nodes that are
// playground sandboxes on a virtual clock (keys expire exactly when
// virtual time passes their TTL; nothing sleeps), plus the storage service
// that may check fencing tokens. The result is a
// Timeline: the events in time order, each with a one-sentence narration and
// the state needed to animate it (who holds the key on each node, how much
// TTL is left, each node's clock and role, which clients believe they hold
// the lock, the highest fencing token the storage has seen), and every
// Outcome of the run, each tied to the event where it first happened. Runs
// often have several (a paused client that wakes and writes gives two
// holders and a stale write). Some only the end of a run shows: a stuck
// holder's lock still taken (OutcomeLockNeverFreed), a client that asked
// for the lock and never got it (OutcomeStarved). OutcomeSafe means none
// happened. The Verdict is the most serious one. Each outcome has its
// words: a Label for a prediction's choices and Short words for a
// drawing. The same scenario and Params, seed and faults included, give
// the same timeline.
//
// Setup says what a learner may know before a run, for the parameters
// used: who wants the lock and when, the TTL, pauses, crashes, fencing,
// and the added faults in Fault.Text's words. It never says what happens,
// so that the learner can predict it.
//
// List gives the scenarios in teaching order: the normal case; a pause longer
// than the TTL, without and with fencing tokens; release with a plain DEL;
// renewal; Redlock on five nodes, once with a clock jump and once with a
// node that restarts without its data; failover from a primary to an
// asynchronous replica that never got the lock (with WAIT, and with a
// fencing counter lost in the failover); and a watchdog that renews a stuck
// client's lock. Run plays one with Params; the parameters change the
// outcome, not only the numbers (a pause shorter than the TTL is safe,
// fencing turns an accepted stale write into a rejected one, a restart
// delayed past the TTL makes Redlock safe again).
//
// Params.Faults add failures at chosen times, the way a learner forks a run
// at the playhead: pause a client, crash a node (with or without
// persistence), jump a node's clock, delay a reply. Their text form,
// KIND:TARGET:AT_MS:ARG, is described at FaultKind.
//
// A run's address is its scenario and Params as a query: ParseQuery reads
// one over a scenario's defaults, Params.Query and RunQuery write one, and
// FormQuery turns what the race page's settings form sends (a scenario
// change, a fault added or dropped) into the run it asks for. FaultKinds
// and Info.FaultTargets give the fault form its words.
package race
