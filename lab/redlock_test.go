package lab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/locklab/locklab/internal/testenv"
	"github.com/locklab/locklab/lock"
)

// classicRedlock is the Redlock of the Redis documentation as a recipe:
// SET NX PX with one token on each node, and a compare-and-delete
// release on each.
func classicRedlock(nodes int) Recipe {
	return Recipe{Acquire: []string{lineSetNXPX}, Release: []string{lineCompareDelete}, Nodes: nodes}
}

// redlockModel is a fault model with pairs and long stalls, the clock
// jumps and restarts given.
func redlockModel(jumps, restarts string) *Model {
	return &Model{LongStalls: true, ClockJumps: jumps, Restarts: restarts, Combine: true}
}

// raceBudget is the default budget, its CPU time scaled for the race
// detector: a check on five nodes takes a tenth of it in a normal build.
func raceBudget() Budget {
	b := DefaultBudget()
	return b
}

func checkModel(t *testing.T, r Recipe, m *Model) Report {
	t.Helper()
	rep, err := Check(context.Background(), Request{Recipe: r, Model: m}, raceBudget())
	if err != nil {
		t.Fatalf("Check(%d nodes, %+v) = %v", r.Nodes, m, err)
	}
	if !rep.Works {
		t.Fatalf("the recipe does not work: %s", rep.WorksText)
	}
	return rep
}

// TestRedlockHoldsWithinItsAssumptions: the classic Redlock on five
// nodes keeps one holder when no clock jumps and a node that loses its
// data stays down longer than the TTL, as the Redis documentation asks.
func TestRedlockHoldsWithinItsAssumptions(t *testing.T) {
	rep := checkModel(t, classicRedlock(5), redlockModel(JumpsNone, RestartsEmptyDelayed))
	wantHolds(t, rep, map[Property]bool{PropOneHolder: true, PropNoForeignRelease: true, PropFreesAfterCrash: true})
	if rep.Nodes != 5 || rep.Quorum != 3 {
		t.Errorf("report: %d nodes, quorum %d; want 5 and 3", rep.Nodes, rep.Quorum)
	}
	if !strings.Contains(rep.Summary, lock.DriftRule) {
		t.Errorf("summary %q does not name the drift rule", rep.Summary)
	}
	pr, _ := rep.Property(PropOneHolder)
	if pr.Explored < 100 {
		t.Errorf("one-holder judged in %d schedules; want the systematic ones", pr.Explored)
	}
}

// TestRedlockClockJumpBreaks is Kleppmann's case: one node's clock
// jumps ahead while a client holds the lock on a bare majority, and a
// second client gets a majority with that node.
func TestRedlockClockJumpBreaks(t *testing.T) {
	rep := checkModel(t, classicRedlock(5), redlockModel(JumpsForward, RestartsNone))
	wantHolds(t, rep, map[Property]bool{PropOneHolder: false})
	pr, _ := rep.Property(PropOneHolder)
	ce := pr.Counterexample
	jumps := 0
	for _, f := range ce.Faults {
		if strings.Contains(f, "clock jumps") {
			jumps++
			if !regexp.MustCompile(`node \d's clock jumps`).MatchString(f) {
				t.Errorf("fault %q does not name its node", f)
			}
		}
	}
	if jumps != 1 || len(ce.Faults) > 2 {
		t.Errorf("faults %v; want one node's clock jump, and at most one other fault", ce.Faults)
	}
	if got := ce.Events[ce.Violation]; got.Kind != "acquire-ok" || len(got.Holding) != 2 {
		t.Errorf("violation at %s %q holding %v; want a second holder", got.Kind, got.Text, got.Holding)
	}
	if !strings.Contains(pr.Note, "Kleppmann") {
		t.Errorf("one-holder note %q does not say a minority's jump is judged", pr.Note)
	}
	// Without the jump, the same schedule keeps one holder: the verdict
	// is the jump's.
	wantShape(t, ce, 5)
}

