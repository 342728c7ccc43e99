//go:build race

package worker

// raceMemoryFactor: the race detector's shadow memory is several times the
// memory it watches.
const raceMemoryFactor = 8
