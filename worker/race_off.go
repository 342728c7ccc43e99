//go:build !race

package worker

const raceMemoryFactor = 1
