package lab

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
)

// CompareRequest is two recipes to check on the same schedules, under
// one fault model (nil: DefaultModel). A is the learner's recipe, B the
// one it is compared with.
type CompareRequest struct {
	A     Recipe `json:"a"`
	B     Recipe `json:"b"`
	Model *Model `json:"model,omitempty"`
}

// Comparison is where two recipes differ, property by property, on the
// schedules both ran.
type Comparison struct {
	// Schedules is how many schedules both recipes ran: the systematic
	// schedules of A (every one with up to MaxFaults faults) whose faults
	// strike steps B has too. Each ran once with each recipe.
	Schedules int    `json:"schedules"`
	MaxFaults int    `json:"max_faults"`
	Summary   string `json:"summary"`
	Model     Model  `json:"model"`
	ModelText string `json:"model_text"`
	Nodes     int    `json:"nodes"`
	// Steps is the recipe lines both ran; CPUMS the CPU time it took
	// (the only field that varies from run to run).
	Steps int   `json:"steps"`
	CPUMS int64 `json:"cpu_ms"`
	// WorksA and WorksB say whether, in the schedule without faults,
	// every client took the lock with that recipe and released it;
	// WorksTextA and WorksTextB say why not.
	WorksA     bool   `json:"works_a"`
	WorksB     bool   `json:"works_b"`
	WorksTextA string `json:"works_text_a,omitempty"`
	WorksTextB string `json:"works_text_b,omitempty"`
	// Properties are in report order (see Properties).
	Properties []PropertyComparison `json:"properties"`
	// Differ counts the properties whose status differs.
	Differ int `json:"differ"`
}

// PropertyComparison is one property of a Comparison.
type PropertyComparison struct {
	ID Property `json:"id"`
	// A and B are each recipe's result on the shared schedules.
	A Side `json:"a"`
	B Side `json:"b"`
	// Differs is A.Status != B.Status.
	Differs bool `json:"differs"`
	// Text says where they stand, in one or two sentences.
	Text string `json:"text"`
	// Telling is the first schedule, in the order explored, in which one
	// recipe broke the property and the other did not; nil when neither
	// or both broke it in every schedule.
	Telling *Telling `json:"telling"`
}

// Side is one recipe's result for a property in a Comparison: its
// status (StatusHolds, StatusBroken or StatusNotJudged) and the
// schedules that exercised it.
type Side struct {
	Status   string `json:"status"`
	Holds    bool   `json:"holds"`
	Explored int    `json:"explored"`
}

// Telling is a schedule that tells two recipes apart: the same faults,
// as each recipe ran it, each shaped as a Counterexample for the race
// animation. Broke is "a" or "b": the recipe that broke the property.
type Telling struct {
	Faults []string        `json:"faults"`
	Broke  string          `json:"broke"`
	A      *Counterexample `json:"a"`
	B      *Counterexample `json:"b"`
}

// Compare checks two recipes on the same schedules and says, for each
// property, where one holds and the other breaks, with the first
// schedule that tells them apart. The schedules are A's systematic ones
// whose faults strike steps (a part's line on a node, or the write) that
// B has too; random schedules are not run. Both recipes must run on as
// many nodes. It answers as Check does: ErrBadRecipe naming the recipe,
// ErrBudget, ctx's error. The budget bounds the two recipes together,
// at twice a check's lines and CPU time: a compare costs at most two
// checks. The same request and budget always give the same Comparison
// (but for its CPUMS).
func Compare(ctx context.Context, req CompareRequest, budget Budget) (Comparison, error) {
	var ru [2]*rules
	for i, r := range []Recipe{req.A, req.B} {
		if err := r.Validate(); err != nil {
			return Comparison{}, fmt.Errorf("compare: recipe %s: %w", "AB"[i:i+1], err)
		}
		var err error
		if ru[i], err = compileRules(r); err != nil {
			return Comparison{}, fmt.Errorf("compare: recipe %s: %w", "AB"[i:i+1], err)
		}
	}
	if req.A.nodeCount() != req.B.nodeCount() {
		return Comparison{}, fmt.Errorf("compare: the recipes run on %d and %d nodes; compare recipes on as many nodes, whose schedules are the same: %w", req.A.nodeCount(), req.B.nodeCount(), ErrBadRecipe)
	}
	m := DefaultModel()
	if req.Model != nil {
		m = *req.Model
	}
	if err := m.Validate(); err != nil {
		return Comparison{}, err
	}
	b := budget.withDefaults()
	b.Steps *= 2
	b.CPU *= 2
	return compare(ctx, req.A, req.B, ru[0], ru[1], m, b)
}

