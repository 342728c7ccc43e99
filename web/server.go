// Package web is Lock Lab's HTTP layer: an Echo server that renders the
// course pages with templ, serves the embedded static files and answers the
// JSON API. It depends on the domain packages; none of them depend on it.
package web

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/locklab/locklab/content"
)

// CourseSource hands out the current course content. The embedded content
// never changes; an author's content directory is read again on each call.
type CourseSource interface {
	Course() (*content.Course, error)
}

// Config is what the server needs from its caller.
type Config struct {
	Content CourseSource
	Logger  *slog.Logger
}

// Server is the Lock Lab HTTP handler.
type Server struct {
	echo    *echo.Echo
	content CourseSource
	log     *slog.Logger
	assets  *assets
}

// New builds the server and its routes.
func New(cfg Config) (*Server, error) {
	if cfg.Content == nil {
		return nil, errors.New("web: no content source")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	a, err := newAssets()
	if err != nil {
		return nil, fmt.Errorf("web: assets: %w", err)
	}
	s := &Server{echo: echo.New(), content: cfg.Content, log: cfg.Logger, assets: a}
	s.echo.HideBanner = true
	s.echo.HidePort = true
	s.echo.HTTPErrorHandler = s.handleError
	s.routes()
	return s, nil
}

// ServeHTTP makes the server an http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.echo.ServeHTTP(w, r)
}
