package lab

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden counterexamples in testdata")

// goldenEvent is what a counterexample shows a learner of each step.
type goldenEvent struct {
	AtMS  int64  `json:"at_ms"`
	Actor string `json:"actor"`
	Kind  string `json:"kind"`
	Text  string `json:"text"`
	Line  string `json:"line,omitempty"`
	Reply string `json:"reply,omitempty"`
}

// TestGoldenCounterexamples: the shortest counterexample of each
// challenge's broken recipe, as the learner reads it, is the one in
// testdata. A change of a word or of a schedule shows up here; run the
// test with -update to accept it, and say why in the commit.
func TestGoldenCounterexamples(t *testing.T) {
	for _, ch := range Challenges() {
		t.Run(ch.ID, func(t *testing.T) {
			rep := checkT(t, Request{Recipe: ch.Recipe, Challenge: ch.ID})
			pr, _ := rep.Property(ch.Property)
			ce := pr.Counterexample
			if ce == nil {
				t.Fatalf("%s: %s holds; want a counterexample", ch.ID, ch.Property)
			}
			got := struct {
				Seed     uint64        `json:"seed"`
				Faults   []string      `json:"faults"`
				Summary  string        `json:"summary"`
				Outcomes []string      `json:"outcomes"`
				Events   []goldenEvent `json:"events"`
			}{Seed: ce.Seed, Faults: ce.Faults, Summary: ce.Summary}
			for _, o := range ce.Outcomes {
				got.Outcomes = append(got.Outcomes, string(o.Outcome)+": "+o.Text)
			}
			for _, e := range ce.Events {
				got.Events = append(got.Events, goldenEvent{AtMS: e.AtMS, Actor: e.Actor, Kind: string(e.Kind), Text: e.Text, Line: e.Line, Reply: e.Reply})
			}
			b, err := json.MarshalIndent(got, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			b = append(b, '\n')
			path := filepath.Join("testdata", "cx-"+ch.ID+".golden.json")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, b, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./lab -run TestGoldenCounterexamples -update)", err)
			}
			if string(want) != string(b) {
				t.Errorf("counterexample of %s differs from %s:\n%s", ch.ID, path, b)
			}
		})
	}
}
