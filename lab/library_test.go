package lab

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// TestLibraryVerdicts checks every gallery entry as the lab page checks
// a recipe (Check with the default budget, under the entry's model) and
// holds each property's status to the entry's expected verdict: a
// verdict the gallery shows a learner must be what the lab finds.
func TestLibraryVerdicts(t *testing.T) {
	for _, e := range Library() {
		t.Run(e.ID, func(t *testing.T) {
			if err := e.Recipe.Validate(); err != nil {
				t.Fatalf("recipe: %v", err)
			}
			m := e.CheckModel()
			rep := checkT(t, Request{Recipe: e.Recipe, Model: &m})
			if !rep.Works {
				t.Fatalf("does not work: %s", rep.WorksText)
			}
			if len(e.Verdicts) != len(Properties()) {
				t.Fatalf("%d verdicts; want one per property (%d)", len(e.Verdicts), len(Properties()))
			}
			var got []string
			for _, pr := range rep.Properties {
				got = append(got, fmt.Sprintf("%s %s (%d)", pr.ID, pr.Status, pr.Explored))
			}
			t.Logf("%s at %s (%d schedules, %d lines, %d ms CPU): %s", e.Library, e.ShortCommit(), rep.Schedules, rep.Steps, rep.CPUMS, strings.Join(got, ", "))
			for i, v := range e.Verdicts {
				if v.Property != Properties()[i].ID {
					t.Errorf("verdict %d is for %s; want %s, in the report's order", i, v.Property, Properties()[i].ID)
				}
				pr, ok := rep.Property(v.Property)
				if !ok {
					t.Fatalf("no result for %s", v.Property)
				}
				if pr.Status != v.Status {
					t.Errorf("%s: the lab finds %s; the entry says %s (%s; %v)", v.Property, pr.Status, v.Status, ceText(pr.Counterexample), faults(pr.Counterexample))
				}
				if v.Why == "" {
					t.Errorf("%s: no reasoning", v.Property)
				}
				if _, ok := ReferenceByID(v.Source); !ok {
					t.Errorf("%s: unknown reference %q", v.Property, v.Source)
				}
			}
		})
	}
}

func faults(ce *Counterexample) []string {
	if ce == nil {
		return nil
	}
	return ce.Faults
}

// sourceAtCommit is a GitHub file address at a full commit.
var sourceAtCommit = regexp.MustCompile(`^https://github\.com/[\w.-]+/[\w.-]+/blob/([0-9a-f]{40})/\S+$`)

// TestLibraryEntries: every entry has an id, words and a link to the
// library's source at the commit it names; ids are unique.
func TestLibraryEntries(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range Library() {
		if e.ID == "" || seen[e.ID] {
			t.Errorf("entry %q: empty or duplicate id", e.ID)
		}
		seen[e.ID] = true
		if e.Name == "" || e.Library == "" || e.Language == "" || len(e.Differences) == 0 {
			t.Errorf("entry %s lacks a name, library, language or differences", e.ID)
		}
		m := sourceAtCommit.FindStringSubmatch(e.Source)
		if m == nil || m[1] != e.Commit {
			t.Errorf("entry %s: source %q does not name its commit %q", e.ID, e.Source, e.Commit)
		}
		if got, ok := LibraryByID(e.ID); !ok || got.Name != e.Name {
			t.Errorf("LibraryByID(%q) = %v, %v", e.ID, got.Name, ok)
		}
		if (e.Model != nil) != (e.ModelWhy != "") {
			t.Errorf("entry %s: a model of its own needs its reason, and only then", e.ID)
		}
	}
	if len(seen) != 8 {
		t.Errorf("%d entries; want 8", len(seen))
	}
	if _, ok := LibraryByID("no-such"); ok {
		t.Error(`LibraryByID("no-such") found an entry`)
	}
}

// TestLibraryVerdictsCanFail: the comparison above fails when an entry's
// expected verdict is not what the lab finds. A library lock with a plain
// PEXPIRE renewal breaks no-foreign-release, which a verdict of holds
// would hide.
func TestLibraryVerdictsCanFail(t *testing.T) {
	e, _ := LibraryByID("redsync")
	e.Recipe.Extend = []string{"PEXPIRE {key} {ttl}"}
	rep, err := Check(context.Background(), Request{Recipe: e.Recipe}, Budget{})
	if err != nil {
		t.Fatal(err)
	}
	pr, _ := rep.Property(PropNoForeignRelease)
	if pr.Status == e.Verdicts[1].Status {
		t.Errorf("a plain PEXPIRE renewal: no-foreign-release %s, as the entry's %s; want them to differ", pr.Status, e.Verdicts[1].Status)
	}
}

// TestRedlockEntriesBreakByClockJumps: the Redlock entries' one-holder
// verdict is Kleppmann's clock-jump case, as their reasoning says. Their
// counterexample has a node's clock jump, and without clock jumps (the
// same model otherwise, restarts delayed past the TTL included) one-holder
// holds.
func TestRedlockEntriesBreakByClockJumps(t *testing.T) {
	for _, e := range Library() {
		if e.Recipe.Nodes < 3 {
			continue
		}
		t.Run(e.ID, func(t *testing.T) {
			m := e.CheckModel()
			pr := status(t, checkT(t, Request{Recipe: e.Recipe, Model: &m}), PropOneHolder)
			if pr.Status != StatusBroken || !strings.Contains(strings.Join(faults(pr.Counterexample), " "), "clock jumps") {
				t.Errorf("one-holder %s by %v; want broken by a clock jump", pr.Status, faults(pr.Counterexample))
			}
			m.ClockJumps = JumpsNone
			if pr := status(t, checkT(t, Request{Recipe: e.Recipe, Model: &m}), PropOneHolder); pr.Status != StatusHolds {
				t.Errorf("without clock jumps one-holder %s (%v); want it to hold", pr.Status, faults(pr.Counterexample))
			}
		})
	}
}
