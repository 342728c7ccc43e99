package lab

import (
	"context"
	"testing"
)

// checkT runs a full check with the default budget.
func checkT(t *testing.T, req Request) Report {
	t.Helper()
	b := DefaultBudget()
	rep, err := Check(context.Background(), req, b)
	if err != nil {
		t.Fatalf("Check(%+v) = %v", req, err)
	}
	if rep.Schedules < 300 || rep.Systematic < 250 || rep.Random != DefaultBudget().Random {
		t.Fatalf("Check explored %d schedules (%d systematic, %d random); want at least 300", rep.Schedules, rep.Systematic, rep.Random)
	}
	return rep
}

// wantHolds fails unless each property holds (true) or fails with a
// counterexample (false) as want says.
func wantHolds(t *testing.T, rep Report, want map[Property]bool) {
	t.Helper()
	for p, holds := range want {
		pr, ok := rep.Property(p)
		switch {
		case !ok:
			t.Errorf("no result for %s", p)
		case pr.Holds != holds:
			t.Errorf("%s holds = %v; want %v (%s)", p, pr.Holds, holds, ceText(pr.Counterexample))
		case pr.Explored == 0:
			t.Errorf("%s explored no schedule", p)
		case pr.Holds != (pr.Status == StatusHolds):
			t.Errorf("%s: holds %v with status %s", p, pr.Holds, pr.Status)
		case !holds && (pr.Counterexample == nil || len(pr.Counterexample.Events) == 0):
			t.Errorf("%s fails without a counterexample", p)
		case holds && pr.Counterexample != nil:
			t.Errorf("%s holds with a counterexample", p)
		}
	}
}

func ceText(ce *Counterexample) string {
	if ce == nil {
		return "no counterexample"
	}
	return ce.Summary
}

func TestTextbook(t *testing.T) {
	rep := checkT(t, Request{Recipe: Textbook()})
	if !rep.Works {
		t.Fatalf("Works = false: %s", rep.WorksText)
	}
	wantHolds(t, rep, map[Property]bool{PropOneHolder: true, PropNoForeignRelease: true, PropFreesAfterCrash: true, PropNoStaleWrite: false})
}

func TestFencingInOneScript(t *testing.T) {
	// Where Redis keeps its data, a counter bumped in the acquire script
	// fences; bumped by a second command it does not.
	wantHolds(t, checkT(t, Request{Recipe: Fenced(), Model: &persistent}),
		map[Property]bool{PropOneHolder: true, PropNoForeignRelease: true, PropFreesAfterCrash: true, PropNoStaleWrite: true})
	twoLines := Recipe{Acquire: []string{lineSetNXPX, "INCR {key}:fence"}, Release: []string{lineCompareDelete}, Fencing: true}
	wantHolds(t, checkT(t, Request{Recipe: twoLines, Model: &persistent}),
		map[Property]bool{PropOneHolder: true, PropNoForeignRelease: true, PropFreesAfterCrash: true, PropNoStaleWrite: false})
}

func TestChallenges(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Challenges() {
		t.Run(c.ID, func(t *testing.T) {
			if seen[c.ID] {
				t.Fatalf("duplicate id %s", c.ID)
			}
			seen[c.ID] = true
			if c.Title == "" || c.Goal == "" || c.Hint == "" {
				t.Errorf("challenge %s lacks a title, goal or hint", c.ID)
			}
			broken := checkT(t, Request{Recipe: c.Recipe, Challenge: c.ID})
			if broken.Passed == nil || *broken.Passed {
				t.Errorf("broken recipe: Passed = %v; want false", broken.Passed)
			}
			wantHolds(t, broken, map[Property]bool{c.Property: false})
			fixed := checkT(t, Request{Recipe: c.Fix, Challenge: c.ID})
			// A fix is a whole lock: it breaks nothing but what only
			// fencing prevents (under the fencing challenges' model,
			// where Redis keeps its counter).
			wantHolds(t, fixed, map[Property]bool{PropOneHolder: true, PropNoForeignRelease: true, PropFreesAfterCrash: true, PropNoStaleWrite: c.Fix.Fencing})
			if fixed.Model != c.model() || broken.Model != c.model() {
				t.Errorf("checked under %+v; want the challenge's model %+v", fixed.Model, c.model())
			}
			if fixed.Passed == nil || !*fixed.Passed {
				pr, _ := fixed.Property(c.Property)
				t.Errorf("fix: Passed = %v; want true (works %v %s; %s)", fixed.Passed, fixed.Works, fixed.WorksText, ceText(pr.Counterexample))
			}
		})
	}
	if len(seen) != 9 {
		t.Errorf("%d challenges; want 9", len(seen))
	}
	for i, c := range Challenges() {
		if c.Level < 1 || c.Level > len(Levels()) || (i > 0 && c.Level < Challenges()[i-1].Level) {
			t.Errorf("challenge %s: level %d out of order", c.ID, c.Level)
		}
		if c.Requires()[0] != c.Property {
			t.Errorf("challenge %s: Requires()[0] = %s; want its own property first", c.ID, c.Requires()[0])
		}
	}
}
