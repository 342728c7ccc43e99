//go:build race

package web

// raceDetector: the race detector slows every request several times, so
// latency budgets are not checked under it.
const raceDetector = true
