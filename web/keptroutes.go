package web

import (
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
)

// The kept pages (home, a lesson, the race and its presenter view) are
// the most read answers, and their bytes are kept (pagecache.go). Echo
// rebuilds its middleware chain for every request, a closure per
// middleware, and looks the route up; for these pages that costs more
// than the page itself. A plain GET of one of them is served here instead:
// the same handler, with the same headers, token, error page, log line and
// metrics as through the middleware, from the same functions. Anything
// else about the request (a query, a body, an escaped path) takes the
// middleware's way.

// keptRoute is the route of a plain GET of a kept page, and the lesson's
// slug on /topics/:slug; ok is false for every other request.
func keptRoute(r *http.Request) (route, slug string, ok bool) {
	if r.Method != http.MethodGet || r.URL.RawQuery != "" || r.URL.RawPath != "" ||
		r.ContentLength != 0 || len(r.TransferEncoding) > 0 {
		return "", "", false
	}
	switch p := r.URL.Path; p {
	case "/", "/race", "/race/present":
		return p, "", true
	default:
		slug, ok := strings.CutPrefix(p, "/topics/")
		if !ok || slug == "" || strings.Contains(slug, "/") {
			return "", "", false
		}
		return "/topics/:slug", slug, true
	}
}

// slugParam names the one parameter of /topics/:slug.
var slugParam = []string{"slug"}

// serveKept serves a kept page's route without the middleware chain,
// doing what the middleware would: noStore, securityHeaders, observe,
// recoverPanics, csrf and compress (limitBodies and limitWrites have
// nothing to do for a GET without a body).
func (s *Server) serveKept(w http.ResponseWriter, r *http.Request, route, slug string) {
	s.serveShort(w, r, route, slug, func(c echo.Context) error {
		token, ok := s.ownToken(c)
		s.readToken(c, token, ok)
		h := keptHandler(route)
		if h == nil {
			return errors.New("no kept route " + route)
		}
		return h(s, c)
	})
}

// serveShort serves a request on route, whose slug parameter (if any) is
// slug, by run, with what the middleware around every route does for it:
// the headers of noStore and securityHeaders, then run as recoverPanics
// would, and the log line and metrics of observe.
func (s *Server) serveShort(w http.ResponseWriter, r *http.Request, route, slug string, run func(echo.Context) error) {
	start := time.Now()
	ec := s.echo.AcquireContext()
	defer s.echo.ReleaseContext(ec)
	ec.Reset(r, w)
	c := keptContexts.Get().(*keptContext)
	*c = keptContext{Context: ec}
	defer func() { *c = keptContext{}; keptContexts.Put(c) }()
	c.SetPath(route)
	if slug != "" {
		c.SetParamNames(slugParam...)
		c.SetParamValues(slug)
	}
	h := w.Header()
	h["Cache-Control"] = noStoreValue
	h["Vary"] = varyCookie
	s.setSecurityHeaders(h)
	err := s.runShort(c, run)
	if err != nil {
		s.handleError(err, c)
	}
	s.observed(c, start, err)
}

// varyCookie is the Vary of a dynamic answer, shared; writePage and the
// gzip middleware add Accept-Encoding.
var varyCookie = []string{echo.HeaderCookie}

// runShort runs run, and turns a panic into the error the recover
// middleware makes of it.
func (s *Server) runShort(c echo.Context, run func(echo.Context) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			perr, ok := p.(error)
			if !ok {
				perr = fmt.Errorf("%v", p)
			}
			stack := make([]byte, 4<<10)
			stack = stack[:runtime.Stack(stack, false)]
			// As through the middleware: the panic's 500 page is written
			// here, and the log line shows no error of its own.
			s.handleError(s.logPanic(c, perr, stack), c)
			err = nil
		}
	}()
	return run(c)
}

// keptHandler is the handler of a route whose pages are kept, nil for any
// other route: these are served the short way, and writePage gzips their
// pages itself.
func keptHandler(route string) func(*Server, echo.Context) error {
	switch route {
	case "/":
		return (*Server).handleHome
	case "/topics/:slug":
		return (*Server).handleLesson
	case "/race":
		return (*Server).handleRacePage
	case "/race/present":
		return (*Server).handleRacePresent
	}
	return nil
}

// keptContext is a request's context on the short way. What the
// middleware keeps in Echo's store, a map made for each request, it keeps
// in fields: the CSRF token and the parsed cookies.
type keptContext struct {
	echo.Context
	csrf string
	jar  *cookieJar
}

var keptContexts = sync.Pool{New: func() any { return new(keptContext) }}

// Get returns the value kept under key.
func (c *keptContext) Get(key string) any {
	switch {
	case key == csrfContextKey && c.csrf != "":
		return c.csrf
	case key == cookiesKey && c.jar != nil:
		return c.jar
	}
	return c.Context.Get(key)
}

// Set keeps val under key.
func (c *keptContext) Set(key string, val any) {
	switch v := val.(type) {
	case string:
		if key == csrfContextKey {
			c.csrf = v
			return
		}
	case *cookieJar:
		if key == cookiesKey {
			c.jar = v
			return
		}
	}
	c.Context.Set(key, val)
}
