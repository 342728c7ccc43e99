package web

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/locklab/locklab/internal/linelog"
)

// observe writes one structured log line per request and counts it in
// the metrics, with one clock reading either side of the handler. The
// error handler runs first, so that the status logged and counted is the
// one the client got.
func (s *Server) observe() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			err := next(c)
			if err != nil {
				c.Error(err)
			}
			s.observed(c, start, err)
			// Handled here: the error must not reach the error handler twice.
			return nil
		}
	}
}

// observed logs and counts a request that started at start and has been
// answered; err is what its handler returned, if anything.
func (s *Server) observed(c echo.Context, start time.Time, err error) {
	end := time.Now()
	latency := end.Sub(start)
	req, res := c.Request(), c.Response()
	route := c.Path()
	if route == "" || res.Status == http.StatusNotFound && route == "/*" {
		route = "unmatched"
	}
	s.metrics.record(route, req.Method, res.Status, latency, res.Header().Get(echo.HeaderContentType) == sseContentType)
	level := slog.LevelInfo
	if res.Status >= 500 {
		level = slog.LevelError
	}
	// The handler is called directly: the logger's own path would look up
	// its caller's program counter, which an access log never shows.
	h := s.accessLog.Handler()
	if !h.Enabled(req.Context(), level) {
		return
	}
	attrs := [7]slog.Attr{
		slog.String("method", req.Method), slog.String("uri", redactURI(req.RequestURI)),
		slog.Int("status", res.Status), slog.Duration("latency", latency),
		slog.Int64("bytes", res.Size), slog.String("remote_ip", c.RealIP()),
	}
	n := 6
	if err != nil && res.Status >= 500 {
		attrs[n] = slog.String("error", err.Error())
		n++
	}
	if lh, ok := h.(*linelog.Handler); ok {
		_ = lh.LogAttrs(req.Context(), end, level, "request", attrs[:n]...)
		return
	}
	r := slog.NewRecord(end, level, "request", 0)
	r.AddAttrs(attrs[:n]...)
	_ = h.Handle(req.Context(), r)
}

// recoverPanics turns a panic in a handler into a 500 answer; the stack
// of the goroutine that panicked goes to the log (logPanic), never to the
// client. The 500 is written here, inside observe, so that the request is
// logged and counted like any other.
func (s *Server) recoverPanics() echo.MiddlewareFunc {
	return middleware.RecoverWithConfig(middleware.RecoverConfig{
		DisableStackAll: true,
		LogErrorFunc:    s.logPanic,
	})
}

// logPanic logs a handler's panic with its stack, and returns the error
// the client's 500 answer is made from.
func (s *Server) logPanic(c echo.Context, err error, stack []byte) error {
	s.log.Error("panic", "uri", redactURI(c.Request().RequestURI), "error", err, "stack", string(stack))
	return fmt.Errorf("panic serving %s: %w", c.Request().URL.Path, err)
}

// securityHeaders keeps every page to this origin: no third-party scripts,
// styles or frames. There is no X-XSS-Protection: browsers dropped the
// filter it controlled, and OWASP's advice is to leave it unset (or set
// to 0, for the old browsers whose filter itself could leak). Behind TLS, browsers are also told to use HTTPS only
// (HSTS), whatever the proxy in front says in X-Forwarded-Proto. The
// values are set as they are, shared by every answer, as they run on
// every request (net/http copies the header before it writes it).
func (s *Server) securityHeaders() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			s.setSecurityHeaders(c.Response().Header())
			return next(c)
		}
	}
}

// setSecurityHeaders sets the security headers in h.
func (s *Server) setSecurityHeaders(h http.Header) {
	h["X-Content-Type-Options"] = noSniffValue
	h["X-Frame-Options"] = denyValue
	h["Referrer-Policy"] = noReferrerValue
	h["Content-Security-Policy"] = cspValue
	if s.secureCookies {
		h["Strict-Transport-Security"] = hstsValue
	}
}

