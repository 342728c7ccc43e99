package lab

import (
	"context"
	"fmt"
)

// InProcess runs checks in the calling process, at most a few at once:
// the lock lab of a server that runs no sandbox workers (locklab
// -sandbox-workers 0). Its CheckLab has the signature of the sandbox
// workers' (worker.Supervisor.CheckLab), so that the web layer takes
// either through one interface. It is safe for concurrent use.
type InProcess struct {
	running chan struct{} // one token per check running
	turns   Turns         // the checks running take turns, schedule by schedule
}

// NewInProcess returns an InProcess that runs at most n checks at once
// (at least 1); the others wait their turn. Each check takes a CPU core
// while it runs, for up to its budget's CPU time, so n is best the
// number of cores the lab may have.
func NewInProcess(n int) *InProcess {
	return &InProcess{running: make(chan struct{}, max(n, 1))}
}

// CheckLab runs Check(ctx, req, b) when its turn comes, and returns what
// it returns; a caller whose ctx ends while waiting gets ctx.Err().
func (p *InProcess) CheckLab(ctx context.Context, req Request, b Budget) (Report, error) {
	select {
	case p.running <- struct{}{}:
	case <-ctx.Done():
		return Report{}, fmt.Errorf("lab check: %w", ctx.Err())
	}
	defer func() { <-p.running }()
	b.Turns = &p.turns
	return Check(ctx, req, b)
}
