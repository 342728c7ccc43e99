// Package lab is Lock Lab's lock lab: a learner writes a lock as a Recipe
// of redis-cli lines, and Check tries to break it, the way Jepsen's
// Maelstrom checks a workload or a deterministic simulator replays a seed.
//
// Check explores many deterministic schedules (seeds) in which two or three
// clients run the recipe against one Redis node on a virtual clock, with
// faults: pauses of every length at every step of a holder's job, a delayed
// reply, a holder that crashes between two of its lines and never
// releases, a clock jump on the Redis node, and a restart without
// persistence. Each line runs on the playground's engine (a
// playground.Sandbox: miniredis with the playground's own Lua, limits,
// deadlines and command allow-list), so a recipe behaves exactly as it
// does in the playground. After every schedule the four properties are
// judged (see Property); the Report says, for each, whether it held, in
// how many schedules it was judged, and the shortest counterexample
// found, whose events have the shape of the race package's timeline
// events so that the race animation can play them.
//
// Challenges lists broken recipes to diagnose and fix, each with the
// property it breaks and a hint that names the misconception.
//
// Recipes are untrusted input: Validate refuses what cannot run, and a
// Budget bounds the schedules, the lines run and the time of one check;
// when it is spent Check answers ErrBudget. The same recipe, seed and
// budget always give the same Report.
package lab
