package web

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/locklab/locklab/limit"
	"github.com/locklab/locklab/store"
)

// TestMetricsProtection checks the metrics token on the site's listener,
// and that SeparateMetrics takes /metrics off it.
func TestMetricsProtection(t *testing.T) {
	const token = "metrics-token-0123456789abc"
	get := func(h http.Handler, auth string) (int, string) {
		r := httptest.NewRequest("GET", "/metrics", nil)
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}
	for _, tt := range []struct {
		name     string
		token    string
		separate bool
		auth     string
		site     int // status on the site's handler
		own      int // status on MetricsHandler
	}{
		{"open", "", false, "", 200, 200},
		{"token, none sent", token, false, "", 401, 401},
		{"token, wrong one", token, false, "Bearer nope", 401, 401},
		{"token, not Bearer", token, false, token, 401, 401},
		{"token, right one", token, false, "Bearer " + token, 200, 200},
		{"separate", "", true, "", 404, 200},
		{"separate with token", token, true, "Bearer " + token, 404, 200},
		{"separate, wrong token", token, true, "Bearer nope", 404, 401},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(t)
			cfg.MetricsToken, cfg.SeparateMetrics = tt.token, tt.separate
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			code, body := get(s, tt.auth)
			if code != tt.site || (code == 200 && !strings.Contains(body, "go_goroutines")) {
				t.Errorf("site GET /metrics = %d; want %d with the metrics", code, tt.site)
			}
			code, body = get(s.MetricsHandler(), tt.auth)
			if code != tt.own || (code == 200 && !strings.Contains(body, "go_goroutines")) {
				t.Errorf("MetricsHandler GET /metrics = %d; want %d with the metrics", code, tt.own)
			}
		})
	}
}

// metricLine returns the line of /metrics that starts with series (a
// name with its labels, as the exposition format writes them), and the
// whole page for messages.
func metricLine(t *testing.T, s *Server, series string) (string, string) {
	t.Helper()
	w := httptest.NewRecorder()
	s.MetricsHandler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	for _, line := range strings.Split(w.Body.String(), "\n") {
		if strings.HasPrefix(line, series+" ") {
			return line, w.Body.String()
		}
	}
	return "", w.Body.String()
}

// wantMetric fails unless /metrics has series with value.
func wantMetric(t *testing.T, s *Server, series, value string) {
	t.Helper()
	if got, _ := metricLine(t, s, series); got != series+" "+value {
		t.Errorf("/metrics: %q; want %q", got, series+" "+value)
	}
}

