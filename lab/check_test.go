package lab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/testenv"
)

func TestDeterministic(t *testing.T) {
	for _, r := range []Recipe{Textbook(), Challenges()[0].Recipe} {
		a := checkT(t, Request{Recipe: r, Seed: 7})
		b := checkT(t, Request{Recipe: r, Seed: 7})
		a.CPUMS, b.CPUMS = 0, 0
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Errorf("two checks of %v with seed 7 differ:\n%s\n%s", r.Acquire, ja, jb)
		}
		c := checkT(t, Request{Recipe: r, Seed: 8})
		if reflect.DeepEqual(a.Properties, c.Properties) {
			t.Errorf("seeds 7 and 8 gave the same report; the seed chooses nothing")
		}
	}
}

func TestReplayPlaysTheCounterexample(t *testing.T) {
	rep := checkT(t, Request{Recipe: Textbook(), Seed: 3})
	pr, _ := rep.Property(PropNoStaleWrite)
	if pr.Counterexample == nil {
		t.Fatal("no counterexample")
	}
	got, err := Replay(context.Background(), Textbook(), nil, pr.Counterexample.Seed)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Events, pr.Counterexample.Events) {
		t.Errorf("Replay(seed %d) events differ from the report's counterexample", pr.Counterexample.Seed)
	}
	if got.Violation < 0 || got.Events[got.Violation].Kind != "write-accepted" {
		t.Errorf("Replay violation = %d; want the stale write", got.Violation)
	}
	for _, seed := range []uint64{0, 999, 1 << 62, 1<<20 + spacing - 1} {
		if _, err := Replay(context.Background(), Textbook(), nil, seed); !errors.Is(err, ErrBadSeed) {
			t.Errorf("Replay(seed %d) = %v; want ErrBadSeed", seed, err)
		}
	}
}