// TestRedlockMinorityBreaks: a recipe that takes the lock on fewer nodes
// than a majority lets two clients hold it, with no clock jump and no
// restart.
func TestRedlockMinorityBreaks(t *testing.T) {
	r := classicRedlock(5)
	r.Quorum = 1
	rep := checkModel(t, r, redlockModel(JumpsNone, RestartsNone))
	wantHolds(t, rep, map[Property]bool{PropOneHolder: false})
	if !strings.Contains(rep.Summary, "fewer than a majority") {
		t.Errorf("summary %q does not say the quorum is a minority", rep.Summary)
	}
	pr, _ := rep.Property(PropOneHolder)
	for _, f := range pr.Counterexample.Faults {
		if strings.Contains(f, "clock") || strings.Contains(f, "restarts") {
			t.Errorf("fault %q: a minority quorum should break without node faults", f)
		}
	}
	// The same recipe with a majority holds under the same faults.
	r.Quorum = 3
	wantHolds(t, checkModel(t, r, redlockModel(JumpsNone, RestartsNone)), map[Property]bool{PropOneHolder: true})
}

// TestRedlockRestarts: a node that comes back at once without its data
// hands a second client the vote the first one had; one that keeps its
// data does not.
func TestRedlockRestarts(t *testing.T) {
	empty := checkModel(t, classicRedlock(5), redlockModel(JumpsNone, RestartsEmpty))
	wantHolds(t, empty, map[Property]bool{PropOneHolder: false})
	pr, _ := empty.Property(PropOneHolder)
	restarted := false
	for _, f := range pr.Counterexample.Faults {
		restarted = restarted || regexp.MustCompile(`node \d restarts without persistence`).MatchString(f)
	}
	if !restarted {
		t.Errorf("faults %v; want a node restarting without persistence", pr.Counterexample.Faults)
	}
	withData := checkModel(t, classicRedlock(5), redlockModel(JumpsNone, RestartsWithData))
	wantHolds(t, withData, map[Property]bool{PropOneHolder: true, PropFreesAfterCrash: true})
}

// TestRedlockPlainDelBreaks: on several nodes, a plain DEL deletes
// another client's lock even without a fault: a failed attempt releases
// on every node, where the holder's keys are.
func TestRedlockPlainDelBreaks(t *testing.T) {
	r := Recipe{Acquire: []string{lineSetNXPX}, Release: []string{"DEL {key}"}, Nodes: 3}
	rep, err := Check(context.Background(), Request{Recipe: r, Model: redlockModel(JumpsNone, RestartsNone)}, raceBudget())
	if err != nil {
		t.Fatal(err)
	}
	wantHolds(t, rep, map[Property]bool{PropNoForeignRelease: false})
	if rep.Works {
		t.Errorf("a plain DEL works on several nodes; want the first holder's release to find its keys gone")
	}
	pr, _ := rep.Property(PropNoForeignRelease)
	if ce := pr.Counterexample; len(ce.Faults) != 0 || !strings.Contains(ce.Events[ce.Violation].Text, "undo its failed attempt") {
		t.Errorf("counterexample %v %q; want the undo of a failed attempt, without faults", ce.Faults, ce.Events[ce.Violation].Text)
	}
	wantHolds(t, checkModel(t, classicRedlock(3), redlockModel(JumpsNone, RestartsNone)), map[Property]bool{PropNoForeignRelease: true})
}

func TestRedlockValidate(t *testing.T) {
	for _, tt := range []struct {
		r  Recipe
		ok bool
	}{
		{classicRedlock(0), true},
		{classicRedlock(1), true},
		{classicRedlock(3), true},
		{classicRedlock(5), true},
		{classicRedlock(2), false},
		{classicRedlock(4), false},
		{classicRedlock(7), false},
		{classicRedlock(-1), false},
		{Recipe{Acquire: []string{lineSetNXPX}, Release: []string{lineCompareDelete}, Nodes: 5, Quorum: 6}, false},
		{Recipe{Acquire: []string{lineSetNXPX}, Release: []string{lineCompareDelete}, Nodes: 1, Quorum: 2}, false},
		{Recipe{Acquire: []string{lineSetNXPX}, Release: []string{lineCompareDelete}, Nodes: 5, Quorum: -1}, false},
		{Recipe{Acquire: []string{lineSetNXPX}, Release: []string{lineCompareDelete}, Extend: []string{lineCompareExtend}, Nodes: 5}, true},
		{Recipe{Acquire: []string{lineSetNXPX, "PING"}, Release: []string{lineCompareDelete}, Extend: []string{lineCompareExtend}, Nodes: 5}, false},
		{Recipe{Acquire: []string{lineSetNXPX, "PING"}, Release: []string{lineCompareDelete, "PING"}, Extend: []string{lineCompareExtend}, Nodes: 3}, true},
	} {
		err := tt.r.Validate()
		if tt.ok != (err == nil) || err != nil && !errors.Is(err, ErrBadRecipe) {
			t.Errorf("Validate(%d lines, nodes %d, quorum %d) = %v; want ok %v", len(tt.r.Acquire)+len(tt.r.Release)+len(tt.r.Extend), tt.r.Nodes, tt.r.Quorum, err, tt.ok)
		}
	}
}

