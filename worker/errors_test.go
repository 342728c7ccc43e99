package worker

import (
	"errors"
	"fmt"
	"testing"

	"github.com/locklab/locklab/playground"
)

// TestErrorsMatchPlayground checks that every error of this package a
// caller may act on matches the playground's sentinel for its case, which
// is what the web layer tests for, and still matches this package's own.
func TestErrorsMatchPlayground(t *testing.T) {
	for _, tt := range []struct {
		name       string
		err        error
		own, match error
		not        error
	}{
		{"ErrWorkerStopped", fmt.Errorf("exec: %w", ErrWorkerStopped), ErrWorkerStopped, playground.ErrStopped, playground.ErrRestarting},
		{"ErrUnavailable", fmt.Errorf("exec: %w", ErrUnavailable), ErrUnavailable, playground.ErrRestarting, playground.ErrStopped},
		{"a dead worker's answer", &diedError{sent: true}, ErrWorkerStopped, playground.ErrStopped, playground.ErrRestarting},
		{"a stopped line", &workerError{kind: ErrWorkerStopped, msg: stoppedMsg}, ErrWorkerStopped, playground.ErrStopped, ErrUnavailable},
		{"a line while restarting", &workerError{kind: ErrUnavailable, msg: unavailableMsg}, ErrUnavailable, playground.ErrRestarting, ErrWorkerStopped},
		{"a reset while restarting", wrapUnavailable(&diedError{}), ErrUnavailable, playground.ErrRestarting, playground.ErrStopped},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, want := range []error{tt.own, tt.match} {
				if !errors.Is(tt.err, want) {
					t.Errorf("errors.Is(%v, %v) = false; want true", tt.err, want)
				}
			}
			if errors.Is(tt.err, tt.not) {
				t.Errorf("errors.Is(%v, %v) = true; want false", tt.err, tt.not)
			}
		})
	}
}
