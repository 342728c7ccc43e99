package luaredis

import (
	"context"
	"testing"
	"time"

	"github.com/locklab/locklab/resp"
)

// BenchmarkEvalLoop runs a script of one million turns of an arithmetic
// loop, which keeps nothing, and reports the time of one Lua instruction
// (ns/instr): what the watchdog, called before every instruction, costs a
// script.
func BenchmarkEvalLoop(b *testing.B) {
	const src = "local x = 0 for i = 1, 1000000 do x = x + i end return 1"
	const instructions = 2_000_000 // FORLOOP and ADD each turn
	e := NewEngine(Options{Limits: Limits{Timeout: time.Minute}})
	argv := []string{"EVAL", src, "0"}
	for b.Loop() {
		if got := e.Do(context.Background(), newMapCaller(), argv); got.Int != 1 {
			b.Fatalf("EVAL = %v; want 1", got)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/instructions, "ns/instr")
}

// BenchmarkEvalShort runs the lessons' lock release, a script of a few
// instructions, as most scripts are: what starting the watchdog costs.
func BenchmarkEvalShort(b *testing.B) {
	e := NewEngine(Options{})
	// A Redis that holds the lock and keeps nothing of the calls.
	c := callerFunc(func(argv []string, readOnly bool) resp.Value {
		if argv[0] == "GET" {
			return resp.Str("tok")
		}
		return resp.Int(1)
	})
	argv := []string{"EVAL", lessonScript(0), "1", "lock", "tok"}
	for b.Loop() {
		if got := e.Do(context.Background(), c, argv); got.IsError() {
			b.Fatalf("EVAL = %v", got)
		}
	}
}

// BenchmarkEvalTableWrites is BenchmarkEvalLoop for a loop that writes a
// table at computed keys, whose every instruction the watchdog looks at
// (see padding.go): MOD, ADD, SETTABLE and FORLOOP a turn.
func BenchmarkEvalTableWrites(b *testing.B) {
	const src = "local t = {} for i = 1, 1000000 do t[i % 100 + 1] = i end return 1"
	const instructions = 4_000_000
	e := NewEngine(Options{Limits: Limits{Timeout: time.Minute}})
	argv := []string{"EVAL", src, "0"}
	for b.Loop() {
		if got := e.Do(context.Background(), newMapCaller(), argv); got.Int != 1 {
			b.Fatalf("EVAL = %v; want 1", got)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/instructions, "ns/instr")
}
