// Package luaredis is Redis 7 scripting for miniredis: EVAL, EVALSHA,
// EVAL_RO, EVALSHA_RO and SCRIPT LOAD/EXISTS/FLUSH/KILL, and Redis 7
// functions (FUNCTION LOAD/LIST/DELETE/FLUSH/STATS/KILL, FCALL,
// FCALL_RO), on gopher-lua, with Redis's conversions between Lua values
// and replies and Redis 7's error texts. Stock miniredis Lua never runs: the playground's sandboxes and the
// race engine's nodes hand these commands to an Engine, and redis.call goes
// back to the caller's Redis through a Caller.
//
// A script runs under a watchdog (see Limits): a deadline, a budget of
// the bytes its own Lua state holds, and caps on the strings and tables the
// library functions build, so that a script cannot hang or exhaust the
// process. The base,
// table, string and math libraries are opened, without the functions that
// reach files, modules or the garbage collector, with the libraries Redis
// adds (bit, cjson, cmsgpack, struct), and the globals are read-only, as in
// Redis 7. A script is checked against Lua 5.1's grammar before gopher-lua
// compiles it, so that its syntax errors read as Redis's.
package luaredis
