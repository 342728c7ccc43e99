package loadgen

import (
	"math"
	"slices"
	"sort"
	"sync"
	"time"
)

// Quantile returns the q-quantile (0 < q <= 1) of sorted by the
// nearest-rank method: the smallest sample such that at least q of all
// samples are less than or equal to it. It returns 0 for no samples.
func Quantile(sorted []time.Duration, q float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := int(math.Ceil(q * float64(n)))
	return sorted[min(max(rank, 1), n)-1]
}

// Recorder collects every latency sample and error, by route. It keeps all
// samples, so quantiles are exact: 300 learners for 5 minutes are about
// 90,000 samples, under a megabyte.
type Recorder struct {
	mu         sync.Mutex
	routes     map[string]*routeSamples
	classes    map[string]int  // errors by class
	window     []time.Duration // latencies since the last TakeWindow
	windowErrs int
	maxSamples int
}

type routeSamples struct {
	latencies []time.Duration
	errors    int
	timeouts  int
	refused   int
	samples   []string // the route's first error messages
}

// NewRecorder returns an empty Recorder that keeps the first
// maxErrorSamples error messages of each route.
func NewRecorder(maxErrorSamples int) *Recorder {
	return &Recorder{routes: make(map[string]*routeSamples), classes: make(map[string]int), maxSamples: maxErrorSamples}
}

// Outcome is what became of one request.
type Outcome struct {
	Route   string
	Latency time.Duration
	Err     error  // nil for a request that went as expected
	Class   string // what kind of error Err is, such as "status 429"
	Timeout bool   // the request ran into the client timeout
	Refused bool   // the sandbox answered with an (error) reply
}

// Add records one request.
func (r *Recorder) Add(o Outcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rs := r.routes[o.Route]
	if rs == nil {
		rs = &routeSamples{}
		r.routes[o.Route] = rs
	}
	rs.latencies = append(rs.latencies, o.Latency)
	r.window = append(r.window, o.Latency)
	if o.Refused {
		rs.refused++
	}
	if o.Err == nil {
		return
	}
	rs.errors++
	r.windowErrs++
	r.classes[o.Class]++
	if o.Timeout {
		rs.timeouts++
	}
	if len(rs.samples) < r.maxSamples {
		rs.samples = append(rs.samples, o.Err.Error())
	}
}

// Window sums up the requests recorded since the last call of
// TakeWindow.
type Window struct {
	Count, Errors int
	P99, Max      time.Duration
}

// TakeWindow returns the statistics of the requests recorded since its
// last call, and starts a new window.
func (r *Recorder) TakeWindow() Window {
	r.mu.Lock()
	lat, errs := r.window, r.windowErrs
	r.window, r.windowErrs = nil, 0
	r.mu.Unlock()
	rs := stats("", lat, errs, 0, 0)
	return Window{Count: rs.Count, Errors: errs, P99: rs.P99, Max: rs.Max}
}

// RouteStats sums up the requests of one route.
type RouteStats struct {
	Route    string
	Count    int
	Errors   int
	Timeouts int
	Refused  int // (error) replies from the sandbox, expected for hostile scripts
	P50, P99 time.Duration
	Max      time.Duration
}

// Summary is a Recorder's content: one row per route, sorted by route, a
// row for all routes together, the number of errors of each class and the
// first error messages of each route.
type Summary struct {
	Routes       []RouteStats
	All          RouteStats
	ErrorClasses []ErrorClass // most frequent first
	ErrorSamples []string     // by route
}

// ErrorClass counts the errors of one class.
type ErrorClass struct {
	Class string
	Count int
}

// Summary computes the statistics of everything recorded so far.
func (r *Recorder) Summary() Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	var s Summary
	var all []time.Duration
	for route, rs := range r.routes {
		lat := slices.Clone(rs.latencies)
		all = append(all, lat...)
		s.Routes = append(s.Routes, stats(route, lat, rs.errors, rs.timeouts, rs.refused))
		s.All.Errors += rs.errors
		s.All.Timeouts += rs.timeouts
		s.All.Refused += rs.refused
	}
	sort.Slice(s.Routes, func(i, j int) bool { return s.Routes[i].Route < s.Routes[j].Route })
	s.All = stats("all routes", all, s.All.Errors, s.All.Timeouts, s.All.Refused)
	for _, rs := range s.Routes {
		s.ErrorSamples = append(s.ErrorSamples, r.routes[rs.Route].samples...)
	}
	for class, n := range r.classes {
		s.ErrorClasses = append(s.ErrorClasses, ErrorClass{class, n})
	}
	sort.Slice(s.ErrorClasses, func(i, j int) bool {
		a, b := s.ErrorClasses[i], s.ErrorClasses[j]
		return a.Count > b.Count || a.Count == b.Count && a.Class < b.Class
	})
	return s
}

// Counts returns the number of requests and errors recorded so far.
func (r *Recorder) Counts() (requests, errors int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range r.routes {
		requests += len(rs.latencies)
		errors += rs.errors
	}
	return requests, errors
}

// stats sorts lat in place and sums it up.
func stats(route string, lat []time.Duration, errors, timeouts, refused int) RouteStats {
	slices.Sort(lat)
	rs := RouteStats{Route: route, Count: len(lat), Errors: errors, Timeouts: timeouts, Refused: refused}
	if len(lat) > 0 {
		rs.P50, rs.P99, rs.Max = Quantile(lat, 0.50), Quantile(lat, 0.99), lat[len(lat)-1]
	}
	return rs
}
