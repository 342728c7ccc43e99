package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/locklab/locklab/store"
)

// controlSocket is the Unix socket in the data directory through which
// `locklab backup` and `locklab restore` reach a running server on the
// file store: the server holds the progress file locked, so no other
// process can open it. Only a process that can reach into the data
// directory can connect (the socket is 0600, the server's own user's),
// which is the trust that reading the progress file itself takes.
const controlSocket = "control.sock"

// maxRestoreSize bounds a backup a restore spools to disk before it
// reads it twice (store.Restore): a hundred times the file store's
// default size cap is room for any real one.
const maxRestoreSize = 1 << 30

// Trailers of a backup sent through the control socket: the backup's
// status is known only once the whole of it has been sent.
const (
	learnersTrailer = "Locklab-Learners"
	errorTrailer    = "Locklab-Error"
)

// progressStore is what the commands back up and restore: a store they
// opened (*store.Store), or a running server's through its control
// socket (controlClient).
type progressStore interface {
	Backup(ctx context.Context, w io.Writer) (int, error)
	Restore(ctx context.Context, r io.ReadSeeker) (int, error)
	Close() error
}

// backupArgs are the commands' settings, read as the server reads its
// own: flags, each with its environment variable, and REDIS_URL_FILE.
type backupArgs struct {
	cfg  config // dataDir, redisURL, redisMode, redisURLFile, keep.progressTTL
	file string
}

func parseBackupArgs(name string, args []string, getenv func(string) string, stderr io.Writer) (backupArgs, error) {
	fset := flag.NewFlagSet(name, flag.ContinueOnError)
	fset.SetOutput(stderr)
	var a backupArgs
	fset.StringVar(&a.cfg.dataDir, "data", "data", "the data directory of the progress file, when Redis is not used (env LOCKLAB_DATA)")
	fset.StringVar(&a.cfg.redisURL, "redis-url", "", "the Redis that keeps progress, as the server's -redis-url (env REDIS_URL)")
	fset.StringVar(&a.cfg.redisMode, "redis-mode", "", "what -redis-url names: single, sentinel or cluster (env LOCKLAB_REDIS_MODE)")
	fset.DurationVar(&a.cfg.keep.progressTTL, "progress-ttl", store.DefaultProgressTTL, "the server's -progress-ttl: with Redis, restored learners are kept this long unseen, as the server keeps them (env LOCKLAB_PROGRESS_TTL)")
	a.cfg.redisURLFile = getenv("REDIS_URL_FILE")
	if err := setFromEnv(fset, getenv); err != nil {
		return backupArgs{}, err
	}
	fset.Usage = func() {
		fmt.Fprintf(stderr, "Usage: locklab %s [-data DIR] [-redis-url URL] [-redis-mode MODE] [-progress-ttl D] FILE\n\nFILE - is standard %s.\n\nFlags:\n", name, map[string]string{"backup": "output", "restore": "input"}[name])
		fset.PrintDefaults()
	}
	if err := fset.Parse(args); err != nil {
		return backupArgs{}, err
	}
	if fset.NArg() != 1 {
		fset.Usage()
		return backupArgs{}, fmt.Errorf("%s: want one FILE, got %d arguments", name, fset.NArg())
	}
	a.file = fset.Arg(0)
	if err := redisURLFromFile(&a.cfg); err != nil {
		return backupArgs{}, err
	}
	return a, nil
}

// backupCommand is `locklab backup FILE`: it writes every learner's
// progress to FILE, through FILE.tmp renamed over it once complete, so
// that FILE is never half a backup.
func backupCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	a, err := parseBackupArgs("backup", args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	// Interrupted, it stops and removes FILE.tmp rather than leave it.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	st, err := openProgress(a.cfg, false)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer st.Close()
	if a.file == "-" {
		n, err := st.Backup(ctx, stdout)
		if err != nil {
			return fmt.Errorf("backup: %w", err)
		}
		fmt.Fprintf(stderr, "backed up %d learners to standard output\n", n)
		return nil
	}
	n, err := backupToFile(ctx, st, a.file)
	if err != nil {
		return fmt.Errorf("backup %s: %w", a.file, err)
	}
	fmt.Fprintf(stdout, "backed up %d learners to %s\n", n, a.file)
	return nil
}

// backupToFile writes the backup to path.tmp, syncs it and renames it
// to path.
func backupToFile(ctx context.Context, st progressStore, path string) (int, error) {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, err
	}
	n, err := st.Backup(ctx, f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return 0, err
	}
	return n, nil
}

