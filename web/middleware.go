package web

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// logRequests writes one structured log line per request.
func (s *Server) logRequests() echo.MiddlewareFunc {
	return middleware.RequestLoggerWithConfig(middleware.RequestLoggerConfig{
		LogMethod: true, LogURI: true, LogStatus: true, LogLatency: true,
		LogRemoteIP: true, LogResponseSize: true, LogError: true,
		// HandleError runs the error handler first, so the status logged is
		// the one the client got.
		HandleError: true,
		LogValuesFunc: func(c echo.Context, v middleware.RequestLoggerValues) error {
			level := slog.LevelInfo
			if v.Status >= 500 {
				level = slog.LevelError
			}
			attrs := []slog.Attr{
				slog.String("method", v.Method), slog.String("uri", redactURI(v.URI)),
				slog.Int("status", v.Status), slog.Duration("latency", v.Latency),
				slog.Int64("bytes", v.ResponseSize), slog.String("remote_ip", v.RemoteIP),
			}
			if v.Error != nil && v.Status >= 500 {
				attrs = append(attrs, slog.String("error", v.Error.Error()))
			}
			s.log.LogAttrs(c.Request().Context(), level, "request", attrs...)
			return nil
		},
	})
}

// recoverPanics turns a panic in a handler into a 500 answer; the stack
// goes to the log, never to the client.
func (s *Server) recoverPanics() echo.MiddlewareFunc {
	return middleware.RecoverWithConfig(middleware.RecoverConfig{
		DisablePrintStack: true,
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			s.log.Error("panic", "uri", redactURI(c.Request().RequestURI), "error", err, "stack", string(stack))
			return fmt.Errorf("panic serving %s: %w", c.Request().URL.Path, err)
		},
	})
}

// securityHeaders keeps every page to this origin: no third-party scripts,
// styles or frames. Behind TLS, browsers are also told to use HTTPS only
// (HSTS), whatever the proxy in front says in X-Forwarded-Proto. The
// values are set as they are, shared by every answer, as they run on
// every request (net/http copies the header before it writes it).
func (s *Server) securityHeaders() echo.MiddlewareFunc {
	headers := map[string][]string{
		"X-Xss-Protection":        {"0"},
		"X-Content-Type-Options":  {"nosniff"},
		"X-Frame-Options":         {"DENY"},
		"Referrer-Policy":         {"no-referrer"},
		"Content-Security-Policy": {"default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"},
	}
	if s.secureCookies {
		headers["Strict-Transport-Security"] = []string{hsts}
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			h := c.Response().Header()
			for k, v := range headers {
				h[k] = v
			}
			return next(c)
		}
	}
}

// hsts is the Strict-Transport-Security header behind TLS: a year, for
// this host and the hosts under it.
const hsts = "max-age=31536000; includeSubDomains"

// noStore keeps every dynamic answer out of caches: pages show a
// learner's progress or an instructor's workshop, API answers depend on
// the learner's cookie, and a shared cache (a proxy, a CDN) must never
// hand one person's page to another. Static files are left to the assets
// handler, which marks the content-hashed ones immutable. Handlers may
// still set a header of their own.
func noStore() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if !isStatic(c.Request()) {
				h := c.Response().Header()
				h["Cache-Control"] = noStoreValue
				// Once, however many middlewares say so (the CSRF one does).
				c.Response().Before(func() {
					if !slices.Contains(h.Values("Vary"), "Cookie") {
						h.Add("Vary", "Cookie")
					}
				})
			}
			return next(c)
		}
	}
}

// noStoreValue is the Cache-Control of dynamic answers, shared.
var noStoreValue = []string{"no-store, private"}

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
	return middleware.CSRFWithConfig(middleware.CSRFConfig{
		// Called only for writes whose Sec-Fetch-Site is same-site or
		// cross-site.
		AllowSecFetchSiteFunc: func(c echo.Context) (bool, error) {
			return false, echo.NewHTTPError(http.StatusForbidden, "cross-site request blocked by CSRF (Sec-Fetch-Site: "+c.Request().Header.Get(echo.HeaderSecFetchSite)+")")
		},
		// Static files need no token, and a cookie on them would keep
		// caches from keeping them.
		Skipper:        func(c echo.Context) bool { return isStatic(c.Request()) },
		TokenLookup:    "header:X-CSRF-Token,form:_csrf",
		ContextKey:     csrfContextKey,
		CookieName:     s.csrfCookie(),
		CookiePath:     "/",
		CookieMaxAge:   7 * 24 * 3600,
		CookieSameSite: http.SameSiteLaxMode,
		CookieHTTPOnly: false,
		CookieSecure:   s.secureCookies,
	})
}

// csrfCookie is the name of the CSRF cookie: with the __Host- prefix
// behind TLS, so that it is Secure, host-only and for Path=/.
func (s *Server) csrfCookie() string {
	if s.secureCookies {
		return "__Host-_csrf"
	}
	return "_csrf"
}

// maxBody bounds every request body; the largest legitimate one is the
// playground form with its transcript (maxTranscriptBytes, escaped).
const maxBody = "256K"

// limitBodies answers 413 to a larger body before any handler reads it.
func limitBodies() echo.MiddlewareFunc {
	return middleware.BodyLimit(maxBody)
}

// compress gzips text responses; the lesson page shrinks to a fraction.
// The kept pages (pagecache.go) are compressed once, not per request:
// their routes are left to writePage.
func compress() echo.MiddlewareFunc {
	gzip := middleware.GzipWithConfig(middleware.GzipConfig{
		Level: 5, MinLength: 1024,
		// Server-sent events must reach the browser as they are written.
		Skipper: func(c echo.Context) bool { return strings.HasSuffix(c.Request().URL.Path, "/events") },
	})
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		zipped := gzip(next)
		return func(c echo.Context) error {
			if c.Request().Method == http.MethodGet && keptRoutes[c.Path()] {
				c.Set(selfGzipKey, true)
				return next(c)
			}
			return zipped(c)
		}
	}
}

// keptRoutes are the routes whose pages writePage gzips itself.
var keptRoutes = map[string]bool{"/": true, "/topics/:slug": true, "/race": true, "/race/present": true}

// selfGzipKey marks a request whose answer writePage may gzip itself.
const selfGzipKey = "locklab.gzip-self"

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