// wantShape checks that a counterexample on several nodes is shaped as
// the race plays a Redlock run: a lane and a state per node.
func wantShape(t *testing.T, ce *Counterexample, nodes int) {
	t.Helper()
	if ce.Nodes != nodes {
		t.Errorf("counterexample nodes = %d; want %d", ce.Nodes, nodes)
	}
	for k := 1; k <= nodes; k++ {
		if !slices.Contains(ce.Lanes, "redis node "+strconv.Itoa(k)) {
			t.Errorf("lanes %v lack redis node %d", ce.Lanes, k)
		}
	}
	for i, e := range ce.Events {
		if len(e.Nodes) != nodes {
			t.Fatalf("event %d has %d node states; want %d", i, len(e.Nodes), nodes)
		}
		if strings.HasPrefix(e.Actor, "redis") && !slices.Contains(ce.Lanes, e.Actor) {
			t.Errorf("event %d's actor %q is no lane", i, e.Actor)
		}
	}
}

// TestRedlockReplay: a counterexample on several nodes plays again from
// its seed.
func TestRedlockReplay(t *testing.T) {
	m := redlockModel(JumpsForward, RestartsNone)
	rep := checkModel(t, classicRedlock(5), m)
	pr, _ := rep.Property(PropOneHolder)
	if pr.Counterexample == nil {
		t.Fatal("no counterexample")
	}
	got, err := Replay(context.Background(), classicRedlock(5), m, pr.Counterexample.Seed)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Events) != len(pr.Counterexample.Events) || got.Summary != pr.Counterexample.Summary {
		t.Errorf("Replay(seed %d) differs from the report's counterexample", pr.Counterexample.Seed)
	}
}