// The security headers' values.
var (
	noSniffValue    = []string{"nosniff"}
	denyValue       = []string{"DENY"}
	noReferrerValue = []string{"no-referrer"}
	cspValue        = []string{"default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"}
	hstsValue       = []string{hsts}
)

// hsts is the Strict-Transport-Security header behind TLS: a year, for
// this host and the hosts under it.
const hsts = "max-age=31536000; includeSubDomains"

// noStore keeps every dynamic answer out of caches: pages show a
// learner's progress or an instructor's workshop, API answers depend on
// the learner's cookie, and a shared cache (a proxy, a CDN) must never
// hand one person's page to another. Static files are left to the assets
// handler, which marks the content-hashed ones immutable. Handlers may
// still set a header of their own. The values are shared, as the security
// headers' are; one that a handler adds to (h.Add) is copied first, as
// each has no room to grow.
func noStore() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if !isStatic(c.Request()) {
				h := c.Response().Header()
				h["Cache-Control"] = noStoreValue
				h["Vary"] = varyCookie
			}
			return next(c)
		}
	}
}

// noStoreValue is the Cache-Control of dynamic answers, and varyCookie
// their Vary, shared.
var (
	noStoreValue = []string{"no-store, private"}
	varyCookie   = []string{echo.HeaderCookie}
)

// varyCookieOnce drops the second Vary: Cookie that Echo's CSRF
// middleware adds to the one noStore set, before next runs.
func varyCookieOnce(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		if v := h[echo.HeaderVary]; len(v) > 1 {
			h[echo.HeaderVary] = slices.Compact(v)
		}
		return next(c)
	}
}

func isStatic(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/static/") }

// csrfContextKey is where the CSRF middleware leaves the request's token.
const csrfContextKey = "csrf"

// csrf refuses state-changing requests from other sites. Browsers are
// checked by Sec-Fetch-Site: only same-origin (and none, a navigation the
// user typed) may write; same-site is refused too, not left to the token,
// because a sibling subdomain can plant a cookie for ours and then send
// its value. Other clients use the double-submit token: the value of the
// _csrf cookie (__Host-_csrf behind TLS, which no other host can set) sent
// back in X-CSRF-Token or the _csrf form field.
func (s *Server) csrf() echo.MiddlewareFunc {
	tokens := middleware.CSRFWithConfig(middleware.CSRFConfig{
		// Called only for writes whose Sec-Fetch-Site is same-site or
		// cross-site.
		AllowSecFetchSiteFunc: func(c echo.Context) (bool, error) {
			return false, echo.NewHTTPError(http.StatusForbidden, "cross-site request blocked by CSRF (Sec-Fetch-Site: "+c.Request().Header.Get(echo.HeaderSecFetchSite)+")")
		},
		TokenLookup:    "header:X-CSRF-Token,form:_csrf",
		TokenLength:    csrfTokenLength,
		ContextKey:     csrfContextKey,
		CookieName:     s.csrfCookie(),
		CookiePath:     "/",
		CookieMaxAge:   csrfCookieAge,
		CookieSameSite: http.SameSiteLaxMode,
		CookieHTTPOnly: false,
		CookieSecure:   s.secureCookies,
		ErrorHandler:   s.csrfRefusal,
	})
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			// Static files need no token, and a cookie on them would keep
			// caches from keeping them.
			if isStatic(c.Request()) {
				return next(c)
			}
			token, ok := s.ownToken(c)
			if safeMethod(c.Request().Method) {
				s.readToken(c, token, ok)
				return next(c)
			}
			if s.tokenMatches(c, token, ok) {
				return next(c)
			}
			return tokens(varyCookieOnce(next))(c)
		}
	}
}

