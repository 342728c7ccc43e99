package race

import (
	"testing"
	"time"
)

// BenchmarkScenarios computes every golden run: each scenario with its
// defaults, the main variants and the runs with faults. The target is at
// most 5 ms per run.
func BenchmarkScenarios(b *testing.B) {
	for _, g := range goldenRuns(b) {
		b.Run(g.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Run(g.id, g.p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMostFaults is the largest input a URL may carry: MaxFaults
// faults, here pauses and delays spread over the run.
func BenchmarkMostFaults(b *testing.B) {
	p := defaults()
	p.Pause = 15 * time.Second
	for i := range MaxFaults {
		f := Fault{Kind: FaultPause, Target: "client2", At: time.Duration(i) * 700 * time.Millisecond, Length: 400 * time.Millisecond}
		if i%2 == 1 {
			f = Fault{Kind: FaultDelay, Target: "client1", At: f.At, Length: 300 * time.Millisecond}
		}
		p.Faults = append(p.Faults, f)
	}
	for b.Loop() {
		if _, err := Run("gc-pause", p); err != nil {
			b.Fatal(err)
		}
	}
}
