// Package web is Lock Lab's HTTP layer: an Echo server that renders the
// course pages with templ, serves the embedded static files and answers the
// JSON API. It depends on the domain packages; none of them depend on it.
package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/locklab/locklab/carry"
	"github.com/locklab/locklab/content"
	"github.com/locklab/locklab/internal/faillog"
	"github.com/locklab/locklab/lab"
	"github.com/locklab/locklab/limit"
	"github.com/locklab/locklab/progress"
	"github.com/locklab/locklab/quiz"
)

// CourseSource hands out the current course content. The embedded content
// never changes; an author's content directory is read again on each call.
type CourseSource interface {
	Course() (*content.Course, error)
}

// QuizSource hands out a topic's quiz.
type QuizSource interface {
	Quiz(topic string) (*quiz.Quiz, error)
}

// ProgressStore remembers what each learner has done.
type ProgressStore interface {
	Progress(ctx context.Context, id string) (progress.Progress, error)
	Topic(ctx context.Context, id, topic string) (progress.TopicProgress, error)
	RecordAnswer(ctx context.Context, id, topic, question string, right bool) (progress.TopicProgress, error)
	MarkStarted(ctx context.Context, id, topic string) error
	Merge(ctx context.Context, from, into string) error
	// RecordSolved and Solved keep the lock lab's solved challenges.
	RecordSolved(ctx context.Context, id, challenge string) error
	Solved(ctx context.Context, id string) ([]string, error)
}

// Config is what the server needs from its caller.
type Config struct {
	Content  CourseSource
	Quizzes  QuizSource
	Progress ProgressStore
	// Playground runs learners' sandboxes; nil leaves it out.
	Playground Playground
	// Lab runs the lock lab's checks; nil runs them in this process, one
	// at a time. LabQueue sizes the fair queue in front of it: Slots is
	// how many checks Lab runs at once.
	Lab      LabChecker
	LabQueue limit.FairQueueOptions
	// Secret returns the key that signs the instructor's sign-in cookie.
	// It is asked again until it succeeds once (a shared store may be down
	// when the server starts).
	Secret func(context.Context) ([]byte, error)
	// CarryCodes keeps the transfer codes that carry progress to another
	// device; CarryTTL is how long one is valid (zero: carry.DefaultTTL),
	// CarryLimits how many may be made and guessed.
	CarryCodes  carry.Store
	CarryTTL    time.Duration
	CarryLimits limit.CarryLimits
	// Newcomers limits the learners new to the progress store saved per
	// client address (limit.NewNewcomers); the zero value is no limit.
	Newcomers limit.Newcomers
	// JoinLimits bound workshop joins and wrong join codes per client
	// address.
	JoinLimits limit.JoinLimits
	// PublicURL is the site's address for links (scheme and host, such as
	// https://locks.example.org); empty takes it from each request (origin).
	PublicURL string
	// Workshops runs instructor-led workshops; nil turns them off.
	Workshops WorkshopService
	// AdminToken lets an instructor sign in; empty turns workshop admin off.
	AdminToken string
	// AdminLimits bound wrong guesses of the admin token (and of the
	// metrics token).
	AdminLimits limit.AdminLimits
	// MetricsLimits bound wrong guesses of the metrics token, counted
	// apart from the admin token's (limit.NewMetricsLimits).
	MetricsLimits limit.AdminLimits
	// MetricsToken, if set, must be sent as "Authorization: Bearer" to
	// read /metrics.
	MetricsToken string
	// SeparateMetrics leaves /metrics off this handler, for the caller to
	// serve MetricsHandler on a listener of its own.
	SeparateMetrics bool
	// Limits caps how fast learners may change things; zero is no limit.
	Limits limit.Limits
	// Streams caps the event streams open at once, per learner, per
	// address and in all; zero fields take limit's defaults.
	Streams limit.StreamCaps
	// TrustedProxies are the load balancers whose X-Forwarded-For header
	// names the client. Without any, the header is ignored and the client
	// is the connection's peer, so nobody can pick the address that rate
	// limits count them by.
	TrustedProxies []netip.Prefix
	// SecureCookies says the site is served over HTTPS (usually by a proxy
	// in front): cookies are then Secure and the session cookies carry the
	// __Host- prefix.
	SecureCookies bool
	// Ready are what /readyz checks: the stores the server cannot serve
	// learners without. None: /readyz always answers 200.
	Ready  []ReadyCheck
	Logger *slog.Logger
	// AccessLog gets one line per request; Logger when nil. The binary
	// gives it a writer that batches lines, as a write per request costs
	// as much as serving a small page.
	AccessLog *slog.Logger
	// Version is the binary's version, for /metrics (locklab_build_info).
	Version string
	// RedisMetrics, if set, are served on /metrics: the binary hands
	// their Observe to the Redis store (NewRedisMetrics).
	RedisMetrics *RedisMetrics
}

