package playground_test

import (
	"testing"

	"github.com/locklab/locklab/playground"
	"github.com/locklab/locklab/playground/playgroundtest"
)

// TestManagerConformance runs the playground's conformance suite against
// the in-process Manager.
func TestManagerConformance(t *testing.T) {
	playgroundtest.Run(t, func(t *testing.T, opts playground.Options) playgroundtest.Playground {
		m := playground.NewManager(opts)
		t.Cleanup(m.Close)
		return m
	})
}
