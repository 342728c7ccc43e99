//go:build race

package lab

// raceCPUFactor: under the race detector a check's CPU time is several
// times what it costs in a normal build, so a race build's default budget
// is scaled alike, as the worker's memory limit is: a check that fits a
// normal build fits the same build with the detector on.
const raceCPUFactor = 10
