// Package lab is Lock Lab's lock lab: a learner writes a lock as a Recipe
// of redis-cli lines, and Check tries to break it, the way a model
// checker explores the states of a protocol or Jepsen's Maelstrom checks
// a workload.
//
// A check runs schedules on the simulation kernel (package sim): two or
// three clients run the recipe against one Redis node, a playground
// sandbox on a virtual clock, with a 2,000 ms TTL. Each client asks for
// the lock until it gets it, works, renews halfway if the recipe has
// extend lines, writes to the storage and releases. Faults strike at a
// client's step (each of its lines, and the write), the first time it
// reaches it: a pause before it, a late reply to it, a crash after it,
// and just before it Redis restarting (with its data or without) or its
// clock jumping a TTL ahead or back. The learner chooses which (Model).
//
// A recipe with Nodes 3 or 5 is a Redlock client (redlock.go): its lines
// run on every node in turn, the lock is taken when a quorum of them
// (lock.Quorum) granted it within its validity (lock.Validity), and the
// node faults name their node. One-holder is then judged also when the
// clocks of a minority of the nodes jump, which is Kleppmann's case.
//
// The systematic part comes first and does not depend on the seed: the
// schedule without faults, every schedule with one fault (two and three
// clients) and every pair of faults (two clients), each fault over every
// step and length class. A pair in which one fault never strikes in the
// other's schedule runs exactly as that schedule did, and is skipped.
// Then come Budget.Random random schedules from the seed, of up to three
// faults of random lengths; a random counterexample is shrunk. So a
// violation that two faults reach is found at every seed.
//
// After every schedule the four properties are judged (see Property),
// each only in the schedules that exercise it: a property no schedule
// exercised is not judged, never held. The Report says, for each, in how
// many schedules it was exercised and the shortest counterexample found
// (fewest faults, then fewest clients, then earliest), shaped like a race
// run so that the race animation plays it; Replay plays one schedule
// again from its seed. Every line runs on the playground's engine, so a
// recipe behaves exactly as it does in the playground.
//
// Compare checks two recipes on the same schedules (the first one's
// systematic schedules whose faults strike steps the second has too) and
// says, per property, where one holds and the other breaks, with the
// first schedule that tells them apart, played as each recipe ran it.
//
// Challenges lists broken recipes to diagnose and fix, on a ladder of
// Levels. A challenge is solved only by a whole lock: its own property
// and one-holder, no-foreign-release and frees-after-crash must hold.
//
// Recipes are untrusted input: Validate refuses what cannot run, and a
// Budget bounds the lines run, the CPU time of one check and each line's
// scripts; when one is spent, Check answers ErrBudget. A recipe on N
// nodes runs each line N times and has N times the steps; its lines
// times its nodes are at most MaxNodeLines, and its systematic faults do
// not grow with N (see singlesMulti), so that the largest recipe on five
// nodes runs fewer lines than the largest on one. A comparison is
// bounded at twice a check's lines and CPU time. Check runs in the
// caller's process, on the caller's goroutine, one node at a time: the
// same recipe, model, seed and budget always give the same Report (but
// for its CPUMS). A server runs checks in its sandbox worker processes
// (worker.Supervisor.CheckLab), so that a recipe that gets past these
// limits costs a worker, not the website; InProcess, with the same
// method, bounds the checks running at once in a server without workers.
package lab
