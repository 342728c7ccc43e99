// Package race replays lock races on a virtual clock, step by step, so that a
// learner can watch what goes wrong and why.
//
// Each scenario drives the real lock package against miniredis instances
// whose clocks are set by the simulation (SetTime with ClockTTL, so keys
// expire exactly when virtual time passes their TTL; nothing sleeps), plus a
// simulated storage service that may check fencing tokens. The result is a
// Timeline: the events in time order, each with a one-sentence narration and
// the state needed to animate it (who holds the key on each node, how much
// TTL is left, the highest fencing token the storage has seen), and a
// Verdict. The same scenario, parameters and seed give the same timeline.
//
// List gives the scenarios in teaching order: the normal case; a pause longer
// than the TTL, without and with fencing tokens; release with a plain DEL;
// renewal; and Redlock on five nodes, once with a clock jump and once with a
// node that restarts without its data. Run plays one with Params; the
// parameters change the outcome, not only the numbers (a pause shorter than
// the TTL is safe, fencing turns an accepted stale write into a rejected
// one, a restart delayed past the TTL makes Redlock safe again).
package race
