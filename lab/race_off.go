//go:build !race

package lab

// raceCPUFactor: without the race detector a check costs what it costs,
// and the default budget is as documented.
const raceCPUFactor = 1
