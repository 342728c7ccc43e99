package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/locklab/locklab/web"
)

// serveMetrics serves /metrics alone on addr (-metrics-addr), so it need
// not be reachable where the course is, until ctx ends. It returns once
// the listener is open; errors after that go to the log.
func serveMetrics(ctx context.Context, addr string, srv *web.Server, logger *slog.Logger) (net.Addr, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on -metrics-addr %s: %w", addr, err)
	}
	hs := &http.Server{
		Handler:           srv.MetricsHandler(),
		ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout:      time.Minute,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	go func() {
		if err := hs.Serve(ln); err != nil && err != http.ErrServerClosed {
			logger.Error("metrics listener", "error", err)
		}
	}()
	go func() {
		<-ctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(shutdownCtx)
	}()
	logger.Info("serving metrics", "addr", ln.Addr().String())
	return ln.Addr(), nil
}
