// Package sim is the simulation kernel that the race and the lock lab
// both run on: a virtual clock and its queue of actions, Redis nodes run
// by the playground's engine on that clock (crashing and restarting with
// or without their data, their clocks jumping ahead or back), the
// storage service a lock protects (which may check fencing tokens), and
// the words of the fault vocabulary both tell learners.
//
// Nothing in a simulation sleeps or reads the wall clock: a node's clock
// is the simulation's, plus its own offset, so keys expire exactly when
// virtual time passes their TTL, and the same run gives the same events.
package sim
