//go:build race

package lab

// raceCPUFactor: under the race detector a check's CPU time is several
// times what it costs in a normal build, so the budget a test gives it is
// scaled alike.
const raceCPUFactor = 10
