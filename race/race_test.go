package race

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"go/build"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json")

// run is Run for tests: it fails the test on error.
func run(t *testing.T, id string, p Params) Timeline {
	t.Helper()
	tl, err := Run(id, p)
	if err != nil {
		t.Fatalf("Run(%q, %+v) error: %v", id, p, err)
	}
	return tl
}

// defaultsOf returns the default parameters of scenario id.
func defaultsOf(t testing.TB, id string) Params {
	t.Helper()
	for _, in := range List() {
		if in.ID == id {
			return in.Defaults
		}
	}
	t.Fatalf("no scenario %q", id)
	return Params{}
}

// goldenRuns are the runs kept in testdata: every scenario with its
// defaults, the variants a setting changes most, and runs with faults
// added as a learner adds them (the fault= of a URL).
func goldenRuns(t testing.TB) []goldenRun {
	t.Helper()
	var out []goldenRun
	for _, in := range List() {
		out = append(out, goldenRun{name: in.ID, id: in.ID, p: in.Defaults})
	}
	with := func(name, id string, edit func(*Params), faults ...string) {
		p := defaultsOf(t, id)
		edit(&p)
		for _, f := range faults {
			ft, err := ParseFault(f)
			if err != nil {
				t.Fatalf("ParseFault(%q): %v", f, err)
			}
			p.Faults = append(p.Faults, ft)
		}
		out = append(out, goldenRun{name: name, id: id, p: p})
	}
	none := func(*Params) {}
	with("failover-fencing", "failover", func(p *Params) { p.Fencing = true })
	with("failover-wait", "failover", func(p *Params) { p.Wait = true })
	with("watchdog-progress", "watchdog", func(p *Params) { p.Renew = RenewProgress })
	with("fault-normal-pause", "normal", none, "pause:client1:500:12000")
	with("fault-normal-crash", "normal", none, "crash:redis:1000:2000")
	with("fault-normal-crash-persist", "normal", none, "crash:redis:1000:2000-persist")
	with("fault-normal-clock-jump", "normal", none, "clock-jump:redis:1000:9500")
	with("fault-fencing-crash", "fencing", none, "crash:redis:3000:500")
	with("fault-redlock-delay", "redlock-clock-jump", none, "delay:client1:0:3000")
	with("fault-redlock-crash-two", "redlock-crash", func(p *Params) { p.RestartDelay = 11 * time.Second }, "crash:node2:1200:500")
	return out
}

type goldenRun struct {
	name, id string
	p        Params
}

func TestGolden(t *testing.T) {
	for _, g := range goldenRuns(t) {
		t.Run(g.name, func(t *testing.T) {
			got, err := json.MarshalIndent(run(t, g.id, g.p), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", g.name+".golden.json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("Run(%q) timeline differs from %s; run go test -update and review the diff\ngot:\n%s", g.name, path, got)
			}
		})
	}
}

// The same URL gives the same run, faults included.
func TestSameInputsSameTimeline(t *testing.T) {
	for _, g := range goldenRuns(t) {
		t.Run(g.name, func(t *testing.T) {
			a, b := run(t, g.id, g.p), run(t, g.id, g.p)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("Run(%q) twice gave different timelines:\n%+v\n%+v", g.name, a, b)
			}
		})
	}
}

func TestSeedChangesRetryTimes(t *testing.T) {
	p := defaultsOf(t, "gc-pause")
	a := run(t, "gc-pause", p)
	p.Seed = 2
	b := run(t, "gc-pause", p)
	if reflect.DeepEqual(a.Events, b.Events) {
		t.Errorf("Run(%q) with seeds 1 and 2 gave the same events; want different retry times", "gc-pause")
	}
}

// The default outcomes of each scenario must not hang on one lucky seed:
// each seed gives at least these (retry times may add a late write, in
// release-del, say).
func TestDefaultOutcomesForManySeeds(t *testing.T) {
	want := map[string][]Outcome{
		"normal":             set(safe),
		"gc-pause":           set(th, acc),
		"fencing":            set(th, rej),
		"release-del":        set(del, th),
		"renewal":            set(th),
		"redlock-clock-jump": set(th, acc),
		"redlock-crash":      set(th, acc),
		"failover":           set(th, acc),
		"watchdog":           set(nf, st),
	}
	for _, in := range List() {
		w, ok := want[in.ID]
		if !ok {
			t.Errorf("no expected outcomes for scenario %q", in.ID)
			continue
		}
		for seed := range uint64(30) {
			p := in.Defaults
			p.Seed = seed
			tl := run(t, in.ID, p)
			got := tl.OutcomeSet()
			for _, o := range w {
				if !slices.Contains(got, o) {
					t.Errorf("Run(%q, seed %d) outcomes = %q; want %q among them", in.ID, seed, got, o)
				}
			}
			if tl.Verdict != w[0] {
				t.Errorf("Run(%q, seed %d).Verdict = %q; want the most serious outcome, %q", in.ID, seed, tl.Verdict, w[0])
			}
		}
	}
}

// Every timeline is in time order, and what it shows of the nodes is
// within bounds.
func TestTimelineInvariants(t *testing.T) {
	for _, in := range List() {
		tl := run(t, in.ID, in.Defaults)
		var last int64
		for i, e := range tl.Events {
			if e.AtMS < last {
				t.Errorf("%s: event %d at %d ms comes after one at %d ms", in.ID, i, e.AtMS, last)
			}
			last = e.AtMS
			if e.Text == "" || e.Actor == "" || e.Kind == "" {
				t.Errorf("%s: event %d = %+v; want actor, kind and text", in.ID, i, e)
			}
			for _, n := range e.Nodes {
				if n.TTLMS < 0 || n.TTLMS > in.Defaults.TTL.Milliseconds() || (n.Holder == "") != (n.TTLMS == 0) {
					t.Errorf("%s: event %d: node %+v; want a TTL in (0, TTL] exactly when there is a holder", in.ID, i, n)
				}
			}
		}
	}
}

// The race package is a domain package: it drives the lock package and
// knows nothing of the web layer.
func TestImports(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pkg.Imports, "github.com/locklab/locklab/lock") {
		t.Errorf("race imports %v; want github.com/locklab/locklab/lock among them", pkg.Imports)
	}
	for _, imp := range pkg.Imports {
		for _, bad := range []string{"github.com/locklab/locklab/web", "github.com/labstack/echo/v4", "github.com/a-h/templ"} {
			if imp == bad {
				t.Errorf("race imports %s; want no web, Echo or templ", imp)
			}
		}
	}
}

// TestRunawayRenewalRefusedUpFront: a renewing run that would pass the
// event cap is refused before it runs, so that asking for one costs
// next to nothing (it once ran to the cap, about 100 ms, then refused).
func TestRunawayRenewalRefusedUpFront(t *testing.T) {
	var p Params
	for _, in := range List() {
		if in.ID == "renewal" {
			p = in.Defaults
		}
	}
	p.TTL, p.Work = MinTTL, MaxDuration
	var err error
	got := testenv.Allocated(func() { _, err = Run("renewal", p) })
	if !errors.Is(err, ErrBadParams) || !strings.Contains(err.Error(), "work_ms") {
		t.Fatalf("Run(renewal, ttl %v, work %v) error = %v; want ErrBadParams naming work_ms", p.TTL, p.Work, err)
	}
	if got > 1<<20 {
		t.Errorf("refusing the run allocated %d bytes; want it refused before running (under 1 MiB)", got)
	}
}
