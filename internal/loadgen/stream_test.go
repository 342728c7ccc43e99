package loadgen

import (
	"context"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestReadEvents(t *testing.T) {
	for _, tt := range []struct {
		name   string
		stream string
		want   []sseMessage
	}{
		{name: "named event", stream: "event: state\ndata: {\"a\":1}\n\n", want: []sseMessage{{Event: "state", Data: `{"a":1}`}}},
		{name: "unnamed event", stream: "data: x\n\n", want: []sseMessage{{Event: "message", Data: "x"}}},
		{name: "data lines joined", stream: "event: e\ndata: a\ndata:b\n\n", want: []sseMessage{{Event: "e", Data: "a\nb"}}},
		{name: "CRLF", stream: "event: e\r\ndata: a\r\n\r\n", want: []sseMessage{{Event: "e", Data: "a"}}},
		{name: "comment", stream: ": still here\n\n", want: []sseMessage{{Comment: true, Data: "still here"}}},
		{name: "retry alone", stream: "retry: 1500\n\n", want: []sseMessage{{Retry: 1500 * time.Millisecond}}},
		{name: "bad retry", stream: "retry: soon\n\n", want: nil},
		{name: "no data, no event", stream: "event: e\n\n", want: nil},
		{name: "unfinished event", stream: "event: e\ndata: a\n", want: nil},
		{name: "two events", stream: "event: a\ndata: 1\n\nevent: b\ndata: 2\n\n", want: []sseMessage{{Event: "a", Data: "1"}, {Event: "b", Data: "2"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []sseMessage
			err := readEvents(strings.NewReader(tt.stream), func(m sseMessage) { got = append(got, m) })
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("readEvents(%q) = %+v, %v; want %+v", tt.stream, got, err, tt.want)
			}
		})
	}
}

// TestStreamRunner runs one learner's stream against a server that
// delivers a poll and then ends the stream, refuses the reconnection once,
// accepts and ends the next, and holds the fourth until the run ends: the
// streams must be counted as accepted twice, ended early twice and failed
// once (the fourth, cut short by the end of the run, not at all), and the
// poll as delivered.
func TestStreamRunner(t *testing.T) {
	var calls atomic.Int32
	fourth := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/workshop/events" || r.Header.Get("X-Forwarded-For") != "198.18.0.5" || r.Header.Get("Accept") != "text/event-stream" {
			http.Error(w, "wrong request", http.StatusBadRequest)
			return
		}
		if c, err := r.Cookie("ws"); err != nil || c.Value != "W1" {
			http.Error(w, "not joined", http.StatusForbidden)
			return
		}
		switch calls.Add(1) {
		case 1:
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("retry: 600\n\n: hello\n\nevent: state\ndata: {\"poll\":null}\n\nevent: state\ndata: {\"poll\":{\"id\":\"p1\"}}\n\n"))
		case 2:
			w.Header().Set("Retry-After", "0")
			http.Error(w, "too many streams", http.StatusTooManyRequests)
		case 3:
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("retry: 0\n\n"))
		default:
			close(fourth)
			<-r.Context().Done()
		}
	}))
	defer srv.Close()
	target, err := CheckTarget(srv.URL, false)
	if err != nil {
		t.Fatal(err)
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	jar.SetCookies(target, []*http.Cookie{{Name: "ws", Value: "W1"}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := Config{Targets: []*url.URL{target}, Duration: time.Minute, Timeout: 5 * time.Second}
	r := newStreamRunner(ctx, cfg, (&net.Dialer{}).DialContext)
	defer r.transport.CloseIdleConnections()
	sent := time.Now()
	r.start(&learner{id: 5, forwardedFor: benchmarkAddr(5), client: &http.Client{Jar: jar}})
	<-fourth
	cancel()
	r.wait()
	got := r.result("p1", sent)
	if got.Learners != 1 || got.Open != 1 || got.Opened != 2 || got.Failed != 1 || got.EndedEarly != 2 || got.Delivered != 1 || got.FanOut.Count != 1 {
		t.Errorf("result = %+v; want 1 learner, 2 streams accepted, 1 failed, 2 ended early, the poll delivered", got)
	}
	wantClasses := []ErrorClass{{"stream ended early", 2}, {"stream status 429", 1}}
	if !slices.Equal(got.ErrorClasses, wantClasses) {
		t.Errorf("ErrorClasses = %v; want %v", got.ErrorClasses, wantClasses)
	}
	if other := r.result("p2", sent); other.Delivered != 0 || other.FanOut.Count != 0 {
		t.Errorf("result for another poll = %+v; want nothing delivered", other)
	}
}

func TestStreamResultFanOut(t *testing.T) {
	sent := time.Unix(1000, 0)
	r := &streamRunner{classes: map[string]int{}}
	for i, d := range []time.Duration{300, 100, 200, 0} {
		w := &streamWatch{learner: i, opened: 1}
		if d > 0 {
			w.pollID, w.pollAt = "p", sent.Add(d*time.Millisecond)
		}
		r.watches = append(r.watches, w)
	}
	got := r.result("p", sent)
	if got.Learners != 4 || got.Open != 4 || got.Delivered != 3 || got.FanOut.P50 != 200*time.Millisecond || got.FanOut.P99 != 300*time.Millisecond || got.FanOut.Max != 300*time.Millisecond {
		t.Errorf("result = %+v; want 3 of 4 delivered, p50 200ms, p99 and max 300ms", got)
	}
	if (*streamRunner)(nil).result("p", sent) != nil {
		t.Error("a nil runner's result is not nil")
	}
}

// TestCheckStreams holds a poll-phase result against the targets: a
// stream that ended early or did not deliver the poll fails the verdict.
func TestCheckStreams(t *testing.T) {
	good := func() *Result {
		return &Result{
			Config:      Config{Rate: 1},
			WellBehaved: 2,
			Requests:    Summary{All: RouteStats{Count: 10}, Routes: []RouteStats{{Route: "GET /", Count: 10, P99: time.Millisecond}}},
			Usage:       Usage{Samples: 1, Procs: []ProcUsage{{PID: 1, Peak: 100 << 20}, {PID: 2, Peak: 200 << 20}}, Peak: 250 << 20},
			Poll:        &PollResult{ID: "p", Joined: 2, Total: 2, Answered: 2, Revealed: true},
			Streams:     &StreamResult{Learners: 2, Open: 2, Opened: 2, Delivered: 2},
		}
	}
	targets := Targets{P99: 100 * time.Millisecond, PeakRSS: 1 << 30}
	if v := good().Check(targets); !v.Pass {
		t.Fatalf("Check(good) failed: %q", v.Reasons)
	}
	for _, tt := range []struct {
		name  string
		spoil func(r *Result)
	}{
		{"stream ended early", func(r *Result) { r.Streams.EndedEarly = 1 }},
		{"stream refused", func(r *Result) { r.Streams.Failed = 1 }},
		{"stream never opened", func(r *Result) { r.Streams.Open = 1 }},
		{"poll not delivered", func(r *Result) { r.Streams.Delivered = 1 }},
		{"a joined learner without a stream", func(r *Result) { r.Streams.Learners, r.Streams.Open, r.Streams.Delivered = 1, 1, 1 }},
		{"memory: the sum of the peaks counts", func(r *Result) { r.Usage.Procs[1].Peak = 1<<30 - 50<<20 }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := good()
			tt.spoil(r)
			if v := r.Check(targets); v.Pass {
				t.Errorf("Check passed: %q", v.Reasons)
			}
		})
	}
}
