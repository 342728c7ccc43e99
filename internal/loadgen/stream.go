package loadgen

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The learners' event streams: with the poll phase, every well-behaved
// learner who joined the workshop keeps GET /api/workshop/events open
// from then on, as the workshop page does, on a replica of its own
// (learner j's on target j%n). A stream is one long request, so it is
// kept out of the latency table; what counts is that it stays open and
// how soon after the instructor opens the poll it delivers it: the poll's
// fan-out to the room.

// The stream's reconnection delays: the server's SSE retry field, or
// streamRetry, held between streamRetryMin and streamRetryMax.
const (
	streamRetry    = time.Second
	streamRetryMin = 500 * time.Millisecond
	streamRetryMax = 10 * time.Second
)

// streamIdle is how long a stream may stay silent before it counts as
// stalled: the server writes a comment every 15 checks (15 s at its
// default of a check a second) even when nothing changed.
const streamIdle = 45 * time.Second

// maxEventLine bounds one line of an event stream.
const maxEventLine = 1 << 20

// StreamResult is what the learners' event streams found.
type StreamResult struct {
	Learners   int // joined learners, each of whom opened a stream
	Open       int // learners whose stream the server accepted at least once
	Opened     int // streams the server accepted, reconnections included
	Failed     int // attempts refused or broken before the stream started
	EndedEarly int // accepted streams that ended or stalled before the run did
	// Delivered counts the learners whose stream delivered the poll, and
	// FanOut sums up how long after the instructor sent the request that
	// opened it (its Count, P50, P99 and Max).
	Delivered    int
	FanOut       RouteStats
	ErrorClasses []ErrorClass // the failures and early ends, by kind
	ErrorSamples []string     // the first few of them
}

// streamRunner opens and watches the learners' streams. Its transport
// is the streams' own: a stream holds its connection for the whole run,
// so it never returns to an idle pool, and sharing the requests'
// transport would only make its pool bookkeeping larger.
type streamRunner struct {
	ctx         context.Context // ends the streams: the end of the run
	transport   *http.Transport
	bases       []*url.URL
	maxAttempts int
	wg          sync.WaitGroup
	open        atomic.Int64 // streams open now, for the progress line

	mu      sync.Mutex
	watches []*streamWatch
	classes map[string]int
	samples []string
}

// streamWatch is one learner's stream over the run.
type streamWatch struct {
	learner    int
	opened     int
	failed     int
	endedEarly int
	pollID     string    // the first poll the stream delivered
	pollAt     time.Time // when it delivered it
}

func newStreamRunner(ctx context.Context, cfg Config, dial func(ctx context.Context, network, addr string) (net.Conn, error)) *streamRunner {
	return &streamRunner{
		ctx: ctx,
		transport: &http.Transport{
			Proxy:                 nil, // never a proxy, as for the requests
			DialContext:           dial,
			DisableKeepAlives:     true,
			ResponseHeaderTimeout: cfg.Timeout,
		},
		bases: cfg.Targets,
		// Attempts are at least streamRetryMin apart, so the run's
		// length bounds them.
		maxAttempts: int((cfg.Duration+cfg.Timeout)/streamRetryMin) + 2,
		classes:     make(map[string]int),
	}
}

// start opens l's stream and watches it until the run ends. It is
// called once per learner, when its join is answered.
func (r *streamRunner) start(l *learner) {
	w := &streamWatch{learner: l.id}
	r.mu.Lock()
	r.watches = append(r.watches, w)
	r.mu.Unlock()
	client := &http.Client{Transport: r.transport, Jar: l.client.Jar, CheckRedirect: noRedirects}
	base := r.bases[l.id%len(r.bases)]
	r.wg.Go(func() { r.watch(client, base, l.forwardedFor, w) })
}

// wait waits for every stream to end, once the run's context has ended.
func (r *streamRunner) wait() { r.wg.Wait() }

// watch keeps one stream open, reconnecting after the delay the server
// asked for when it ends early, until the run ends.
func (r *streamRunner) watch(client *http.Client, base *url.URL, forwardedFor string, w *streamWatch) {
	for range r.maxAttempts {
		retry, opened, err := r.once(client, base, forwardedFor, w)
		if r.ctx.Err() != nil {
			return
		}
		r.fail(w, opened, err)
		if !sleepUntil(r.ctx, time.Now().Add(retry)) {
			return
		}
	}
}

