package lab

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func compareT(t *testing.T, a, b Recipe, m *Model) Comparison {
	t.Helper()
	c, err := Compare(context.Background(), CompareRequest{A: a, B: b, Model: m}, raceBudget())
	if err != nil {
		t.Fatalf("Compare = %v", err)
	}
	// The fewest systematic schedules of these tests' recipes and
	// models: a Redlock without node faults has 57.
	if c.Schedules < 50 {
		t.Fatalf("Compare ran %d schedules; want the systematic ones", c.Schedules)
	}
	return c
}

func comparison(t *testing.T, c Comparison, p Property) PropertyComparison {
	t.Helper()
	for _, pc := range c.Properties {
		if pc.ID == p {
			return pc
		}
	}
	t.Fatalf("no comparison of %s", p)
	return PropertyComparison{}
}

// TestCompareTellsReleasesApart: the compare-and-delete release and a
// plain DEL differ on no-foreign-release only, and the schedule that
// tells them apart has the plain DEL delete the other client's lock
// where the compare-and-delete leaves it alone.
func TestCompareTellsReleasesApart(t *testing.T) {
	plain, _ := ChallengeByID("plain-del")
	c := compareT(t, Textbook(), plain.Recipe, nil)
	pc := comparison(t, c, PropNoForeignRelease)
	if !pc.Differs || pc.A.Status != StatusHolds || pc.B.Status != StatusBroken {
		t.Fatalf("no-foreign-release: %s vs %s; want holds vs broken", pc.A.Status, pc.B.Status)
	}
	tl := pc.Telling
	if tl == nil || tl.Broke != "b" {
		t.Fatalf("telling = %+v; want a schedule the plain DEL breaks", tl)
	}
	if v := tl.B.Events[tl.B.Violation]; v.Kind != "delete-other" || !strings.Contains(v.Line, "DEL lock:lab") {
		t.Errorf("the plain DEL's schedule breaks at %s %q; want its DEL deleting the other's lock", v.Kind, v.Text)
	}
	for _, e := range tl.A.Events {
		if e.Kind == "delete-other" {
			t.Errorf("the compare-and-delete's run of the same schedule deletes another's lock: %q", e.Text)
		}
	}
	if !reflect.DeepEqual(tl.A.Faults, tl.B.Faults) || len(tl.Faults) == 0 {
		t.Errorf("faults %v and %v; want the same schedule, with faults", tl.A.Faults, tl.B.Faults)
	}
	// Each side plays again from its seed.
	for _, side := range []struct {
		r  Recipe
		ce *Counterexample
	}{{Textbook(), tl.A}, {plain.Recipe, tl.B}} {
		got, err := Replay(context.Background(), side.r, nil, side.ce.Seed)
		if err != nil || !reflect.DeepEqual(got.Events, side.ce.Events) {
			t.Errorf("Replay(seed %d) = %v; want the telling schedule's events", side.ce.Seed, err)
		}
	}
	for _, p := range []Property{PropOneHolder, PropFreesAfterCrash, PropNoStaleWrite} {
		if pc := comparison(t, c, p); pc.Differs || pc.Telling != nil {
			t.Errorf("%s: %s vs %s; want the same", p, pc.A.Status, pc.B.Status)
		}
	}
	if c.Differ != 1 || !strings.Contains(c.Summary, "differ on 1 of the 4") {
		t.Errorf("differ = %d, summary %q", c.Differ, c.Summary)
	}
	if !strings.Contains(pc.Text, "the other breaks it") || !strings.Contains(pc.Text, "tells them apart") {
		t.Errorf("text = %q", pc.Text)
	}
}

// TestCompareOneHolder: SET without NX breaks one-holder in the schedule
// without faults; the textbook lock does not.
func TestCompareOneHolder(t *testing.T) {
	noNX := Recipe{Acquire: []string{"SET {key} {token} PX {ttl}"}, Release: []string{lineCompareDelete}}
	c := compareT(t, noNX, Textbook(), nil)
	pc := comparison(t, c, PropOneHolder)
	if !pc.Differs || pc.Telling == nil || pc.Telling.Broke != "a" || len(pc.Telling.Faults) != 0 {
		t.Fatalf("one-holder: %+v; want the schedule without faults, broken by the first recipe", pc)
	}
}

