// Package script is the playground's Redis 7 scripting: EVAL, EVALSHA,
// EVAL_RO, EVALSHA_RO and SCRIPT LOAD/EXISTS/FLUSH/KILL on gopher-lua, with
// Redis's conversions between Lua values and replies and Redis 7's error
// texts. Stock miniredis Lua never runs: the sandbox hands these commands to
// an Engine, and redis.call goes back to the sandbox through a Caller.
//
// A script runs under a watchdog (see Limits): a deadline, a budget of
// allocated bytes, and caps on the strings and tables the library functions
// build, so that a script cannot hang or exhaust the process. Only the base,
// table, string and math libraries are opened, without the functions that
// reach files, modules or the garbage collector, and the globals are
// read-only, as in Redis 7.
package script