// restoreCommand is `locklab restore FILE`: it adds the progress in
// FILE to the store's (store.Restore), or changes nothing if FILE is not
// a good backup.
func restoreCommand(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	a, err := parseBackupArgs("restore", args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	var in *os.File
	if a.file == "-" {
		// Read twice, as store.Restore does: from a copy on disk, in the
		// data directory if there is one, as the image has no /tmp.
		dir := ""
		if st, serr := os.Stat(a.cfg.dataDir); serr == nil && st.IsDir() {
			dir = a.cfg.dataDir
		}
		in, err = spool(stdin, dir)
		if in != nil {
			defer os.Remove(in.Name())
		}
	} else {
		in, err = os.Open(a.file)
	}
	if err != nil {
		return fmt.Errorf("restore %s: %w", a.file, err)
	}
	defer in.Close()
	st, err := openProgress(a.cfg, true)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer st.Close()
	n, err := st.Restore(ctx, in)
	if err != nil {
		return fmt.Errorf("restore %s: %w", a.file, err)
	}
	fmt.Fprintf(stdout, "restored %d learners from %s\n", n, a.file)
	return nil
}

// openProgress opens the store the settings name: Redis directly, as
// any number of processes may; the file store through the control
// socket of the server that runs on it, or else directly. A restore may
// create the progress file; a backup needs one.
func openProgress(cfg config, create bool) (progressStore, error) {
	if cfg.redisURL != "" {
		return store.OpenRedis(cfg.redisURL, store.RedisMode(cfg.redisMode), store.ProgressTTL(cfg.keep.progressTTL))
	}
	sock := filepath.Join(cfg.dataDir, controlSocket)
	if c, ok, err := dialControl(sock); ok || err != nil {
		return c, err
	}
	file := store.BoltFile(cfg.dataDir)
	if _, err := os.Stat(file); !create && errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no progress in %s (no %s): give the server's data directory with -data or LOCKLAB_DATA, or its Redis with -redis-url or REDIS_URL", cfg.dataDir, file)
	}
	// No cap here: a restore must not drop learners for room, and the
	// server applies its own -progress-max when it next runs.
	st, err := store.OpenBolt(cfg.dataDir, store.MaxSize(math.MaxInt64))
	if store.Locked(err) {
		return nil, fmt.Errorf("%s is in use by another process, and no server answers on %s: stop that process, or run this where the server runs (docker exec)", file, sock)
	}
	return st, err
}

// dialControl connects to a server's control socket; ok is false when
// no server listens there (no socket, one a crashed server left, or a
// path too long for a socket, where the server could make none), and err
// says why one this user may not use cannot be reached.
func dialControl(sock string) (c controlClient, ok bool, err error) {
	conn, err := net.DialTimeout("unix", sock, time.Second)
	if errors.Is(err, fs.ErrPermission) {
		return controlClient{}, false, fmt.Errorf("the server's control socket: %w (run as the server's user)", err)
	}
	if err != nil {
		return controlClient{}, false, nil
	}
	conn.Close()
	var d net.Dialer
	return controlClient{sock: sock, http: &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "unix", sock)
		},
	}}}, true, nil
}

// controlClient backs up and restores through a running server's
// control socket.
type controlClient struct {
	sock string
	http *http.Client
}

func (c controlClient) Backup(ctx context.Context, w io.Writer) (int, error) {
	resp, err := c.do(ctx, http.MethodGet, "/backup", nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(w, resp.Body); err != nil {
		return 0, fmt.Errorf("the server on %s: %w", c.sock, err)
	}
	// The trailers are read with the end of the body.
	if msg := resp.Trailer.Get(errorTrailer); msg != "" {
		return 0, fmt.Errorf("the server on %s: %s", c.sock, msg)
	}
	n, err := strconv.Atoi(resp.Trailer.Get(learnersTrailer))
	if err != nil {
		return 0, fmt.Errorf("the server on %s ended the backup early", c.sock)
	}
	return n, nil
}

func (c controlClient) Restore(ctx context.Context, r io.ReadSeeker) (int, error) {
	resp, err := c.do(ctx, http.MethodPost, "/restore", r)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var out struct{ Learners int }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return 0, fmt.Errorf("the server on %s: %w", c.sock, err)
	}
	return out.Learners, nil
}

