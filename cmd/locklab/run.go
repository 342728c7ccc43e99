package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/content"
	"github.com/locklab/locklab/internal/faillog"
	"github.com/locklab/locklab/internal/linelog"
	"github.com/locklab/locklab/limit"
	"github.com/locklab/locklab/playground"
	"github.com/locklab/locklab/race"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/web"
	"github.com/locklab/locklab/workshop"
)

// config is everything the server can be told, from flags or environment.
type config struct {
	addr       string
	contentDir string
	dataDir    string
	redisURL   string
	// redisMode is single, sentinel or cluster (store.RedisMode).
	redisMode string
	// redisURLFile is REDIS_URL_FILE, read when no URL is given.
	redisURLFile string
	secret       string
	idle         time.Duration
	sandboxes    int
	security     securityConfig
	keep         keepConfig
	adminToken   string
	logFormat    string
	// maxParticipants caps each workshop's participants.
	maxParticipants int
	// joinRate and joinCodes are workshop joins a second and wrong join
	// codes a minute per client address.
	joinRate, joinCodes int
	// progressMax caps the bytes of the file store's learners
	// (store.MaxSize); newcomers is how many learners new to the store
	// one client address may have saved a day (limit.Newcomers).
	progressMax int64
	newcomers   int
	// metricsAddr, if set, serves /metrics there instead of on addr;
	// metricsToken, if set, must come as a Bearer token.
	metricsAddr, metricsToken string
	// Sandbox worker processes (worker.go).
	workers      int
	workerMemory int64
	memory       memoryConfig // memory.go
	conns        connConfig   // conns.go
}

