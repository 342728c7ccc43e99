//go:build !race

package web

// raceDetector: see workshop_race_on_test.go.
const raceDetector = false
