package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/locklab/locklab/lab"
)

// Lab checks in the workers: a learner's recipe is untrusted input, run
// on the playground's engine as a sandbox line is, so a check runs in a
// worker too, where a recipe that gets past the lab's own budget costs a
// worker, not the website. A check belongs to no sandbox and needs no
// mirror: it is a pure function of its request, so it goes to the
// least busy worker, and a check whose worker dies is not run again (it
// may be what killed it).

// labJob is opLab's request: a check, or with Compare a comparison of
// two recipes (lab.Compare), which is untrusted input as a check is and
// runs under the same protections.
type labJob struct {
	Request lab.Request         `json:"request"`
	Budget  lab.Budget          `json:"budget"`
	Compare *lab.CompareRequest `json:"compare,omitempty"`
}

// labErrors are the errors a check answers with, by their kind on the
// wire; a check's error matches the same one on both sides.
var labErrors = []struct {
	kind errKind
	err  error
}{
	{errLabBadRecipe, lab.ErrBadRecipe},
	{errLabBudget, lab.ErrBudget},
	{errLabUnknownChallenge, lab.ErrUnknownChallenge},
	{errLabBadSeed, lab.ErrBadSeed},
	{errCanceled, context.Canceled},
	{errDeadline, context.DeadlineExceeded},
}

// CheckLab runs the lab check lab.Check(ctx, req, b) in a worker process
// and returns its Report or its error, which matches the same sentinels
// (lab.ErrBadRecipe, with the *lab.LineError, lab.ErrBudget,
// lab.ErrUnknownChallenge, lab.ErrBadSeed) as in-process. It takes the
// worker with the fewest checks running, and runs at most
// Options.LabChecks checks at once; the others wait, as long as ctx lets
// them. A caller that gives up stops its check in the worker. If the
// worker dies while running the check, the error matches
// ErrWorkerStopped; the worker is restarted and the other checks and
// sandboxes go on.
func (s *Supervisor) CheckLab(ctx context.Context, req lab.Request, b lab.Budget) (lab.Report, error) {
	resp, err := s.labJob(ctx, labJob{Request: req, Budget: b}, s.labLimit(b))
	if err != nil {
		return lab.Report{}, fmt.Errorf("lab check: %w", err)
	}
	var rep lab.Report
	if err := decodeLab(ctx, resp, &rep); err != nil {
		return lab.Report{}, err
	}
	return rep, nil
}

// CompareLab runs lab.Compare(ctx, req, b) in a worker process, as
// CheckLab runs a check: it takes a check's place among the
// Options.LabChecks running at once, and its answer and errors are
// lab.Compare's. A comparison's budget is twice a check's, and so is the
// time it may go unanswered.
func (s *Supervisor) CompareLab(ctx context.Context, req lab.CompareRequest, b lab.Budget) (lab.Comparison, error) {
	resp, err := s.labJob(ctx, labJob{Compare: &req, Budget: b}, 2*s.labLimit(b))
	if err != nil {
		return lab.Comparison{}, fmt.Errorf("lab compare: %w", err)
	}
	var c lab.Comparison
	if err := decodeLab(ctx, resp, &c); err != nil {
		return lab.Comparison{}, err
	}
	return c, nil
}

// labJob runs job in the worker with the fewest checks running, at most
// Options.LabChecks at once, and returns the worker's answer.
func (s *Supervisor) labJob(ctx context.Context, job labJob, limit time.Duration) (*response, error) {
	b, err := json.Marshal(job)
	if err != nil {
		return nil, err
	}
	select {
	case s.labs <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-s.labs }()
	for attempt := 1; ; attempt++ {
		sl := s.labSlot()
		p, err := sl.current(ctx)
		if err != nil {
			sl.labs.Add(-1)
			return nil, err
		}
		resp, err := p.roundTrip(ctx, request{Op: opLab, Job: b}, nil, limit)
		sl.labs.Add(-1)
		var died *diedError
		if errors.As(err, &died) && !died.sent && attempt < maxAttempts {
			continue // it never reached the worker
		}
		return resp, err
	}
}