// run is the whole program: it parses args (args[0] is the program name),
// reads settings from getenv, and serves until ctx is cancelled or the
// process gets SIGINT or SIGTERM.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 1 && args[1] == "version" {
		return printVersion(stdout)
	}
	if len(args) > 1 && args[1] == "healthcheck" {
		return healthcheck(ctx, args[2:], getenv, stderr)
	}
	if len(args) > 1 && args[1] == "backup" {
		return backupCommand(ctx, args[2:], getenv, stdout, stderr)
	}
	if len(args) > 1 && args[1] == "restore" {
		return restoreCommand(ctx, args[2:], getenv, os.Stdin, stdout, stderr)
	}
	if len(args) > 1 && args[1] == "sandbox-worker" {
		// The server talks to its workers over their stdin and stdout.
		return sandboxWorker(ctx, args[2:], getenv, os.Stdin, stdout, stderr)
	}
	cfg, err := parseFlags(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer limitMemory(cfg.memory)()
	defer tuneGC(cfg.memory.gcPercent, serverGCFloor)()

	// Request lines go out in batches, a tenth of a second apart at most
	// (the batch is closed last, after everything else has logged); other
	// lines at once. Both share one writer, so lines never interleave.
	out := &lockedWriter{w: stderr}
	requests := newBatchWriter(out, 100*time.Millisecond)
	defer requests.Close()
	logger, err := newLogger(cfg.logFormat, out)
	if err != nil {
		return err
	}
	accessLog := newAccessLog(cfg.logFormat, requests) // the format is checked above
	room := connRoom(raiseFileLimit(logger))
	source, quizzes, err := loadContent(cfg.contentDir)
	if err != nil {
		return err
	}
	// Failures of the store that the server survives (a Redis that is
	// down) are logged once a minute per kind, with a count of the rest.
	failures := faillog.New(logger, time.Now)
	if cfg.redisURL != "" {
		// go-redis keeps one process-wide logger; point it at ours.
		redis.SetLogger(redisLogger{failures})
	}
	// The Redis store's round trips, counted in the server's metrics.
	redisMetrics := web.NewRedisMetrics()
	progress, err := openStore(cfg, redisMetrics, func(err error) { failures.Warn("redis save not copied to a replica", "error", err) })
	if err != nil {
		return err
	}
	defer progress.Close()
	if cfg.redisURL == "" {
		// This process holds the progress file: `locklab backup` and
		// `locklab restore` reach it through the server (backup.go).
		// Stopped before the store closes.
		defer serveControl(cfg.dataDir, progress, logger)()
	}
	go upgradeStore(ctx, progress, logger)
	sandboxes, err := newSandboxes(cfg, logger, sandboxCopies(progress))
	if err != nil {
		return err
	}
	defer sandboxes.Close()
	go sweep(ctx, sandboxes)
	go sweep(ctx, progress) // idle learners and old carry codes (bolt)
	// Participants' activity is counted in memory and written in batches,
	// every few seconds and once more on shutdown, below.
	workshops := workshop.New(progress, workshop.Options{MaxParticipants: cfg.maxParticipants})
	go workshops.Run(ctx, func(err error) { failures.Warn("workshop activity not saved yet", "error", err) })
	srv, err := web.New(web.Config{
		Content: source, Quizzes: quizzes, Progress: progress, Playground: sandboxes,
		Secret: secretSource(cfg.secret, progress), Logger: logger, AccessLog: accessLog, Lab: newLabChecker(sandboxes), LabQueue: limit.FairQueueOptions{Slots: labSlots(&cfg)}, Limits: limits(progress, cfg.security),
		TrustedProxies: cfg.security.trustedProxies, SecureCookies: cfg.security.behindTLS, Streams: cfg.conns.streamCaps(room, logger),
		Workshops: workshops, AdminToken: cfg.adminToken, AdminLimits: adminLimits(progress), MetricsLimits: limit.NewMetricsLimits(progress),
		CarryCodes: progress, CarryTTL: cfg.keep.carryTTL, CarryLimits: carryLimits(progress, cfg.security), Newcomers: limit.NewNewcomers(progress, cfg.security.rates(), cfg.newcomers), JoinLimits: joinLimits(progress, cfg), PublicURL: cfg.keep.publicURL,
		MetricsToken: cfg.metricsToken, SeparateMetrics: cfg.metricsAddr != "",
		Ready:   []web.ReadyCheck{{Name: storeName(cfg), Check: progress.Ready}},
		Version: readBuildInfo().Version, RedisMetrics: redisMetricsIf(cfg, redisMetrics),
	})
	if err != nil {
		return err
	}
	if cfg.metricsAddr != "" {
		if _, err := serveMetrics(ctx, cfg.metricsAddr, srv, logger); err != nil {
			return err
		}
	}

	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.addr, err)
	}
	// For `locklab healthcheck`, which does not see this process's flags.
	defer recordAddr(cfg.dataDir, ln.Addr().String(), logger)()
	// The time limits on connections are kept by conns, not by
	// http.Server's timeouts, which cost every request timer changes: ten
	// seconds for a request's headers, a minute for the rest of it (the
	// slowest answer is a script at its deadline, or a lab check; the
	// event streams set a deadline per event), two minutes idle. It also
	// caps the connections of each address, and makes room for newcomers
	// when the descriptors run low.
	conns := web.NewConns(web.ConnLimits{Header: 10 * time.Second, Request: time.Minute, Idle: 2 * time.Minute}, cfg.conns.connCaps(room, cfg.security.trustedProxies))
	httpSrv := &http.Server{
		Handler:        srv,
		MaxHeaderBytes: 64 << 10,
		ErrorLog:       slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	// Event streams never end by themselves: on shutdown, once the
	// listener is closed, each is told to reconnect (to another replica,
	// behind a load balancer) and ends, so that Shutdown waits only for
	// the requests in flight.
	httpSrv.RegisterOnShutdown(srv.CloseStreams)
	fmt.Fprintf(stdout, "Lock Lab is serving the course on %s\n", displayURL(ln.Addr()))
	logger.Info("listening", "addr", ln.Addr().String(), "content", contentLabel(cfg.contentDir), "progress", progress.Name())
	if cfg.keep.publicURL == "" {
		logger.Info("links to this site (progress codes, join links) name localhost, this machine's address or what a trusted proxy says; set -public-url to name the site")
	}

	errc := make(chan error, 1)
	go func() { errc <- conns.Serve(httpSrv, ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	began := time.Now()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = httpSrv.Shutdown(shutdownCtx)
	// No request runs any more (or the wait is over): write what the
	// workshops counted, before the store closes.
	if ferr := workshops.Flush(context.WithoutCancel(ctx)); ferr != nil {
		logger.Error("workshop activity lost on shutdown", "error", ferr)
	}
	if err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	logger.Info("shut down", "took", time.Since(began).Round(time.Millisecond).String())
	return nil
}

func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	fset := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fset.SetOutput(stderr)
	var cfg config
	fset.StringVar(&cfg.addr, "addr", ":8080", "address to listen on (env LOCKLAB_ADDR)")
	fset.StringVar(&cfg.contentDir, "content", "", "serve course content from this directory, re-read on every request, instead of the embedded content (env LOCKLAB_CONTENT)")
	fset.StringVar(&cfg.dataDir, "data", "data", "directory for learners' progress when Redis is not used (env LOCKLAB_DATA)")
	fset.StringVar(&cfg.redisURL, "redis-url", "", "keep progress, workshops, rate limits and playground sandboxes in this Redis (redis://host:port/db; Sentinel: redis://sentinel:26379?master_name=NAME&addr=sentinel2:26379; Cluster: redis://node1:6379?addr=node2:6379 with -redis-mode cluster), shared by every replica (env REDIS_URL)")
	fset.StringVar(&cfg.redisMode, "redis-mode", "", "what -redis-url names: single, sentinel or cluster; empty reads a URL with master_name as Sentinel, any other as one node (env LOCKLAB_REDIS_MODE)")
	// Secrets have no flag, so that they never show in a process list;
	// each may come from a file (NAME_FILE).
	if err := readSecrets(&cfg, getenv); err != nil {
		return config{}, err
	}
	fset.StringVar(&cfg.metricsAddr, "metrics-addr", "", "serve /metrics on this address only, not on -addr (for a private network) (env LOCKLAB_METRICS_ADDR)")
	fset.StringVar(&cfg.logFormat, "log-format", "text", "log format: text or json (env LOCKLAB_LOG_FORMAT)")
	addLimitFlags(fset, getenv, &cfg)
	addSecurityFlags(fset, &cfg.security)
	addKeepFlags(fset, &cfg.keep)
	if err := setFromEnv(fset, getenv); err != nil {
		return config{}, err
	}
	fset.Usage = func() {
		fmt.Fprintf(stderr, "Usage: %s [flags]\n       %s healthcheck [-addr ADDR] [-data DIR]\n       %s backup [-data DIR] [-redis-url URL] [-redis-mode MODE] [-progress-ttl D] FILE\n       %s restore [-data DIR] [-redis-url URL] [-redis-mode MODE] [-progress-ttl D] FILE\n       %s version\n\nServes the Lock Lab course.\n\nFlags:\n", args[0], args[0], args[0], args[0], args[0])
		fset.PrintDefaults()
	}
	if err := fset.Parse(args[1:]); err != nil {
		return config{}, err
	}
	if err := redisURLFromFile(&cfg); err != nil {
		return config{}, err
	}
	if err := checkLimitFlags(cfg); err != nil {
		return config{}, err
	}
	if err := checkKeepFlags(&cfg.keep); err != nil {
		return config{}, err
	}
	// 22 characters of base64 are 128 bits; a shorter token could be
	// guessed, limits or not.
	if cfg.adminToken != "" && len(cfg.adminToken) < minAdminToken {
		return config{}, fmt.Errorf("LOCKLAB_ADMIN_TOKEN must be at least %d characters long (128 random bits: openssl rand -base64 16, or -hex 16)", minAdminToken)
	}
	if cfg.metricsToken != "" && len(cfg.metricsToken) < minAdminToken {
		return config{}, fmt.Errorf("LOCKLAB_METRICS_TOKEN must be at least %d characters long", minAdminToken)
	}
	if cfg.secret != "" && len(cfg.secret) < 16 {
		return config{}, fmt.Errorf("LOCKLAB_SECRET must be at least 16 characters long")
	}
	// Without it, the key would be kept in Redis: a Redis that restarts
	// empty would give each replica started after it a new key, and an
	// instructor would be signed in on some replicas and out on others.
	if cfg.redisURL != "" && cfg.secret == "" {
		return config{}, fmt.Errorf("with REDIS_URL, set LOCKLAB_SECRET (or LOCKLAB_SECRET_FILE): 16 or more random characters, the same on every replica (openssl rand -base64 24), so that a Redis that restarts empty signs nobody out")
	}
	if fset.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected argument %q (see -h)", fset.Arg(0))
	}
	return cfg, nil
}