// do sends a request to the server and returns its answer if it is 200,
// or else its error message as an error.
func (c controlClient) do(ctx context.Context, method, path string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, "http://locklab"+path, body)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("the server on %s: %w", c.sock, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return nil, fmt.Errorf("the server on %s: %s", c.sock, strings.TrimSpace(string(msg)))
	}
	return resp, nil
}

func (c controlClient) Close() error {
	c.http.CloseIdleConnections()
	return nil
}

// controlStore is what the control socket serves.
type controlStore interface {
	Backup(ctx context.Context, w io.Writer) (int, error)
	Restore(ctx context.Context, r io.ReadSeeker) (int, error)
}

// serveControl serves backups and restores of st on the control socket
// in dir, and returns a function that stops it and removes the socket.
// A socket that cannot be made is logged, not fatal: backups then need
// the server stopped.
func serveControl(dir string, st controlStore, logger *slog.Logger) (stop func()) {
	path := filepath.Join(dir, controlSocket)
	ln, err := listenPrivate(path)
	if err != nil {
		logger.Warn("no control socket: locklab backup and restore will need the server stopped", "error", err)
		return func() {}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /backup", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/jsonl")
		w.Header().Set("Trailer", learnersTrailer+", "+errorTrailer)
		n, err := st.Backup(r.Context(), w)
		if err != nil {
			logger.Error("backup through the control socket failed", "error", err)
			w.Header().Set(errorTrailer, strings.ReplaceAll(err.Error(), "\n", " "))
			return
		}
		w.Header().Set(learnersTrailer, strconv.Itoa(n))
		logger.Info("backed up through the control socket", "learners", n)
	})
	mux.HandleFunc("POST /restore", func(w http.ResponseWriter, r *http.Request) {
		n, err := restoreBody(r.Context(), st, r.Body, dir)
		switch {
		case errors.Is(err, store.ErrBadBackup):
			http.Error(w, err.Error(), http.StatusBadRequest)
		case errors.Is(err, errTooLarge):
			http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
		case err != nil:
			logger.Error("restore through the control socket failed", "restored", n, "error", err)
			http.Error(w, err.Error(), http.StatusInternalServerError)
		default:
			logger.Info("restored through the control socket", "learners", n)
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(struct {
				Learners int `json:"learners"`
			}{n})
		}
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	go func() { _ = srv.Serve(ln) }()
	return func() {
		// A backup in flight gets a few seconds to finish before the
		// store closes under it.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			_ = srv.Close()
		}
		_ = os.Remove(path)
	}
}

// restoreBody restores a backup sent to the control socket, spooled in
// dir (the volume that holds the data) to be read twice.
func restoreBody(ctx context.Context, st controlStore, body io.Reader, dir string) (int, error) {
	f, err := spool(body, dir)
	if f != nil {
		defer os.Remove(f.Name())
		defer f.Close()
	}
	if err != nil {
		return 0, err
	}
	return st.Restore(ctx, f)
}

// listenPrivate listens on a Unix socket at path that only this user can
// connect to, from its first instant: it is made in a directory of its
// own (0700), made 0600 and only then moved to path. A socket at path is
// one a server that crashed left (this server holds the progress file,
// so no other runs on the data directory), and is replaced; anything else
// there is left alone.
func listenPrivate(path string) (net.Listener, error) {
	if st, err := os.Lstat(path); err == nil && st.Mode().Type() != fs.ModeSocket {
		return nil, fmt.Errorf("%s is there and is not a socket", path)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(path), ".control-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	sock := filepath.Join(tmp, "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return nil, err
	}
	// Removed at path, by the stop function, not at the name it had.
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	if err := os.Chmod(sock, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	if err := os.Rename(sock, path); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// errTooLarge is a backup larger than maxRestoreSize.
var errTooLarge = fmt.Errorf("the backup is larger than %d MiB", maxRestoreSize>>20)

// spool copies r to a new temporary file in dir ("" for the system's),
// up to maxRestoreSize, and returns it at its start. The caller closes
// and removes the file, which is returned with the error if it was made.
func spool(r io.Reader, dir string) (*os.File, error) {
	f, err := os.CreateTemp(dir, ".restore-*")
	if err != nil {
		return nil, err
	}
	n, err := io.Copy(f, io.LimitReader(r, maxRestoreSize+1))
	switch {
	case err != nil:
		return f, fmt.Errorf("spool the backup: %w", err)
	case n > maxRestoreSize:
		return f, errTooLarge
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return f, err
	}
	return f, nil
}