// TestCompareDifferentShapes: recipes with different lines share the
// schedules whose faults strike steps both have: a crash after acquire
// line 1 leaves SETNX's key without a TTL, and SET NX PX's with one.
func TestCompareDifferentShapes(t *testing.T) {
	ch, _ := ChallengeByID("setnx-then-expire")
	c := compareT(t, Textbook(), ch.Recipe, nil)
	pc := comparison(t, c, PropFreesAfterCrash)
	if !pc.Differs || pc.Telling == nil || pc.Telling.Broke != "b" {
		t.Fatalf("frees-after-crash: %s vs %s, telling %v; want the SETNX recipe to break it", pc.A.Status, pc.B.Status, pc.Telling)
	}
	if f := pc.Telling.Faults; len(f) != 1 || !strings.Contains(f[0], "crashes after acquire line 1") {
		t.Errorf("faults %v; want a crash after acquire line 1", f)
	}
}

// TestCompareSame: a recipe compared with itself differs nowhere.
func TestCompareSame(t *testing.T) {
	c := compareT(t, Textbook(), Textbook(), nil)
	if c.Differ != 0 {
		t.Errorf("a recipe differs from itself on %d properties", c.Differ)
	}
	for _, pc := range c.Properties {
		if pc.A != pc.B || pc.Telling != nil {
			t.Errorf("%s: %+v vs %+v", pc.ID, pc.A, pc.B)
		}
	}
}

// TestCompareRedlock: on five nodes, the majority and a quorum of one
// differ on one-holder.
func TestCompareRedlock(t *testing.T) {
	minority := classicRedlock(5)
	minority.Quorum = 1
	c := compareT(t, classicRedlock(5), minority, redlockModel(JumpsNone, RestartsWithData))
	pc := comparison(t, c, PropOneHolder)
	if !pc.Differs || pc.Telling == nil || pc.Telling.Broke != "b" || pc.Telling.B.Nodes != 5 {
		t.Fatalf("one-holder: %+v; want the minority quorum to break it, on 5 nodes", pc)
	}
}

func TestCompareRefuses(t *testing.T) {
	bad := Recipe{Acquire: []string{"SET {nope} 1"}, Release: []string{"DEL {key}"}}
	for _, tt := range []struct {
		name string
		req  CompareRequest
		b    Budget
		want error
		says string
	}{
		{"bad second recipe", CompareRequest{A: Textbook(), B: bad}, Budget{}, ErrBadRecipe, "recipe B"},
		{"nodes differ", CompareRequest{A: Textbook(), B: classicRedlock(3)}, Budget{}, ErrBadRecipe, "1 and 3 nodes"},
		{"bad model", CompareRequest{A: Textbook(), B: Textbook(), Model: &Model{ClockJumps: "sideways", Restarts: RestartsNone}}, Budget{}, ErrBadRecipe, "clock_jumps"},
		{"lines", CompareRequest{A: Textbook(), B: Textbook()}, Budget{Steps: 300}, ErrBudget, "more than 600 lines"},
		{"bomb", CompareRequest{A: Textbook(), B: Recipe{Acquire: []string{`EVAL "while true do end" 0`}, Release: []string{"DEL {key}"}}}, Budget{}, ErrBudget, "went past the playground's limits"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compare(context.Background(), tt.req, tt.b)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("Compare = %v; want %v saying %q", err, tt.want, tt.says)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Compare(ctx, CompareRequest{A: Textbook(), B: Textbook()}, Budget{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Compare(canceled) = %v", err)
	}
}

// TestCompareLargest: two of the largest recipes compare within the
// default budget, which bounds them together at two checks' worth.
func TestCompareLargest(t *testing.T) {
	b := DefaultBudget()
	c, err := Compare(context.Background(), CompareRequest{A: largest(t), B: largest(t)}, b)
	if err != nil {
		t.Fatalf("Compare(the largest recipes) = %v", err)
	}
	if c.Steps > DefaultBudget().Steps/2 {
		t.Errorf("ran %d lines; the budget allows %d", c.Steps, 2*DefaultBudget().Steps)
	}
	t.Logf("largest recipes compared: %d schedules, %d lines, %d ms CPU", c.Schedules, c.Steps, c.CPUMS)
}