// fail records a stream that could not be opened, or ended early.
func (r *streamRunner) fail(w *streamWatch, opened bool, err error) {
	class := "stream transport error"
	var se *streamError
	if errors.As(err, &se) {
		class = se.class
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if opened {
		w.endedEarly++
	} else {
		w.failed++
	}
	r.classes[class]++
	if len(r.samples) < 5 {
		r.samples = append(r.samples, fmt.Sprintf("learner %d: %v", w.learner, err))
	}
}

// streamError is a stream's failure and its kind, for the report.
type streamError struct {
	class string
	err   error
}

func (e *streamError) Error() string { return e.class + ": " + e.err.Error() }
func (e *streamError) Unwrap() error { return e.err }

// once opens the stream and reads it until it ends. It returns how long
// to wait before reconnecting, whether the server accepted the stream,
// and why it ended; when the run ends, the error does not matter.
func (r *streamRunner) once(client *http.Client, base *url.URL, forwardedFor string, w *streamWatch) (time.Duration, bool, error) {
	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base.String()+"/api/workshop/events", nil)
	if err != nil {
		return streamRetry, false, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if forwardedFor != "" {
		req.Header.Set("X-Forwarded-For", forwardedFor)
	}
	resp, err := client.Do(req)
	if err != nil {
		return streamRetry, false, &streamError{"stream not opened", err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		retry := streamRetry
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
			retry = time.Duration(s) * time.Second
		}
		return clampRetry(retry), false, &streamError{fmt.Sprintf("stream status %d", resp.StatusCode),
			fmt.Errorf("%s %s: %s", resp.Status, resp.Header.Get("Content-Type"), clip(b))}
	}
	r.mu.Lock()
	w.opened++
	r.mu.Unlock()
	r.open.Add(1)
	defer r.open.Add(-1)

	var stalled atomic.Bool
	idle := time.AfterFunc(streamIdle, func() { stalled.Store(true); cancel() })
	defer idle.Stop()
	retry := streamRetry
	err = readEvents(resp.Body, func(m sseMessage) {
		idle.Reset(streamIdle)
		if m.Retry > 0 {
			retry = m.Retry
		}
		if m.Event != "state" {
			return
		}
		var st struct {
			Poll *struct {
				ID string `json:"id"`
			} `json:"poll"`
		}
		if json.Unmarshal([]byte(m.Data), &st) != nil || st.Poll == nil || st.Poll.ID == "" {
			return
		}
		now := time.Now()
		r.mu.Lock()
		if w.pollID == "" {
			w.pollID, w.pollAt = st.Poll.ID, now
		}
		r.mu.Unlock()
	})
	switch {
	case stalled.Load():
		return clampRetry(retry), true, &streamError{"stream stalled", fmt.Errorf("nothing for %v", streamIdle)}
	case err != nil:
		return clampRetry(retry), true, &streamError{"stream broken", err}
	}
	return clampRetry(retry), true, &streamError{"stream ended early", errors.New("the server closed it")}
}

func clampRetry(d time.Duration) time.Duration {
	return min(max(d, streamRetryMin), streamRetryMax)
}

// result sums up the streams once they have ended: pollID is the poll
// the instructor opened ("" for none), sent when the request opening it
// was sent.
func (r *streamRunner) result(pollID string, sent time.Time) *StreamResult {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	res := &StreamResult{Learners: len(r.watches), ErrorSamples: r.samples}
	var fanOut []time.Duration
	for _, w := range r.watches {
		res.Opened += w.opened
		res.Failed += w.failed
		res.EndedEarly += w.endedEarly
		if w.opened > 0 {
			res.Open++
		}
		if pollID != "" && w.pollID == pollID {
			res.Delivered++
			fanOut = append(fanOut, max(w.pollAt.Sub(sent), 0))
		}
	}
	res.FanOut = stats("poll fan-out", fanOut, 0, 0, 0)
	for class, n := range r.classes {
		res.ErrorClasses = append(res.ErrorClasses, ErrorClass{class, n})
	}
	sort.Slice(res.ErrorClasses, func(i, j int) bool {
		a, b := res.ErrorClasses[i], res.ErrorClasses[j]
		return a.Count > b.Count || a.Count == b.Count && a.Class < b.Class
	})
	return res
}

// sseMessage is what readEvents hands on: an event (Event "message"
// when the stream names none), a comment (Comment set), or a retry field
// alone (Retry set, no Event).
type sseMessage struct {
	Event   string
	Data    string
	Retry   time.Duration
	Comment bool
}

// readEvents reads a text/event-stream until it ends and calls fn for
// each event, comment and retry field, as the EventSource of a browser
// sees them: an event ends at a blank line, its data lines are joined
// with newlines, and a block without data dispatches no event. The end
// of the stream is a nil error.
func readEvents(r io.Reader, fn func(sseMessage)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxEventLine)
	var event string
	var data []string
	hasData := false
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" {
			if hasData {
				if event == "" {
					event = "message"
				}
				fn(sseMessage{Event: event, Data: strings.Join(data, "\n")})
			}
			event, data, hasData = "", nil, false
			continue
		}
		if strings.HasPrefix(line, ":") {
			fn(sseMessage{Comment: true, Data: strings.TrimPrefix(strings.TrimPrefix(line, ":"), " ")})
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			event = value
		case "data":
			data, hasData = append(data, value), true
		case "retry":
			if ms, err := strconv.Atoi(value); err == nil && ms >= 0 {
				fn(sseMessage{Retry: time.Duration(ms) * time.Millisecond})
			}
		}
	}
	return sc.Err()
}
