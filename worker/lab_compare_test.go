package worker

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"

	"github.com/locklab/locklab/lab"
)

func comparisonJSON(t *testing.T, c lab.Comparison) string {
	t.Helper()
	c.CPUMS = 0
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCompareLabSameAsInProcess: a comparison in a worker gives the very
// answer lab.Compare gives in this process, and its errors match the
// same sentinels.
func TestCompareLabSameAsInProcess(t *testing.T) {
	s := newTestSupervisor(t, Options{Workers: 1})
	plain, _ := lab.ChallengeByID("plain-del")
	req := lab.CompareRequest{A: lab.Textbook(), B: plain.Recipe}
	got, err := s.CompareLab(context.Background(), req, lab.Budget{})
	if err != nil {
		t.Fatalf("CompareLab: %v", err)
	}
	want, err := lab.Compare(context.Background(), req, lab.Budget{})
	if err != nil {
		t.Fatalf("lab.Compare: %v", err)
	}
	if g, w := comparisonJSON(t, got), comparisonJSON(t, want); g != w {
		t.Errorf("CompareLab differs from lab.Compare:\n%s\n%s", g, w)
	}
	if got.Differ != 1 {
		t.Errorf("CompareLab: %d properties differ; want 1", got.Differ)
	}
	for _, tt := range []struct {
		name string
		req  lab.CompareRequest
		b    lab.Budget
		want error
	}{
		{"bad recipe", lab.CompareRequest{A: lab.Textbook(), B: lab.Recipe{Acquire: []string{"SET {nope} 1"}, Release: []string{"DEL {key}"}}}, lab.Budget{}, lab.ErrBadRecipe},
		{"budget", req, lab.Budget{Steps: 5}, lab.ErrBudget},
	} {
		_, got := s.CompareLab(context.Background(), tt.req, tt.b)
		_, want := lab.Compare(context.Background(), tt.req, tt.b)
		if !errors.Is(got, tt.want) || got.Error() != want.Error() {
			t.Errorf("%s: CompareLab = %v; want lab.Compare's %v", tt.name, got, want)
		}
	}
}

// TestCompareLabCancel: a caller that gives up stops its comparison in
// the worker, as a check is stopped.
func TestCompareLabCancel(t *testing.T) {
	logs := newLogRecorder(t)
	s := newTestSupervisor(t, Options{Workers: 1, Command: workerCommand("spin"), Logger: slog.New(slog.NewTextHandler(logs, nil))})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seen := logs.waitFor(spinSeen)
	done := make(chan error, 1)
	go func() {
		_, err := s.CompareLab(ctx, lab.CompareRequest{A: spinRecipe, B: spinRecipe}, spinBudget)
		done <- err
	}()
	<-seen
	cancel()
	// The comparison's budget is hours: an answer at all is the cancel's.
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled comparison = %v; want context.Canceled", err)
	}
	if s.Restarts() != 0 {
		t.Errorf("%d restarts after a cancel; want 0", s.Restarts())
	}
}
