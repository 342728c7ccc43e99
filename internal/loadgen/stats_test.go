package loadgen

import (
	"errors"
	"net"
	"slices"
	"testing"
	"time"
)

// millis turns whole milliseconds into durations.
func millis(ms ...int) []time.Duration {
	d := make([]time.Duration, len(ms))
	for i, m := range ms {
		d[i] = time.Duration(m) * time.Millisecond
	}
	return d
}

func TestQuantile(t *testing.T) {
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	thousand := make([]int, 1000)
	for i := range thousand {
		thousand[i] = i + 1
	}
	for _, tt := range []struct {
		name   string
		sorted []time.Duration
		q      float64
		want   time.Duration
	}{
		{"empty", nil, 0.5, 0},
		{"one sample p50", millis(7), 0.5, 7 * time.Millisecond},
		{"one sample p99", millis(7), 0.99, 7 * time.Millisecond},
		{"two samples p50 is the lower", millis(1, 2), 0.5, 1 * time.Millisecond},
		{"four samples p50", millis(1, 2, 3, 4), 0.5, 2 * time.Millisecond},
		{"five samples p50 is the middle", millis(1, 2, 3, 4, 5), 0.5, 3 * time.Millisecond},
		{"1..100 p50", millis(hundred...), 0.5, 50 * time.Millisecond},
		{"1..100 p99", millis(hundred...), 0.99, 99 * time.Millisecond},
		{"1..100 max", millis(hundred...), 1, 100 * time.Millisecond},
		{"1..1000 p99", millis(thousand...), 0.99, 990 * time.Millisecond},
		// With fewer than 100 samples p99 is the maximum.
		{"1..50 p99", millis(hundred[:50]...), 0.99, 50 * time.Millisecond},
		{"tiny q gives the minimum", millis(3, 4, 5), 0.0001, 3 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Quantile(tt.sorted, tt.q); got != tt.want {
				t.Errorf("Quantile(%d samples, %v) = %v; want %v", len(tt.sorted), tt.q, got, tt.want)
			}
		})
	}
}

func TestRecorderSummary(t *testing.T) {
	r := NewRecorder(2)
	for _, ms := range []int{5, 1, 3, 2, 4} {
		r.Add(Outcome{Route: "GET /b", Latency: time.Duration(ms) * time.Millisecond})
	}
	r.Add(Outcome{Route: "GET /a", Latency: 10 * time.Millisecond, Err: errors.New("first"), Class: "status 500"})
	r.Add(Outcome{Route: "GET /a", Latency: 20 * time.Millisecond, Err: errors.New("second"), Timeout: true, Class: "timeout"})
	r.Add(Outcome{Route: "GET /a", Latency: 30 * time.Millisecond, Err: errors.New("third"), Class: "status 500"})
	r.Add(Outcome{Route: "GET /a", Latency: 40 * time.Millisecond, Refused: true})

	s := r.Summary()
	want := []RouteStats{
		{Route: "GET /a", Count: 4, Errors: 3, Timeouts: 1, Refused: 1, P50: 20 * time.Millisecond, P99: 40 * time.Millisecond, Max: 40 * time.Millisecond},
		{Route: "GET /b", Count: 5, P50: 3 * time.Millisecond, P99: 5 * time.Millisecond, Max: 5 * time.Millisecond},
	}
	if len(s.Routes) != len(want) {
		t.Fatalf("Summary().Routes = %+v; want %+v", s.Routes, want)
	}
	for i := range want {
		if s.Routes[i] != want[i] {
			t.Errorf("Summary().Routes[%d] = %+v; want %+v", i, s.Routes[i], want[i])
		}
	}
	wantAll := RouteStats{Route: "all routes", Count: 9, Errors: 3, Timeouts: 1, Refused: 1, P50: 5 * time.Millisecond, P99: 40 * time.Millisecond, Max: 40 * time.Millisecond}
	if s.All != wantAll {
		t.Errorf("Summary().All = %+v; want %+v", s.All, wantAll)
	}
	if got := s.ErrorSamples; len(got) != 2 || got[0] != "first" || got[1] != "second" {
		t.Errorf("Summary().ErrorSamples = %q; want the first two errors", got)
	}
	wantClasses := []ErrorClass{{"status 500", 2}, {"timeout", 1}}
	if !slices.Equal(s.ErrorClasses, wantClasses) {
		t.Errorf("Summary().ErrorClasses = %v; want %v", s.ErrorClasses, wantClasses)
	}
	if n, errs := r.Counts(); n != 9 || errs != 3 {
		t.Errorf("Counts() = %d, %d; want 9, 3", n, errs)
	}
	if w, want := r.TakeWindow(), (Window{Count: 9, Errors: 3, P99: 40 * time.Millisecond, Max: 40 * time.Millisecond}); w != want {
		t.Errorf("TakeWindow() = %+v; want %+v", w, want)
	}
	r.Add(Outcome{Route: "GET /b", Latency: time.Millisecond})
	if w, want := r.TakeWindow(), (Window{Count: 1, P99: time.Millisecond, Max: time.Millisecond}); w != want {
		t.Errorf("second TakeWindow() = %+v; want %+v", w, want)
	}
	if n, _ := r.Counts(); n != 10 {
		t.Errorf("Counts() after TakeWindow = %d; want 10: windows do not drop samples", n)
	}
}

func TestBenchmarkAddr(t *testing.T) {
	seen := map[string]bool{}
	for i := range 1000 {
		a := benchmarkAddr(i)
		ip := net.ParseIP(a)
		_, bench, _ := net.ParseCIDR("198.18.0.0/15")
		if ip == nil || !bench.Contains(ip) || seen[a] {
			t.Fatalf("benchmarkAddr(%d) = %q; want a new address in 198.18.0.0/15", i, a)
		}
		seen[a] = true
	}
}
