package luaredis

import (
	"runtime"
	"strings"
	"testing"
)

// BenchmarkLoadFunctionHeavy loads 16 distinct 60 KB scripts of empty
// functions into one engine, as the attack on the worker did, and reports
// the heap they keep (retained-MB), what compiling them allocated
// (alloc-MB) and the heap's peak as the runtime saw it (sys-MB).
func BenchmarkLoadFunctionHeavy(b *testing.B) {
	srcs := make([]string, 16)
	for i := range srcs {
		body := strings.Repeat("function()end,", 60_000/14)
		srcs[i] = "-- " + string(rune('a'+i)) + "\nreturn {" + strings.TrimSuffix(body, ",") + "}"
	}
	var retained, alloc, sys, refused float64
	for range b.N {
		var ms0, ms1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms0)
		e := NewEngine(Options{MaxScriptBytes: 64 << 20})
		refused = 0
		for _, src := range srcs {
			if _, err := e.Load(src); err != nil {
				refused++
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&ms1)
		retained += float64(int64(ms1.HeapAlloc)-int64(ms0.HeapAlloc)) / (1 << 20)
		alloc += float64(ms1.TotalAlloc-ms0.TotalAlloc) / (1 << 20)
		sys = float64(ms1.HeapSys) / (1 << 20)
		runtime.KeepAlive(e)
	}
	b.ReportMetric(retained/float64(b.N), "retained-MB")
	b.ReportMetric(alloc/float64(b.N), "alloc-MB")
	b.ReportMetric(sys, "heapsys-MB")
	b.ReportMetric(refused, "refused")
}