// planKey names a plan by what its faults strike, whatever the recipe:
// the same key is the same schedule for two recipes.
func planKey(steps []step, p plan) string {
	keys := make([]string, len(p.faults))
	for i, f := range p.faults {
		st := steps[f.step]
		keys[i] = fmt.Sprintf("%d/%d/%s/%d/%d/%d/%t/%d", f.kind, f.client, st.part, st.index, st.on, f.d, f.persist, f.node)
	}
	slices.Sort(keys)
	return fmt.Sprintf("%d:%s", p.clients, strings.Join(keys, ","))
}

func compare(ctx context.Context, a, b Recipe, ruA, ruB *rules, m Model, bud Budget) (Comparison, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	sp := newSpend(bud)
	defer sp.close()
	const base = 1 // systematic schedules do not depend on the seed
	spaceA, spaceB := newSpace(a, m), newSpace(b, m)
	stepsA, stepsB := jobOf(a), jobOf(b)
	inB := map[string]int{}
	for n := range spaceB.randomBase() {
		if p, ok := spaceB.plan(n); ok {
			inB[planKey(stepsB, p)] = n
		}
	}
	out := Comparison{Model: m, ModelText: m.Text(), Nodes: a.nodeCount(), WorksA: true, WorksB: true, MaxFaults: 1}
	type tally struct{ exercised, broken int }
	var ta, tb [4]tally
	tell := map[Property]*Telling{}
	props := Properties()
	run := func(n int) (*result, bool, error) {
		pA, ok := spaceA.plan(n)
		if !ok {
			return nil, false, nil
		}
		nB, ok := inB[planKey(stepsA, pA)]
		if !ok {
			return nil, false, nil
		}
		pB, _ := spaceB.plan(nB)
		resA, err := sp.schedule(ctx, a, ruA, m, base, n, pA)
		if err != nil {
			return nil, false, err
		}
		resB, err := sp.schedule(ctx, b, ruB, m, base, nB, pB)
		if err != nil {
			return nil, false, err
		}
		out.Schedules++
		if n == 0 {
			out.WorksA, out.WorksTextA = resA.works == "", resA.works
			out.WorksB, out.WorksTextB = resB.works == "", resB.works
		}
		for i, p := range props {
			_, brokeA := resA.violations[p.ID]
			_, brokeB := resB.violations[p.ID]
			for _, x := range []struct {
				t     *tally
				res   *result
				broke bool
			}{{&ta[i], resA, brokeA}, {&tb[i], resB, brokeB}} {
				if x.res.exercised[p.ID] {
					x.t.exercised++
				}
				if x.broke {
					x.t.broken++
				}
			}
			if brokeA != brokeB && tell[p.ID] == nil {
				t := &Telling{Faults: resA.faultText, Broke: "a"}
				if brokeB {
					t.Broke = "b"
				}
				if t.Faults == nil {
					t.Faults = []string{}
				}
				t.A = resA.counterexample(violationOr(resA, p.ID))
				t.B = resB.counterexample(violationOr(resB, p.ID))
				tell[p.ID] = t
			}
		}
		return resA, true, nil
	}
	reach := make([]map[trigger]bool, len(spaceA.two))
	for n := range spaceA.pairBase() {
		res, ok, err := run(n)
		if err != nil {
			return Comparison{}, err
		}
		if ok && n >= 1 && n <= len(spaceA.two) {
			reach[n-1] = res.reached
		}
	}
	if m.Combine {
		out.MaxFaults = 2
		for i := range spaceA.two {
			for j := i + 1; j < len(spaceA.two); j++ {
				fa, fb := spaceA.two[i].faults[0], spaceA.two[j].faults[0]
				if reach[i] == nil || reach[j] == nil || !reach[i][fb.at()] || !reach[j][fa.at()] {
					continue
				}
				if _, _, err := run(spaceA.pairBase() + i*len(spaceA.two) + j); err != nil {
					return Comparison{}, err
				}
			}
		}
	}
	out.Steps = sp.steps
	out.CPUMS = sp.used().Milliseconds()
	side := func(t tally) Side {
		switch {
		case t.broken > 0:
			return Side{Status: StatusBroken, Explored: t.exercised}
		case t.exercised > 0:
			return Side{Status: StatusHolds, Holds: true, Explored: t.exercised}
		}
		return Side{Status: StatusNotJudged}
	}
	for i, p := range props {
		pc := PropertyComparison{ID: p.ID, A: side(ta[i]), B: side(tb[i]), Telling: tell[p.ID]}
		pc.Differs = pc.A.Status != pc.B.Status
		if !pc.Differs {
			pc.Telling = nil
		}
		if pc.Differs {
			out.Differ++
		}
		pc.Text = comparisonText(pc)
		out.Properties = append(out.Properties, pc)
	}
	out.Summary = fmt.Sprintf("Both recipes ran the same %d systematic schedules with up to %d %s (no random ones); they differ on %d of the %d properties.",
		out.Schedules, out.MaxFaults, plural(out.MaxFaults, "fault", "faults"), out.Differ, len(props))
	return out, nil
}

