package web

import (
	"crypto/subtle"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/locklab/locklab/playground"
)

// metrics are the server's Prometheus metrics, in a registry of its own
// (not the library's global one), served at /metrics.
type metrics struct {
	reg         *prometheus.Registry
	requests    *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	answers     *prometheus.CounterVec
	rateLimited *prometheus.CounterVec
	execs       *prometheus.CounterVec
	// execA and execB are execs's two series, looked up once: a command
	// line is the most frequent write.
	execA, execB prometheus.Counter
	races        *prometheus.CounterVec
	// workshopEvents counts what happens in workshops, storeErrors the
	// requests a store could not serve.
	workshopEvents, storeErrors *prometheus.CounterVec
	// streams measures event streams from open to close: they last
	// minutes, and would drown the request latencies.
	streams prometheus.Histogram
	// series keeps each route's metrics by route, method and status.
	series sync.Map
}

// sandboxCounter is what the metrics need from the playground, if there
// is one: how many sandboxes are alive.
type sandboxCounter interface{ Len() int }

// metricsSources are what the metrics read beside the playground.
type metricsSources struct {
	// version is the binary's version, for locklab_build_info.
	version string
	// open are the event streams being served.
	open *openStreams
	// redis are the Redis store's round trips, if the store is Redis.
	redis *RedisMetrics
}

func newMetrics(pg Playground, src metricsSources) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "locklab_http_requests_total", Help: "HTTP requests by route pattern, method and status.",
		}, []string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "locklab_http_request_duration_seconds", Help: "Time to answer HTTP requests, by route pattern and method.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"route", "method"}),
		answers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "locklab_quiz_answers_total", Help: "Quiz answers graded, by topic and result.",
		}, []string{"topic", "result"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "locklab_rate_limited_requests_total", Help: "Requests refused with 429 by the rate limiter, by limit.",
		}, []string{"limit"}),
		execs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "locklab_playground_commands_total", Help: "Playground command lines run, by client.",
		}, []string{"client"}),
		races: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "locklab_race_runs_total", Help: "Race scenarios computed, by scenario.",
		}, []string{"scenario"}),
		workshopEvents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "locklab_workshop_events_total", Help: "Workshop events on this replica, by event: started, ended, joined, poll_opened, prediction, poll_revealed.",
		}, []string{"event"}),
		storeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "locklab_store_errors_total", Help: "Requests that failed because a store could not be used, by store: progress (progress, workshops, carry codes: the data directory's file or Redis) or sandbox_copies (the copies replicas share sandboxes through).",
		}, []string{"store"}),
		streams: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "locklab_event_stream_duration_seconds", Help: "How long event streams stayed open, from the request to its end; they are not in locklab_http_request_duration_seconds.",
			Buckets: []float64{1, 10, 60, 300, 900, 1800, 3600, 7200, 14400},
		}),
	}
	m.execA, m.execB = m.execs.WithLabelValues(string(playground.ClientA)), m.execs.WithLabelValues(string(playground.ClientB))
	// Every series exists from the start, at 0, so that a rate over it
	// works before the first event.
	for _, e := range []string{eventStarted, eventEnded, eventJoined, eventPollOpened, eventPrediction, eventPollRevealed} {
		m.workshopEvents.WithLabelValues(e)
	}
	for _, st := range []string{storeProgress, storeSandboxCopies} {
		m.storeErrors.WithLabelValues(st)
	}
	buildInfo := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "locklab_build_info", Help: "Always 1; its labels say which build is running: the binary's version and the Go version it was built with.",
	}, []string{"version", "go_version"})
	buildInfo.WithLabelValues(src.version, runtime.Version()).Set(1)
	m.reg.MustRegister(m.requests, m.latency, m.answers, m.rateLimited, m.execs, m.races, m.workshopEvents, m.storeErrors, m.streams, buildInfo,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "locklab_event_streams_open", Help: "Event streams (live updates of workshop pages) open now.",
		}, func() float64 { return float64(src.open.len()) }),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if src.redis != nil {
		m.reg.MustRegister(src.redis.errors, src.redis.latency)
	}
	// Worker restarts and script timeouts, when the playground counts them
	// (the supervisor of worker processes does both, the in-process
	// manager the timeouts).
	if r, ok := pg.(interface{ Restarts() int64 }); ok {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "locklab_sandbox_worker_restarts_total", Help: "Sandbox worker processes restarted after they died.",
		}, func() float64 { return float64(r.Restarts()) }))
	}
	if st, ok := pg.(interface{ ScriptTimeouts() int64 }); ok {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "locklab_script_timeouts_total", Help: "Playground scripts stopped at their deadline.",
		}, func() float64 { return float64(st.ScriptTimeouts()) }))
	}
	if sc, ok := pg.(sandboxCounter); ok {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "locklab_sandboxes_live", Help: "Playground sandboxes alive now.",
		}, func() float64 { return float64(sc.Len()) }))
	}
	if d, ok := pg.(interface{ DataBytes() (int, int) }); ok {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "locklab_sandbox_data_bytes", Help: "Data of all playground sandboxes, as their budget (-sandbox-memory) counts it.",
		}, func() float64 { data, _ := d.DataBytes(); return float64(data) }))
	}
	return m
}

