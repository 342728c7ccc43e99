// Package lab is Lock Lab's lock lab: a learner writes a lock as a Recipe
// of redis-cli lines, and Check tries to break it, the way Jepsen's
// Maelstrom checks a workload or a deterministic simulator replays a seed.
//
// Check explores Budget.Schedules (default 256) deterministic schedules in
// which two or three clients run the recipe against one Redis node on a
// virtual clock, with a 2,000 ms TTL. Each client asks for the lock until
// it gets it (retrying after a random 200-400 ms), works 250-500 ms,
// renews once halfway if the recipe has extend lines, writes to a storage
// service and releases. Schedule 0 has no faults; then come, for two
// clients, every single fault in turn: a pause of each length (0.1 to 2.5
// TTLs) before each step of a holder's job, a late reply (0.3 to 1.75
// TTLs) to each step, a crash after each step but the last (the client
// never runs another line), a jump of the node's clock (half a TTL or a
// TTL, at three moments), and a restart without persistence (the node is
// down 1.25 TTLs and comes back empty: a restart sooner than the TTL
// breaks any single-instance lock, as the race page shows). The rest are
// random plans from the seed: two or three clients, one or two client
// faults of random kinds, steps and lengths, perhaps a clock jump.
//
// Each line runs on the playground's engine (a playground.Sandbox:
// miniredis with the playground's own Lua, limits, per-line deadline and
// command allow-list), so a recipe behaves exactly as it does in the
// playground. After every schedule the four properties are judged (see
// Property); the Report says, for each, whether it held, in how many
// schedules it was judged, and the shortest counterexample found (fewest
// faults, then fewest clients, then earliest), shaped like a race page
// run so that the race animation plays it. Replay plays one schedule again
// from its seed.
//
// Challenges lists broken recipes to diagnose and fix, each with the
// property it breaks and a hint that names the misconception.
//
// Recipes are untrusted input: Validate refuses what cannot run, and a
// Budget bounds the schedules, the lines run, the CPU time of one check
// and each line's scripts; when one is spent, Check answers ErrBudget.
// Check runs in the caller's process, on the caller's goroutine, one
// sandbox at a time: the same recipe, seed and budget always give the
// same Report (but for its CPUMS). A server runs checks in its sandbox
// worker processes (worker.Supervisor.CheckLab), so that a recipe that
// gets past these limits costs a worker, not the website; InProcess, with
// the same method, bounds the checks running at once in a server without
// workers.
package lab