// violationOr is the event at which res broke p, or -1.
func violationOr(res *result, p Property) int {
	if i, ok := res.violations[p]; ok {
		return i
	}
	return -1
}

// comparisonText says where two recipes stand on a property.
func comparisonText(pc PropertyComparison) string {
	word := func(s Side) string {
		switch s.Status {
		case StatusHolds:
			return fmt.Sprintf("holds it (in the %d schedules that exercised it)", s.Explored)
		case StatusBroken:
			return "breaks it"
		}
		return "is not judged on it (no schedule exercised it)"
	}
	if !pc.Differs {
		switch pc.A.Status {
		case StatusHolds:
			return "Both recipes hold it."
		case StatusBroken:
			return "Both recipes break it."
		}
		return "Neither recipe is judged on it."
	}
	text := fmt.Sprintf("Your recipe %s; the other %s.", word(pc.A), word(pc.B))
	if t := pc.Telling; t != nil {
		who, other := "your recipe", "the other"
		if t.Broke == "b" {
			who, other = "the other", "your recipe"
		}
		faults := "no fault"
		if len(t.Faults) > 0 {
			faults = strings.TrimSuffix(strings.Join(t.Faults, " "), ".")
		}
		text += fmt.Sprintf(" The first schedule that tells them apart (%s): %s breaks it and %s does not.", faults, who, other)
	}
	return text
}

// CompareLab runs Compare(ctx, req, b) when its turn comes, as CheckLab
// runs a check: a comparison takes a check's place among those running
// at once, and takes turns with them.
func (p *InProcess) CompareLab(ctx context.Context, req CompareRequest, b Budget) (Comparison, error) {
	select {
	case p.running <- struct{}{}:
	case <-ctx.Done():
		return Comparison{}, fmt.Errorf("lab compare: %w", ctx.Err())
	}
	defer func() { <-p.running }()
	b.Turns = &p.turns
	return Compare(ctx, req, b)
}