func newLogger(format string, w io.Writer) (*slog.Logger, error) {
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, nil)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, nil)), nil
	default:
		return nil, fmt.Errorf("-log-format %q: want text or json", format)
	}
}

// newAccessLog is the logger of the request lines: in the format of
// newLogger's, one line per request, written without slog's general
// encoder (linelog), which would cost as much as a small page.
func newAccessLog(format string, w io.Writer) *slog.Logger {
	if format == "json" {
		return slog.New(linelog.NewJSON(w, nil))
	}
	return slog.New(linelog.NewText(w, nil))
}

// joinLimits meters workshop joins and wrong join codes per client
// address, shared by every replica when the store is Redis; -rate-limit 0
// turns them off with every other limit.
func joinLimits(st *store.Store, cfg config) limit.JoinLimits {
	if cfg.security.writeRate == 0 {
		return limit.JoinLimits{}
	}
	return limit.NewJoinLimits(st, limit.JoinRates{Joins: cfg.joinRate, WrongCodes: cfg.joinCodes})
}

// sweep drops idle sandboxes once a minute until ctx ends.
func sweep(ctx context.Context, m interface{ Sweep(time.Time) int }) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			m.Sweep(now)
		}
	}
}

// loadContent loads and checks the course and its quizzes once, to fail
// fast on a broken file. With dir set, both come from disk and are read
// again on every request, so an author sees each edit on reload.
func loadContent(dir string) (web.CourseSource, web.QuizSource, error) {
	var fsys fs.FS = content.Embedded()
	if dir != "" {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return nil, nil, fmt.Errorf("-content %s: not a directory", dir)
		}
		fsys = os.DirFS(dir)
	}
	known := content.Known{RaceScenarios: raceScenarios()}
	site, err := content.LoadSite(fsys, known)
	if err != nil {
		return nil, nil, fmt.Errorf("load content from %s: %w", contentLabel(dir), err)
	}
	if dir != "" {
		r := content.Reloader{FS: fsys, Known: known}
		return r, r, nil
	}
	return content.Fixed{C: site.Course}, site.Quizzes, nil
}

