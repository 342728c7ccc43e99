package race

import "testing"

// BenchmarkScenarios computes every scenario with its defaults. The target
// is at most 5 ms per run.
func BenchmarkScenarios(b *testing.B) {
	for _, in := range List() {
		b.Run(in.ID, func(b *testing.B) {
			for b.Loop() {
				if _, err := Run(in.ID, in.Defaults); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