// TestRedlockNarrationIsTrue checks every sentence of the systematic
// schedules of Redlock recipes against the replies and the nodes'
// states: each node's yes or no is its reply, the yeses are counted
// right, the validity is the TTL less the round's time less lock.Drift,
// a holder is a holder, a deleted key is gone from its node, and each
// node event is about its own node.
func TestRedlockNarrationIsTrue(t *testing.T) {
	recipes := map[string]Recipe{
		"classic on 5":         classicRedlock(5),
		"extend on 3":          {Acquire: []string{lineSetNXPX}, Release: []string{lineCompareDelete}, Extend: []string{lineCompareExtend}, Nodes: 3},
		"plain DEL on 3":       {Acquire: []string{lineSetNXPX}, Release: []string{"DEL {key}"}, Nodes: 3},
		"minority quorum on 5": {Acquire: []string{lineSetNXPX}, Release: []string{lineCompareDelete}, Nodes: 5, Quorum: 2},
	}
	ask := regexp.MustCompile(`^Client (\d) asks node (\d) (?:for the lock|to renew its lock): (.*), a (yes|no) \((\d+) (?:yes|yeses) of (\d) nodes so far\)\.`)
	round := regexp.MustCompile(`(\d) of (\d) nodes said yes \(it needs (\d)\)`)
	validity := regexp.MustCompile(`its round took [^,]+, so the validity is (\d+) − (\d+) − (\d+) = (-?\d+) ms`)
	holdsFor := regexp.MustCompile(`holds the lock for (-?\d+) ms`)
	nodeOf := regexp.MustCompile(`on node (\d)`)
	m := redlockModel(JumpsBoth, RestartsEmpty)
	for name, r := range recipes {
		t.Run(name, func(t *testing.T) {
			sp := newSpace(r, *m)
			limit := sp.pairBase() + len(sp.two)*len(sp.two)
			if !testenv.SlowTier() || raceCPUFactor > 1 {
				limit = min(limit, 150)
			}
			bad, judged := 0, 0
			for n := range limit {
				if _, ok := sp.plan(n); !ok {
					continue
				}
				ce, err := Replay(context.Background(), r, m, scheduleSeed(1, n))
				if err != nil {
					t.Fatal(err)
				}
				judged++
				yes := map[string]int{}
				start := map[string]int64{}
				for i, e := range ce.Events {
					where := fmt.Sprintf("schedule %d event %d (%s %s): %q", n, i, e.Actor, e.Kind, e.Text)
					if e.Line != "" && !strings.Contains(e.Text, e.Reply) {
						t.Errorf("%s does not quote the reply %q", where, e.Reply)
					}
					if e.Kind == "delay" && strings.Contains(e.Text, "acquire line 1 on node 1") {
						start[e.Actor], yes[e.Actor] = e.AtMS, 0
					}
					if mm := ask.FindStringSubmatch(e.Text); mm != nil {
						if mm[2] == "1" && !strings.Contains(ce.Events[max(i-1, 0)].Text, "acquire line 1 on node 1 is") && strings.Contains(e.Text, "for the lock") {
							start[e.Actor], yes[e.Actor] = e.AtMS, 0
						}
						if mm[2] == "1" && strings.Contains(e.Text, "renew") {
							yes[e.Actor] = 0
						}
						if (mm[4] == "yes") != (mm[3] == "OK" || mm[3] == "(integer) 1") {
							t.Errorf("%s: reply %s read as a %s", where, mm[3], mm[4])
						}
						if mm[4] == "yes" {
							yes[e.Actor]++
						}
						if mm[5] != strconv.Itoa(yes[e.Actor]) || mm[6] != strconv.Itoa(len(e.Nodes)) {
							t.Errorf("%s: %d yeses counted", where, yes[e.Actor])
						}
					}
					if mm := round.FindStringSubmatch(e.Text); mm != nil {
						if mm[1] != strconv.Itoa(yes[e.Actor]) || mm[3] != strconv.Itoa(r.quorum()) {
							t.Errorf("%s: %d yeses counted, quorum %d", where, yes[e.Actor], r.quorum())
						}
						took := mm[1] >= mm[3]
						if v := validity.FindStringSubmatch(e.Text); v != nil {
							elapsed := e.AtMS - start[e.Actor]
							want := ttl.Milliseconds() - elapsed - lock.Drift(ttl).Milliseconds()
							if v[1] != "2000" || v[2] != strconv.FormatInt(elapsed, 10) || v[3] != strconv.FormatInt(lock.Drift(ttl).Milliseconds(), 10) || v[4] != strconv.FormatInt(want, 10) {
								t.Errorf("%s: the round took %d ms; want validity %d", where, elapsed, want)
							}
							took = took && want > 0
							if h := holdsFor.FindStringSubmatch(e.Text); h != nil && h[1] != strconv.FormatInt(want, 10) {
								t.Errorf("%s: holds for %s ms; want %d", where, h[1], want)
							}
						}
						if e.Kind == "acquire-ok" && (!took || !slices.Contains(e.Holding, e.Actor)) {
							t.Errorf("%s: taken, but the count or the holders %v say otherwise", where, e.Holding)
						}
						if e.Kind == "acquire-fail" && (took || slices.Contains(e.Holding, e.Actor)) {
							t.Errorf("%s: not taken, but the count or the holders %v say otherwise", where, e.Holding)
						}
					}
					if strings.Contains(e.Text, "key is deleted") {
						if mm := nodeOf.FindStringSubmatch(e.Text); mm == nil {
							t.Errorf("%s names no node", where)
						} else if k, _ := strconv.Atoi(mm[1]); e.Nodes[k-1].Holder != "" {
							t.Errorf("%s, but node %d's key holds %s", where, k, e.Nodes[k-1].Holder)
						}
					}
					if k, ok := strings.CutPrefix(e.Actor, "redis node "); ok {
						st := e.Nodes[k[0]-'1']
						switch {
						case !strings.Contains(strings.ToLower(e.Text), "node "+k) && e.Kind != "still-locked":
							t.Errorf("%s: a node event that does not name node %s", where, k)
						case e.Kind == "crash" && st.Up, e.Kind == "restart" && !st.Up:
							t.Errorf("%s, but node %s is up: %v", where, k, st.Up)
						case e.Kind == "expire" && st.Holder != "":
							t.Errorf("%s, but node %s's key holds %s", where, k, st.Holder)
						}
					}
				}
				if t.Failed() {
					bad++
					if bad > 3 {
						t.FailNow()
					}
				}
			}
			if judged < 50 {
				t.Errorf("only %d schedules replayed", judged)
			}
		})
	}
}