// The workshop events and stores the metrics count, a fixed set.
const (
	eventStarted       = "started"
	eventEnded         = "ended"
	eventJoined        = "joined"
	eventPollOpened    = "poll_opened"
	eventPrediction    = "prediction"
	eventPollRevealed  = "poll_revealed"
	storeProgress      = "progress"
	storeSandboxCopies = "sandbox_copies"
)

// countWorkshop counts one workshop event.
func (m *metrics) countWorkshop(event string) { m.workshopEvents.WithLabelValues(event).Inc() }

// routeSeries is one route's request counter and latency histogram, for
// one method and status: looked up once, then kept, so that a request pays
// a map read for its metrics rather than hashing and checking its labels.
type routeSeries struct {
	requests prometheus.Counter
	latency  prometheus.Observer
}

type seriesKey struct {
	route, method string
	status        int
}

// record counts a request by its route pattern (never the raw path, which
// would let anyone create unbounded label values), method and status.
// Methods outside the standard ones count as "other": the route patterns,
// statuses and standard methods are a fixed, small set. An event stream's
// time goes to the streams' histogram, not the requests' latencies.
func (m *metrics) record(route, method string, status int, latency time.Duration, stream bool) {
	if !standardMethod(method) {
		method = "other"
	}
	k := seriesKey{route, method, status}
	v, ok := m.series.Load(k)
	if !ok {
		v, _ = m.series.LoadOrStore(k, routeSeries{
			requests: m.requests.WithLabelValues(route, method, strconv.Itoa(status)),
			latency:  m.latency.WithLabelValues(route, method),
		})
	}
	rs := v.(routeSeries)
	rs.requests.Inc()
	if stream {
		m.streams.Observe(latency.Seconds())
		return
	}
	rs.latency.Observe(latency.Seconds())
}

// RedisMetrics are the Redis store's round trips: errors by command and
// latency. The binary makes them, hands Observe to the store, which calls
// it after every command or pipeline, and the metrics to the server
// (Config.RedisMetrics), which serves them on /metrics.
type RedisMetrics struct {
	errors  *prometheus.CounterVec
	latency prometheus.Histogram
}

// NewRedisMetrics returns Redis metrics that nothing has observed yet.
func NewRedisMetrics() *RedisMetrics {
	return &RedisMetrics{
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "locklab_redis_errors_total", Help: "Redis round trips of the store that failed, by command (pipeline for a pipeline).",
		}, []string{"op"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "locklab_redis_latency_seconds", Help: "Time of the store's Redis round trips (a command or a pipeline), failed ones included.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
		}),
	}
}

// Observe records one round trip: op is the command's name (a fixed set,
// the commands the store sends) or "pipeline"; err is nil unless it
// failed.
func (r *RedisMetrics) Observe(op string, took time.Duration, err error) {
	r.latency.Observe(took.Seconds())
	if err != nil {
		r.errors.WithLabelValues(op).Inc()
	}
}

// exec counts a command line run as client.
func (m *metrics) exec(client playground.Client) {
	if client == playground.ClientB {
		m.execB.Inc()
		return
	}
	m.execA.Inc()
}

func standardMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return true
	}
	return false
}

// handler serves the metrics, compressing them itself, as it must where
// no middleware does (MetricsHandler's listener).
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// siteHandler serves the metrics uncompressed, for the site's listener,
// whose compress middleware compresses them: both would send a scraper
// gzip inside gzip.
func (m *metrics) siteHandler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, DisableCompression: true})
}

// handleMetrics serves /metrics on the site's own listener; with a
// metrics token, only to a client that sends it. Wrong tokens count
// towards limits of their own, like the admin token's but apart from
// them: a misconfigured scraper does not lock the instructor out.
func (s *Server) handleMetrics(c echo.Context) error {
	if s.metricsToken != "" {
		ok, err := s.guessWith(c, s.metricsLimits, "metrics", func() bool { return metricsAuthorized(c.Request(), s.metricsToken) })
		if err != nil {
			return err
		}
		if !ok {
			c.Response().Header().Set("WWW-Authenticate", `Bearer realm="locklab metrics"`)
			return echo.NewHTTPError(http.StatusUnauthorized, "send the metrics token as Authorization: Bearer")
		}
	}
	s.metrics.siteHandler().ServeHTTP(c.Response(), c.Request())
	return nil
}

// MetricsHandler serves the metrics alone, for a listener of their own
// (Config.SeparateMetrics); with a metrics token, only to a client that
// sends it.
func (s *Server) MetricsHandler() http.Handler {
	h := s.metrics.handler()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		if s.metricsToken != "" && !metricsAuthorized(r, s.metricsToken) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="locklab metrics"`)
			http.Error(w, "send the metrics token as Authorization: Bearer", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
	return mux
}

func metricsAuthorized(r *http.Request, token string) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1
}
