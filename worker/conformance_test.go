package worker

import (
	"testing"

	"github.com/locklab/locklab/playground"
	"github.com/locklab/locklab/playground/playgroundtest"
)

// TestSupervisorConformance runs the playground's conformance suite
// against a Supervisor, with one worker and with two, so that learners
// share a worker and are spread over several.
func TestSupervisorConformance(t *testing.T) {
	for _, workers := range []int{1, 2} {
		t.Run(map[int]string{1: "1 worker", 2: "2 workers"}[workers], func(t *testing.T) {
			playgroundtest.Run(t, func(t *testing.T, opts playground.Options) playgroundtest.Playground {
				return newTestSupervisor(t, Options{Workers: workers, Playground: opts})
			})
		})
	}
}