// largestOnNodes is the largest recipe on n nodes: MaxNodeLines/n lines,
// each a script of about MaxLineBytes, with a renewal.
func largestOnNodes(t testing.TB, n int) Recipe {
	big := largest(t)
	lines := MaxNodeLines / n
	r := Recipe{Acquire: big.Acquire[:1], Extend: big.Extend[:1], Release: big.Release[:lines-2], Fencing: true, Nodes: n}
	if err := r.Validate(); err != nil {
		t.Fatalf("largest recipe on %d nodes: %v", n, err)
	}
	return r
}

// TestRedlockLargestRecipe: the largest recipe on five and on three
// nodes, under the fault model with the most faults, fits in the default
// budget with room to spare.
func TestRedlockLargestRecipe(t *testing.T) {
	m := redlockModel(JumpsBoth, RestartsEmpty)
	for _, n := range []int{5, 3} {
		b := DefaultBudget()
		rep, err := Check(context.Background(), Request{Recipe: largestOnNodes(t, n), Model: m}, b)
		if err != nil {
			t.Fatalf("Check(the largest recipe on %d nodes) = %v", n, err)
		}
		if !rep.Works {
			t.Errorf("largest recipe on %d nodes does not work: %s", n, rep.WorksText)
		}
		if rep.Steps > DefaultBudget().Steps/4 {
			t.Errorf("largest recipe on %d nodes ran %d lines; the budget allows %d", n, rep.Steps, DefaultBudget().Steps)
		}
		t.Logf("largest recipe on %d nodes: %d schedules, %d lines, %d ms CPU", n, rep.Schedules, rep.Steps, rep.CPUMS)
	}
}

func BenchmarkCheckRedlock(b *testing.B) {
	m := redlockModel(JumpsBoth, RestartsEmpty)
	for _, bc := range []struct {
		name string
		r    Recipe
	}{{"classic-5", classicRedlock(5)}, {"largest-5", largestOnNodes(b, 5)}, {"largest-3", largestOnNodes(b, 3)}} {
		b.Run(bc.name, func(b *testing.B) {
			steps, cpu, schedules := 0, int64(0), 0
			for b.Loop() {
				rep, err := Check(context.Background(), Request{Recipe: bc.r, Model: m}, Budget{})
				if err != nil {
					b.Fatal(err)
				}
				steps, cpu, schedules = rep.Steps, cpu+rep.CPUMS, rep.Schedules
			}
			b.ReportMetric(float64(schedules), "schedules/check")
			b.ReportMetric(float64(steps), "lines/check")
			b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ms/check")
		})
	}
}

// TestGoldenRedlock: Kleppmann's counterexample on five nodes and the
// minority quorum's, as the learner reads them, are the ones in
// testdata; run with -update to accept a change, and say why in the
// commit.
func TestGoldenRedlock(t *testing.T) {
	minority := classicRedlock(5)
	minority.Quorum = 1
	for _, tt := range []struct {
		name string
		r    Recipe
		m    *Model
	}{
		{"redlock-clock-jump", classicRedlock(5), redlockModel(JumpsForward, RestartsNone)},
		{"redlock-restart-empty", classicRedlock(5), redlockModel(JumpsNone, RestartsEmpty)},
		{"redlock-minority", minority, redlockModel(JumpsNone, RestartsNone)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rep := checkModel(t, tt.r, tt.m)
			pr, _ := rep.Property(PropOneHolder)
			ce := pr.Counterexample
			if ce == nil {
				t.Fatal("one-holder holds; want a counterexample")
			}
			got := struct {
				Seed    uint64        `json:"seed"`
				Faults  []string      `json:"faults"`
				Summary string        `json:"summary"`
				Note    string        `json:"note"`
				Report  string        `json:"report"`
				Events  []goldenEvent `json:"events"`
			}{Seed: ce.Seed, Faults: ce.Faults, Summary: ce.Summary, Note: pr.Note, Report: rep.Summary}
			for _, e := range ce.Events {
				got.Events = append(got.Events, goldenEvent{AtMS: e.AtMS, Actor: e.Actor, Kind: string(e.Kind), Text: e.Text, Line: e.Line, Reply: e.Reply})
			}
			b, err := json.MarshalIndent(got, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			b = append(b, '\n')
			path := filepath.Join("testdata", "cx-"+tt.name+".golden.json")
			if *update {
				if err := os.WriteFile(path, b, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./lab -run TestGoldenRedlock -update)", err)
			}
			if string(want) != string(b) {
				t.Errorf("counterexample differs from %s:\n%s", path, b)
			}
		})
	}
}
