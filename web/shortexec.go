package web

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// The playground's exec API is the most frequent write: every line a
// learner types or runs from the lesson is one. It takes the short way
// the kept pages take (keptroutes.go), without Echo's chain, which is
// built anew for every request: its middleware that are not the same for
// every route (limitBodies, csrf, limitWrites and compress) are composed
// with the handler once, when the routes are made, and are the very
// functions Echo runs on every other route, so that a refused token, a
// body over the limit, a rate limit or a gzip-accepting browser get the
// same answer either way. What serveShort does in place of the others is
// the same as for the kept pages.

// execPath is the route of the playground's exec API.
const execPath = "/api/playground/exec"

// execRoute reports whether r is a request the exec API's short way
// serves: a POST of execPath with nothing in its query or escaped path
// (which Echo's router and the CSRF middleware's form lookup would read).
func execRoute(r *http.Request) bool {
	return r.Method == http.MethodPost && r.URL.Path == execPath &&
		r.URL.RawQuery == "" && r.URL.RawPath == ""
}

// composeMiddleware wraps h in mws, the first outermost, as Echo does for
// every request; done once, the chain is kept.
func composeMiddleware(h echo.HandlerFunc, mws []echo.MiddlewareFunc) echo.HandlerFunc {
	for i := len(mws) - 1; i >= 0; i-- {
		h = mws[i](h)
	}
	return h
}

// serveExec serves an exec request the short way; s.execShort is its
// handler within its own middleware.
func (s *Server) serveExec(w http.ResponseWriter, r *http.Request) {
	s.serveShort(w, r, execPath, "", s.execShort)
}