// Server is the Lock Lab HTTP handler.
type Server struct {
	echo       *echo.Echo
	content    CourseSource
	quizzes    QuizSource
	progress   ProgressStore
	playground Playground
	started    *seenSet
	secret     *secret
	metrics    *metrics
	limits     limit.Limits
	running    limit.Running
	streams    *limit.Streams // event streams open (streams.go)
	open       *openStreams   // and their writers, for CloseStreams
	ready      *readiness     // what /readyz checks (ready.go)
	// Carrying progress to another device (carry.go).
	carry       *carry.Codes
	carryLimits limit.CarryLimits
	joinLimits  limit.JoinLimits
	// newcomers: see Config.Newcomers (saving.go).
	newcomers limit.Newcomers
	// csrfCookieTail is the CSRF cookie's attributes, made once a second.
	csrfCookieTail atomic.Pointer[cookieTail]
	publicURL      string
	trustedProxies []netip.Prefix
	// secureCookies: see Config.SecureCookies.
	secureCookies bool
	workshops     WorkshopService
	adminToken    string
	adminLimits   limit.AdminLimits
	metricsLimits limit.AdminLimits
	// tokenGuessMu and carryGuessMu make checking a guess and counting it
	// one step: of an admin or metrics token, of a carry code. joinGuess
	// does it for a workshop's join code, per client address, as a room
	// joins at once and those limits are per address.
	tokenGuessMu, carryGuessMu sync.Mutex
	joinGuess                  *limit.Locks
	// metricsToken and separateMetrics: see Config.
	metricsToken    string
	separateMetrics bool
	sseEvery        time.Duration
	pollEvery       time.Duration // how often poll event streams check the store
	// raceDefaults caches the race widget of each scenario with its
	// default settings (a run is deterministic).
	raceDefaults sync.Map
	// pages keeps rendered pages, widgets the playground widget of an
	// empty sandbox (pagecache.go).
	pages   pageCache
	widgets sync.Map
	// raceRuns caches race runs by scenario and settings; raceClock
	// measures a run's time (time.Since; tests fix it).
	raceRuns  *raceRuns
	raceClock func(time.Time) time.Duration
	log       *slog.Logger
	// failures logs the failures of the stores (Redis, mostly) that a
	// request survives, each kind at most once a minute: with Redis
	// down, every request would otherwise log a line or two.
	failures  *faillog.Log
	accessLog *slog.Logger
	lab       LabChecker
	labQueue  *limit.FairQueue
	assets    *assets
}

// New builds the server and its routes.
func New(cfg Config) (*Server, error) {
	switch {
	case cfg.Content == nil:
		return nil, errors.New("web: no content source")
	case cfg.Quizzes == nil:
		return nil, errors.New("web: no quiz source")
	case cfg.Progress == nil:
		return nil, errors.New("web: no progress store")
	case cfg.Secret == nil:
		return nil, errors.New("web: no signing secret")
	case cfg.CarryCodes == nil:
		return nil, errors.New("web: no store for carry codes")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.AccessLog == nil {
		cfg.AccessLog = cfg.Logger
	}
	if cfg.Lab == nil {
		cfg.Lab = lab.NewInProcess(1)
	}
	a, err := newAssets()
	if err != nil {
		return nil, fmt.Errorf("web: assets: %w", err)
	}
	open := newOpenStreams()
	s := &Server{
		echo: echo.New(), content: cfg.Content, quizzes: cfg.Quizzes, progress: cfg.Progress,
		playground: cfg.Playground, started: &seenSet{max: 100_000},
		secret: &secret{get: cfg.Secret}, log: cfg.Logger, failures: faillog.New(cfg.Logger, time.Now), accessLog: cfg.AccessLog, lab: cfg.Lab, assets: a, limits: cfg.Limits, secureCookies: cfg.SecureCookies,
		raceRuns: newRaceRuns(raceCacheRuns, raceCacheEvents), raceClock: time.Since, labQueue: limit.NewFairQueue(cfg.LabQueue), joinGuess: limit.NewLocks(), streams: limit.NewStreams(cfg.Streams), open: open,
		metrics:   newMetrics(cfg.Playground, metricsSources{version: cfg.Version, open: open, redis: cfg.RedisMetrics}),
		workshops: cfg.Workshops, adminToken: cfg.AdminToken, adminLimits: cfg.AdminLimits, metricsLimits: cfg.MetricsLimits,
		metricsToken: cfg.MetricsToken, separateMetrics: cfg.SeparateMetrics, sseEvery: 2 * time.Second, pollEvery: time.Second,
		carry:       carry.New(cfg.CarryCodes, cfg.Progress, cfg.CarryTTL, nil),
		ready:       &readiness{checks: cfg.Ready, log: cfg.Logger, now: time.Now},
		carryLimits: cfg.CarryLimits, newcomers: cfg.Newcomers, joinLimits: cfg.JoinLimits, publicURL: strings.TrimRight(cfg.PublicURL, "/"), trustedProxies: cfg.TrustedProxies,
	}
	s.echo.HideBanner = true
	s.echo.HidePort = true
	s.echo.HTTPErrorHandler = s.handleError
	s.echo.IPExtractor = ipExtractor(cfg.TrustedProxies)
	s.routes()
	return s, nil
}

// ServeHTTP makes the server an http.Handler: every request takes Echo's
// routing and middleware (routes.go).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.echo.ServeHTTP(w, r)
}

// ipExtractor finds the client's address: the connection's peer, or with
// trusted proxies the first address in X-Forwarded-For, read from the
// right, that is not one of them. Echo's defaults would trust any private
// or loopback peer's header; we trust only what we are told to.
func ipExtractor(trusted []netip.Prefix) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, p := range trusted {
		p = p.Masked()
		opts = append(opts, echo.TrustIPRange(&net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}