// csrfRefusal says what a write without a matching token lacks and where
// the token goes. The middleware's own words name only the last place it
// looked ("in the form parameter"), which misleads a client of the JSON
// API, where the token goes in X-CSRF-Token. The status is the
// middleware's: 400 for no token, 403 for one that does not match.
func (s *Server) csrfRefusal(err error, _ echo.Context) error {
	var he *echo.HTTPError
	if !errors.As(err, &he) {
		return err
	}
	where := "the value of the " + s.csrfCookie() + " cookie in the X-CSRF-Token header (or the _csrf form field)"
	switch he.Code {
	case http.StatusBadRequest:
		return echo.NewHTTPError(http.StatusBadRequest, "missing csrf token: send "+where)
	case http.StatusForbidden:
		return echo.NewHTTPError(http.StatusForbidden, "invalid csrf token: send "+where)
	}
	return err
}

// ownToken returns the browser's CSRF token, and whether it has one. A
// CSRF cookie that does not have the shape of a token this site makes is
// dropped, and the browser has none: such a token would be written into
// pages, and a sibling host could have planted it.
func (s *Server) ownToken(c echo.Context) (string, bool) {
	v, ok := s.cookie(c, csrfCookieBase)
	if ok && !validCSRFToken(v) {
		dropCookie(c, s.csrfCookie())
		return "", false
	}
	return v, ok
}

// tokenMatches admits a write from a client without Sec-Fetch-Site whose
// X-CSRF-Token is its cookie's token, as the CSRF middleware would, but
// without setting the cookie again on every write: it was set to last
// csrfCookieAge when it was made. Anything else is the middleware's to
// judge (a browser's Sec-Fetch-Site, the form field, a mismatch). token
// and ok are the browser's own token (ownToken).
func (s *Server) tokenMatches(c echo.Context, token string, ok bool) bool {
	req := c.Request()
	if sentSecFetchSite(req) {
		return false
	}
	sent := req.Header.Get(echo.HeaderXCSRFToken)
	if !ok || sent == "" || subtle.ConstantTimeCompare([]byte(sent), []byte(token)) != 1 {
		return false
	}
	setCSRF(c, token)
	return true
}

// readToken gives a read (a safe method, which is never checked) the
// token its page's forms and scripts send back. A browser that sends
// Sec-Fetch-Site has its writes checked by that header, and its pages get
// the CSRF middleware's placeholder. Otherwise the browser's token is
// kept as it was set (it lasts csrfCookieAge), or a new one is made and
// set. Writes go through the CSRF middleware itself. token and ok are the
// browser's own token (ownToken).
func (s *Server) readToken(c echo.Context, token string, ok bool) {
	switch {
	case sentSecFetchSite(c.Request()):
		setCSRF(c, middleware.CSRFUsingSecFetchSite)
	case ok:
		setCSRF(c, token)
	default:
		token := newCSRFToken()
		c.Response().Header().Add(echo.HeaderSetCookie, s.csrfSetCookie(token, time.Now()))
		setCSRF(c, token)
	}
}

// sentSecFetchSite reports whether the request says where it comes from,
// as Header.Get(echo.HeaderSecFetchSite) != "" does, without
// canonicalizing a name that is canonical already.
func sentSecFetchSite(r *http.Request) bool {
	v := r.Header[echo.HeaderSecFetchSite]
	return len(v) > 0 && v[0] != ""
}

// csrfTokenLength is the length of a CSRF token: letters, as the CSRF
// middleware makes them.
const csrfTokenLength = 32

// csrfCookieAge is how long a CSRF cookie lasts. It is set once, when the
// browser first comes without one, and not renewed on every page (which
// would cost a Set-Cookie per answer), so it lasts long: the token guards
// nothing on its own, only its match with what a form sends.
const csrfCookieAge = 400 * 24 * 3600

// validCSRFToken reports whether v has the shape of a token the CSRF
// middleware makes: csrfTokenLength ASCII letters.
func validCSRFToken(v string) bool {
	if len(v) != csrfTokenLength {
		return false
	}
	for i := 0; i < len(v); i++ {
		if b := v[i] | 0x20; b < 'a' || b > 'z' {
			return false
		}
	}
	return true
}

func safeMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return false
}

// csrfCookie is the name of the CSRF cookie: with the __Host- prefix
// behind TLS, so that it is Secure, host-only and for Path=/.
func (s *Server) csrfCookie() string { return s.cookieName(csrfCookieBase) }

// csrfCookieBase is the CSRF cookie's name without the prefix.
const csrfCookieBase = "_csrf"

// maxBody bounds every request body; the largest legitimate one is the
// playground form with its transcript (maxTranscriptBytes, escaped).
const maxBody = "256K"

// limitBodies answers 413 to a larger body before any handler reads it.
// A request without a body (net/http gives it http.NoBody) has nothing
// to limit.
func limitBodies() echo.MiddlewareFunc {
	return middleware.BodyLimitWithConfig(middleware.BodyLimitConfig{
		Limit:   maxBody,
		Skipper: func(c echo.Context) bool { return c.Request().Body == http.NoBody },
	})
}

// compress gzips text responses; the lesson page shrinks to a fraction.
// The kept pages (pagecache.go) are compressed once, not per request:
// their routes are left to writePage.
func compress() echo.MiddlewareFunc {
	return middleware.GzipWithConfig(middleware.GzipConfig{
		// Level 1: echo resets a pooled writer for every response, and
		// at higher levels each reset clears some 600 KB of tables, which
		// cost more than the compression of a JSON reply.
		Level: 1, MinLength: 1024,
		// Server-sent events must reach the browser as they are written.
		Skipper: func(c echo.Context) bool {
			return selfGzipped(c) || strings.HasSuffix(c.Request().URL.Path, "/events")
		},
	})
}

// selfGzipped reports whether the request's answer is a kept page that
// writePage gzips itself (from its kept compressed parts), rather than the
// gzip middleware: a GET of one of the routes whose pages are kept. A
// HEAD is answered as the GET would be, so that its headers
// (Content-Encoding, Vary) are the GET's.
func selfGzipped(c echo.Context) bool {
	if m := c.Request().Method; m != http.MethodGet && m != http.MethodHead {
		return false
	}
	switch c.Path() {
	case "/", "/topics/:slug", "/race", "/race/present":
		return true
	}
	return false
}

// stripTrailingSlash sends /topics/x/ to /topics/x with a redirect, so each
// page has one address. It only ever redirects to a plain path on this
// site: anything a browser could read as another host (//evil.com,
// /\evil.com, a tab or newline it would drop, the same encoded once or
// twice) gets the 404 page instead.
func stripTrailingSlash() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			u := c.Request().URL
			if len(u.Path) > 1 && strings.HasSuffix(u.Path, "/") && !strings.HasPrefix(u.Path, "/api/") {
				target := strings.TrimRight(u.EscapedPath(), "/")
				if !localPath(target) || !printable(u.RawQuery) || strings.Contains(u.RawQuery, `\`) {
					return echo.ErrNotFound
				}
				if u.RawQuery != "" {
					target += "?" + u.RawQuery
				}
				return c.Redirect(http.StatusMovedPermanently, target)
			}
			return next(c)
		}
	}
}

// localPath reports whether p, an escaped path, is safe as a redirect's
// Location: a clean absolute path on this site, in printable ASCII, with
// no backslash, no empty, "." or ".." segment, and still so after
// percent-decoding it (up to three times, for double-encoded tricks).
// Browsers drop tabs and newlines and read a backslash as a slash, so
// anything near those is refused rather than normalized.
func localPath(p string) bool {
	for range 3 {
		if !strings.HasPrefix(p, "/") || !printable(p) || strings.Contains(p, `\`) || path.Clean(p) != p {
			return false
		}
		d, err := url.PathUnescape(p)
		if err != nil {
			return false
		}
		if d == p {
			return true
		}
		p = d
	}
	return false
}

// printable reports whether s is all printable ASCII, without spaces.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}