// labSlot returns the worker with the fewest checks running, preferring
// one that is up, and counts the check on it; the caller uncounts it.
// Ties go round, so that checks spread over idle workers.
func (s *Supervisor) labSlot() *slot {
	start := int(s.labNext.Add(1))
	var best *slot
	bestUp := false
	for i := range s.slots {
		sl := s.slots[(start+i)%len(s.slots)]
		sl.mu.Lock()
		up := sl.proc != nil
		sl.mu.Unlock()
		switch {
		case best == nil, up && !bestUp, up == bestUp && sl.labs.Load() < best.labs.Load():
			best, bestUp = sl, up
		}
	}
	best.labs.Add(1)
	return best
}

// labLimit is how long a check may go unanswered before its worker is
// taken for stuck: the check's CPU budget twice over for each check that
// may share its worker's core, and twice more for a busy machine, plus
// one line's deadline and RequestTimeout.
func (s *Supervisor) labLimit(b lab.Budget) time.Duration {
	d := lab.DefaultBudget()
	if b.CPU <= 0 {
		b.CPU = d.CPU
	}
	if b.LineTimeout <= 0 {
		b.LineTimeout = d.LineTimeout
	}
	perWorker := (s.opts.LabChecks + len(s.slots) - 1) / max(len(s.slots), 1)
	return time.Duration(2*perWorker+2)*b.CPU + b.LineTimeout + s.opts.RequestTimeout
}

// decodeLab turns a worker's answer to a check (or a comparison) back
// into what lab.Check (lab.Compare) returned, reading the answer into
// out. A job stopped because the caller gave up answers the caller's
// ctx.Err().
func decodeLab(ctx context.Context, resp *response, out any) error {
	if resp.ErrKind == errNone {
		if err := json.Unmarshal(resp.Job, out); err != nil {
			return fmt.Errorf("lab: the worker's answer: %w", err)
		}
		return nil
	}
	if (resp.ErrKind == errCanceled || resp.ErrKind == errDeadline) && ctx.Err() != nil {
		return fmt.Errorf("lab: %w", ctx.Err())
	}
	if resp.ErrKind == errLabBadRecipe && len(resp.Job) > 0 {
		var le lab.LineError
		if err := json.Unmarshal(resp.Job, &le); err == nil {
			if le.Error() == resp.ErrMsg {
				return &le
			}
			return &remoteError{resp.ErrMsg, &le}
		}
	}
	for _, e := range labErrors {
		if e.kind == resp.ErrKind {
			return &remoteError{resp.ErrMsg, e.err}
		}
	}
	return errors.New(resp.ErrMsg)
}

// runLab is the worker's side of opLab: it runs the check on its own
// goroutine (lab.Check locks it to an OS thread, whose CPU time is the
// check's budget) and answers when it is done.
func (s *server) runLab(ctx context.Context, req *request) {
	resp := &response{ID: req.ID}
	defer func() {
		s.mu.Lock()
		cancel := s.cancels[req.ID]
		delete(s.cancels, req.ID)
		s.mu.Unlock()
		cancel()
		resp.Timeouts = s.scripts.Timeouts()
		s.write(resp)
	}()
	var job labJob
	if err := json.Unmarshal(req.Job, &job); err != nil {
		resp.ErrKind, resp.ErrMsg = errOther, fmt.Sprintf("sandbox worker: lab check: %v", err)
		return
	}
	b := job.Budget
	b.Turns = &s.labTurns
	var answer any
	var err error
	if job.Compare != nil {
		answer, err = lab.Compare(ctx, *job.Compare, b)
	} else {
		answer, err = lab.Check(ctx, job.Request, b)
	}
	if err == nil {
		resp.Job, err = json.Marshal(answer)
		if err != nil {
			resp.Job = nil
			resp.ErrKind, resp.ErrMsg = errOther, fmt.Sprintf("sandbox worker: lab report: %v", err)
		}
		return
	}
	resp.ErrKind, resp.ErrMsg = encodeLabErr(err)
	var le *lab.LineError
	if resp.ErrKind == errLabBadRecipe && errors.As(err, &le) {
		resp.Job, _ = json.Marshal(le)
	}
}

// encodeLabErr gives a check's error its kind on the wire.
func encodeLabErr(err error) (errKind, string) {
	for _, e := range labErrors {
		if errors.Is(err, e.err) {
			return e.kind, err.Error()
		}
	}
	return errOther, err.Error()
}