// raceScenarios lists the race engine's scenario ids, the ones a lesson's
// race: may name.
func raceScenarios() []string {
	var ids []string
	for _, in := range race.List() {
		ids = append(ids, in.ID)
	}
	return ids
}

// openStore opens the progress store: Redis when a URL is given, its
// round trips observed by rm and what it warns of told to warn, else the embedded file store in the data
// directory.
func openStore(cfg config, rm *web.RedisMetrics, warn func(error)) (*store.Store, error) {
	ttl := store.ProgressTTL(cfg.keep.progressTTL)
	if cfg.redisURL != "" {
		return store.OpenRedis(cfg.redisURL, ttl, store.ObserveRedis(rm.Observe), store.RedisMode(cfg.redisMode), store.Warn(warn))
	}
	return store.OpenBolt(cfg.dataDir, ttl, store.MaxSize(cfg.progressMax))
}

// redisMetricsIf is rm when the store is Redis, else nil: the file store
// has no round trips to count, and /metrics leaves the Redis metrics out.
func redisMetricsIf(cfg config, rm *web.RedisMetrics) *web.RedisMetrics {
	if cfg.redisURL != "" {
		return rm
	}
	return nil
}

// storeName is what /readyz calls the store when it is down: "redis",
// or "data" for the data directory's file.
func storeName(cfg config) string {
	if cfg.redisURL != "" {
		return "redis"
	}
	return "data"
}

// sandboxCopies is where the replicas share learners' sandboxes: Redis,
// when the store is Redis; else nil, as a single server has no one to
// share them with.
func sandboxCopies(st *store.Store) playground.SandboxCopies {
	if c, ok := st.SandboxCopies(); ok {
		return c
	}
	return nil
}

// secretSource gives the key that signs the instructor's sign-in:
// LOCKLAB_SECRET if set, else one the store creates once and keeps, so
// sign-ins stay valid across restarts and replicas.
func secretSource(fromEnv string, st *store.Store) func(context.Context) ([]byte, error) {
	if fromEnv != "" {
		return func(context.Context) ([]byte, error) { return []byte(fromEnv), nil }
	}
	return func(ctx context.Context) ([]byte, error) {
		fresh := make([]byte, 32)
		_, _ = rand.Read(fresh)
		return st.Secret(ctx, fresh)
	}
}

func contentLabel(dir string) string {
	if dir == "" {
		return "embedded"
	}
	return dir
}

// displayURL is the address a person can open: a wildcard host becomes
// localhost.
func displayURL(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return "http://" + a.String()
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}