// TestCounterexampleShape checks the JSON the race animation and the API
// read: a race run's fields, and sim.Event's.
func TestCounterexampleShape(t *testing.T) {
	rep := checkT(t, Request{Recipe: Textbook(), Challenge: "no-fencing"})
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Schedules  int   `json:"schedules"`
		Passed     *bool `json:"passed"`
		Properties []struct {
			ID             string          `json:"id"`
			Holds          bool            `json:"holds"`
			Explored       int             `json:"explored"`
			Counterexample json.RawMessage `json:"counterexample"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Schedules < 300 || got.Passed == nil || *got.Passed || len(got.Properties) != 4 {
		t.Fatalf("report = %s", b)
	}
	for _, p := range got.Properties {
		if p.Counterexample == nil {
			t.Fatalf("property %s: no counterexample key", p.ID)
		}
		if p.Holds != (string(p.Counterexample) == "null") {
			t.Errorf("property %s: holds %v with counterexample %.40s", p.ID, p.Holds, p.Counterexample)
		}
		if p.Holds {
			continue
		}
		var ce map[string]any
		if err := json.Unmarshal(p.Counterexample, &ce); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"seed", "events", "outcomes", "lanes", "nodes", "faults", "summary", "verdict", "params"} {
			if _, ok := ce[k]; !ok {
				t.Errorf("counterexample lacks %q", k)
			}
		}
		if o := ce["outcomes"].([]any)[0].(map[string]any); o["t_ms"] == nil || o["event"] == nil || o["outcome"] == nil {
			t.Errorf("outcome lacks t_ms, event or outcome: %v", o)
		}
		if ps := ce["params"].(map[string]any); ps["ttl_ms"] != float64(2000) {
			t.Errorf("params = %v; want ttl_ms 2000", ps)
		}
		ev := ce["events"].([]any)[0].(map[string]any)
		for _, k := range []string{"t_ms", "at_ms", "actor", "kind", "text", "nodes", "line", "reply"} {
			if _, ok := ev[k]; !ok {
				t.Errorf("event lacks %q: %v", k, ev)
			}
		}
	}
}

func TestWorks(t *testing.T) {
	r := Recipe{Acquire: []string{"GET {key}"}, Release: []string{"DEL {key}"}}
	rep, err := Check(context.Background(), Request{Recipe: r, Challenge: "plain-del"}, Budget{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Works || !strings.Contains(rep.WorksText, "answered (nil)") {
		t.Errorf("Works = %v, %q; want false, naming the reply", rep.Works, rep.WorksText)
	}
	if rep.Passed == nil || *rep.Passed {
		t.Errorf("a recipe that never takes the lock passed its challenge")
	}
}

func TestOneHolderBreaks(t *testing.T) {
	r := Recipe{Acquire: []string{"SET {key} {token} PX {ttl}"}, Release: []string{lineCompareDelete}}
	rep := checkT(t, Request{Recipe: r})
	wantHolds(t, rep, map[Property]bool{PropOneHolder: false})
	pr, _ := rep.Property(PropOneHolder)
	if ce := pr.Counterexample; len(ce.Faults) != 0 {
		t.Errorf("SET without NX: counterexample has faults %v; want none", ce.Faults)
	}
}

func TestUnknownChallenge(t *testing.T) {
	if _, err := Check(context.Background(), Request{Recipe: Textbook(), Challenge: "nope"}, Budget{}); !errors.Is(err, ErrUnknownChallenge) {
		t.Errorf("Check = %v; want ErrUnknownChallenge", err)
	}
	if _, err := Check(context.Background(), Request{Recipe: Recipe{Acquire: []string{"SET {nope} 1"}, Release: []string{"DEL {key}"}}}, Budget{}); !errors.Is(err, ErrBadRecipe) {
		t.Errorf("Check = %v; want ErrBadRecipe", err)
	}
}

func TestBombsAreRefusedInTime(t *testing.T) {
	for _, tt := range []struct {
		name   string
		r      Recipe
		budget Budget
		want   string
	}{
		{"endless script", Recipe{Acquire: []string{`EVAL "while true do end" 0`}, Release: []string{"DEL {key}"}}, Budget{}, "acquire line 1 went past the playground's limits for one line (the playground stopped the script after 500ms"},
		{"slow script in release", Recipe{Acquire: []string{lineSetNXPX}, Release: []string{`EVAL "local x = 0 while true do x = x + 1 end" 0`}}, Budget{}, "release line 1 went past"},
		{"lines", Textbook(), Budget{Steps: 500}, "more than 500 lines"},
		{"time", Recipe{Acquire: []string{`EVAL "for i = 1, 20000 do end return 0" 0`}, Release: []string{"DEL {key}"}}, Budget{CPU: 100 * time.Millisecond}, "used up its 100ms"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			_, err := Check(context.Background(), Request{Recipe: tt.r}, tt.budget)
			if !errors.Is(err, ErrBudget) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Check = %v; want ErrBudget saying %q", err, tt.want)
			}
			// Without the budget these run for minutes.
			if d := time.Since(start); d > testenv.HangGuard {
				t.Errorf("refused after %v; want the budget to stop it", d)
			}
		})
	}
}

func TestCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Check(ctx, Request{Recipe: Textbook()}, Budget{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Check = %v; want context.Canceled", err)
	}
}

// BenchmarkCheck is a full check of three recipes: every schedule of up
// to two faults, and 64 random ones.
func BenchmarkCheck(b *testing.B) {
	for _, bc := range []struct {
		name string
		r    Recipe
	}{{"textbook", Textbook()}, {"fenced", Fenced()}, {"no-ttl", Challenges()[3].Recipe}} {
		b.Run(bc.name, func(b *testing.B) {
			steps, cpu, schedules := 0, int64(0), 0
			start := processCPU()
			for b.Loop() {
				rep, err := Check(context.Background(), Request{Recipe: bc.r}, Budget{})
				if err != nil {
					b.Fatal(err)
				}
				steps, cpu, schedules = rep.Steps, cpu+rep.CPUMS, rep.Schedules
			}
			b.ReportMetric(float64(schedules), "schedules/check")
			b.ReportMetric(float64(steps), "lines/check")
			// The check thread's own CPU time, as the budget counts it,
			// and the whole process's, garbage collection included.
			b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ms/check")
			b.ReportMetric(float64((processCPU()-start).Milliseconds())/float64(b.N), "process-cpu-ms/check")
		})
	}
}

// largest is the largest recipe Validate accepts: MaxTotalLines lines,
// each a script of about MaxLineBytes.
func largest(t testing.TB) Recipe {
	pad := func(script string) string {
		line := `EVAL "` + script + ` --" 1 {key} {token} {ttl}`
		return strings.Replace(line, " --", " --"+strings.Repeat("x", MaxLineBytes-len(line)-40), 1)
	}
	r := Recipe{Fencing: true}
	r.Acquire = append(r.Acquire, pad(`if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 else return 0 end`))
	for range 2 {
		r.Acquire = append(r.Acquire, pad(`return redis.call('INCR', KEYS[1] .. ':fence')`))
	}
	for range 2 {
		r.Extend = append(r.Extend, pad(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`))
	}
	for range 3 {
		r.Release = append(r.Release, pad(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 1 end`))
	}
	if n := len(r.Acquire) + len(r.Extend) + len(r.Release); n != MaxTotalLines {
		t.Fatalf("largest recipe has %d lines; want %d", n, MaxTotalLines)
	}
	if err := r.Validate(); err != nil {
		t.Fatalf("largest recipe: %v", err)
	}
	return r
}

// TestLargestRecipe checks that the largest recipe fits in the default
// budget, with room to spare.
func TestLargestRecipe(t *testing.T) {
	b := DefaultBudget()
	rep, err := Check(context.Background(), Request{Recipe: largest(t)}, b)
	if err != nil {
		t.Fatalf("Check(the largest recipe) = %v", err)
	}
	if !rep.Works {
		t.Errorf("largest recipe does not work: %s", rep.WorksText)
	}
	if rep.Steps > DefaultBudget().Steps/4 {
		t.Errorf("largest recipe ran %d lines; the budget allows %d", rep.Steps, DefaultBudget().Steps)
	}
	t.Logf("largest recipe: %d schedules, %d lines, %d ms CPU", rep.Schedules, rep.Steps, rep.CPUMS)
}

func BenchmarkCheckLargest(b *testing.B) {
	r := largest(b)
	cpu, schedules := int64(0), 0
	start := processCPU()
	for b.Loop() {
		rep, err := Check(context.Background(), Request{Recipe: r}, Budget{})
		if err != nil {
			b.Fatal(err)
		}
		cpu, schedules = cpu+rep.CPUMS, rep.Schedules
	}
	b.ReportMetric(float64(schedules), "schedules/check")
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ms/check")
	b.ReportMetric(float64((processCPU()-start).Milliseconds())/float64(b.N), "process-cpu-ms/check")
}

// TestEveryFaultIsExplored replays the schedules of a check and looks for
// each kind of fault in their events: pauses longer and shorter than the
// TTL, late replies, client crashes, clock jumps and restarts, with two
// clients and with three.
func TestEveryFaultIsExplored(t *testing.T) {
	r := Recipe{Acquire: []string{lineSetNXPX}, Release: []string{lineCompareDelete}, Extend: []string{lineCompareExtend}}
	kinds := map[string]int{}
	clients := map[int]int{}
	m := DefaultModel()
	m.ClockJumps = JumpsBoth
	sp := newSpace(r, m)
	for n := range sp.pairBase() {
		ce, err := Replay(context.Background(), r, &m, scheduleSeed(1, n))
		if err != nil {
			t.Fatal(err)
		}
		clients[len(ce.Lanes)-2]++
		for _, e := range ce.Events {
			k := string(e.Kind)
			if e.Kind == "pause-start" {
				k += map[bool]string{true: " longer than the TTL", false: " shorter than the TTL"}[pauseOver(e.Text)]
			}
			if e.Kind == "clock-jump" {
				k += map[bool]string{true: " back", false: " ahead"}[strings.Contains(e.Text, "back")]
			}
			kinds[k]++
		}
	}
	t.Logf("event kinds: %v; clients: %v", kinds, clients)
	for _, k := range []string{"pause-start longer than the TTL", "pause-start shorter than the TTL", "delay", "client-crash", "clock-jump ahead", "clock-jump back", "crash", "restart", "expire", "extend-ok", "write-accepted", "release-ok"} {
		if kinds[k] == 0 {
			t.Errorf("no schedule has a %s event; kinds: %v", k, kinds)
		}
	}
	if clients[2] == 0 || clients[3] == 0 {
		t.Errorf("schedules by clients: %v; want both two and three", clients)
	}
}

// pauseOver reads a pause-start's length ("freezes for 500 ms", "for
// 2.5 s") and reports whether it is longer than the TTL.
func pauseOver(text string) bool {
	_, after, _ := strings.Cut(text, "freezes for ")
	var n float64
	var unit string
	fmt.Sscanf(after, "%g %s", &n, &unit)
	d := time.Duration(n * float64(time.Millisecond))
	if strings.HasPrefix(unit, "s") {
		d = time.Duration(n * float64(time.Second))
	}
	return d > ttl
}