// awaitMetric waits until /metrics has series with value: a stream's
// handler ends within a tick of its client going, and is counted then.
func awaitMetric(t *testing.T, s *Server, series, value string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, _ := metricLine(t, s, series)
		if got == series+" "+value {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics: %q; want %q", got, series+" "+value)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestBuildInfoMetric(t *testing.T) {
	cfg := testConfig(t)
	cfg.Version = "v1.2.3-test"
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	wantMetric(t, s, `locklab_build_info{go_version="`+runtime.Version()+`",version="v1.2.3-test"}`, "1")
}

// TestEventStreamMetrics: an open stream counts in
// locklab_event_streams_open; once it ends, its time is in
// locklab_event_stream_duration_seconds and not in the requests'
// latencies, while the request itself is counted as any other.
func TestEventStreamMetrics(t *testing.T) {
	s, base, code := streamsServer(t, limit.StreamCaps{})
	l := joined(t, base, code, "ada")
	wantMetric(t, s, "locklab_event_streams_open", "0")
	status, _, msg, closeStream := openEvents(t, l, "192.0.2.1")
	if status != 200 {
		t.Fatalf("events = %d %s; want 200", status, msg)
	}
	wantMetric(t, s, "locklab_event_streams_open", "1")
	closeStream()
	awaitMetric(t, s, "locklab_event_stream_duration_seconds_count", "1")
	wantMetric(t, s, "locklab_event_streams_open", "0")
	wantMetric(t, s, `locklab_http_requests_total{method="GET",route="/api/workshop/events",status="200"}`, "1")
	wantMetric(t, s, `locklab_http_request_duration_seconds_count{method="GET",route="/api/workshop/events"}`, "0")
	// Other requests still have their latencies.
	wantMetric(t, s, `locklab_http_request_duration_seconds_count{method="POST",route="/join"}`, "1")
}

// TestRedisMetrics: with the Redis store's round trips observed, a read
// of progress counts as a round trip, and with Redis gone as an error.
func TestRedisMetrics(t *testing.T) {
	m := miniredis.RunT(t)
	rm := NewRedisMetrics()
	st, err := store.OpenRedis("redis://"+m.Addr(), store.ObserveRedis(rm.Observe))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg := testConfig(t)
	cfg.Progress, cfg.RedisMetrics = st, rm
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l := newLearner(t, newServerFor(t, s))
	wantMetric(t, s, "locklab_redis_latency_seconds_count", "0")
	// An answer: a write of the answer (a script: EVALSHA, and the first
	// time, when Redis answers NOSCRIPT, EVAL) and a read of the topic
	// after it (a pipeline), each one round trip.
	if code, _, body := l.answer("gc-pause", "fencing"); code != 200 {
		t.Fatalf("answer = %d %s", code, body)
	}
	wantMetric(t, s, "locklab_redis_latency_seconds_count", "3")
	if code, _, body := l.answer("gc-pause", "fencing"); code != 200 {
		t.Fatalf("answer = %d %s", code, body)
	}
	wantMetric(t, s, "locklab_redis_latency_seconds_count", "5")
	for _, op := range []string{"evalsha", "eval", "pipeline"} {
		if line, _ := metricLine(t, s, `locklab_redis_errors_total{op="`+op+`"}`); line != "" {
			t.Errorf("/metrics: %q; want no errors while Redis is up (NOSCRIPT is none)", line)
		}
	}
	m.Close()
	if code, _, body := l.answer("gc-pause", "fencing"); code != 503 {
		t.Fatalf("answer with Redis gone = %d %s; want 503", code, body)
	}
	wantMetric(t, s, `locklab_redis_errors_total{op="evalsha"}`, "1")
	wantMetric(t, s, `locklab_store_errors_total{store="progress"}`, "1")
	wantMetric(t, s, "locklab_redis_latency_seconds_count", "6") // the write, which failed
}

// TestNoRedisMetricsWithoutRedis: a server whose store is not Redis
// serves no Redis metrics.
func TestNoRedisMetricsWithoutRedis(t *testing.T) {
	s, err := New(testConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, page := metricLine(t, s, ""); strings.Contains(page, "locklab_redis_") {
		t.Error("/metrics has Redis metrics with no Redis store")
	}
}

// TestMetricsGzippedOnce: a scraper that accepts gzip gets the metrics
// compressed once on either listener, not gzip inside gzip.
func TestMetricsGzippedOnce(t *testing.T) {
	s, err := New(testConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	for name, h := range map[string]http.Handler{"site": s, "MetricsHandler": s.MetricsHandler()} {
		r := httptest.NewRequest("GET", "/metrics", nil)
		r.Header.Set("Accept-Encoding", "gzip")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		zr, err := gzip.NewReader(w.Body)
		if err != nil {
			t.Fatalf("%s: GET /metrics with gzip = %d, %q: %v", name, w.Code, w.Header().Get("Content-Encoding"), err)
		}
		body, err := io.ReadAll(zr)
		if err != nil || !strings.Contains(string(body), "go_goroutines") {
			t.Errorf("%s: GET /metrics, gunzipped once: %v, %.40q; want the metrics", name, err, body)
		}
	}
}

// TestWorkshopMetrics: a workshop's start, joins, poll, predictions,
// reveal and end are counted, each once, and every series is there at 0
// before the first.
func TestWorkshopMetrics(t *testing.T) {
	s := newAdminServer(t)
	base := newServerFor(t, s)
	for _, e := range []string{"started", "ended", "joined", "poll_opened", "prediction", "poll_revealed"} {
		wantMetric(t, s, `locklab_workshop_events_total{event="`+e+`"}`, "0")
	}
	teacher := newLearner(t, base)
	wcode := startWorkshop(t, teacher)
	ws := "/admin/workshops/" + wcode
	l := newLearner(t, base)
	if code, _ := form(l, "/join", url.Values{"code": {wcode}, "nickname": {"Ada"}}); code != 200 {
		t.Fatalf("join = %d", code)
	}
	code, body := teacher.do("POST", ws+"/polls", "application/json", `{"scenario":"gc-pause"}`)
	var opened struct{ ID string }
	if err := json.Unmarshal([]byte(body), &opened); code != http.StatusCreated || err != nil {
		t.Fatalf("open poll = %d %s", code, body)
	}
	for _, p := range []string{`{"prediction":["safe"]}`, `{"prediction":["two-holders"]}`} {
		if code, body := l.do("POST", "/api/workshop/poll/"+opened.ID+"/predict", "application/json", p); code != 200 {
			t.Fatalf("predict = %d %s", code, body)
		}
	}
	if code, body := teacher.do("POST", ws+"/polls/"+opened.ID+"/reveal", "", ""); code != 200 {
		t.Fatalf("reveal = %d %s", code, body)
	}
	// A prediction after the reveal is refused, and not counted.
	l.do("POST", "/api/workshop/poll/"+opened.ID+"/predict", "application/json", `{"prediction":["safe"]}`)
	if code, _ := form(teacher, ws+"/end", url.Values{}); code != 200 {
		t.Fatalf("end = %d", code)
	}
	for e, n := range map[string]string{"started": "1", "ended": "1", "joined": "1", "poll_opened": "1", "prediction": "2", "poll_revealed": "1"} {
		wantMetric(t, s, `locklab_workshop_events_total{event="`+e+`"}`, n)
	}
}
