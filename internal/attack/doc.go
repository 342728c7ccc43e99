// Package attack holds Lock Lab's attack suite: tests that build the real
// server, start it as a separate process on a loopback port and attack it
// over HTTP the way a hostile client would (oversized lines, script budget
// dodges, memory floods, open redirects, token guessing, ...), measuring
// what each attack costs the server and the other learners. The package
// has no code of its own; everything is in its tests.
package attack
