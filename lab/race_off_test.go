//go:build !race

package lab

// raceCPUFactor: without the race detector a check costs what it costs.
const raceCPUFactor = 1
