package web

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// hostPrefix marks a cookie that browsers accept only over HTTPS, for the
// whole site (Path=/) and this host alone (no Domain): no plain-HTTP page
// and no sibling subdomain can set or overwrite it.
const hostPrefix = "__Host-"

// cookieName is the name a cookie of base has on this site: with the
// __Host- prefix when the site is served over TLS.
func (s *Server) cookieName(base string) string {
	if s.secureCookies {
		return hostPrefix + base
	}
	return base
}

// setCookie sets ck for the whole site, Secure and __Host- prefixed when the
// site is served over TLS. ck.Name is the base name.
func (s *Server) setCookie(c echo.Context, ck *http.Cookie) {
	ck.Name = s.cookieName(ck.Name)
	ck.Path = "/"
	ck.Domain = ""
	ck.Secure = s.secureCookies
	if ck.SameSite == 0 {
		ck.SameSite = http.SameSiteLaxMode
	}
	c.SetCookie(ck)
}

// cookiesKey is where a request's parsed cookies are kept in its context.
const cookiesKey = "locklab.cookies"

// cookie reads the request's cookie of base name. The Cookie header is
// parsed once per request: several handlers and middleware ask for the
// learner's and the workshop's cookies on every command.
func (s *Server) cookie(c echo.Context, base string) (*http.Cookie, error) {
	name := s.cookieName(base)
	jar, ok := c.Get(cookiesKey).(map[string]*http.Cookie)
	if !ok {
		cks := c.Request().Cookies()
		jar = make(map[string]*http.Cookie, len(cks))
		for _, ck := range cks {
			if _, dup := jar[ck.Name]; !dup { // the first wins, as in Request.Cookie
				jar[ck.Name] = ck
			}
		}
		c.Set(cookiesKey, jar)
	}
	if ck, ok := jar[name]; ok {
		return ck, nil
	}
	return nil, http.ErrNoCookie
}

// rememberCookie makes a cookie set during this request visible to later
// reads in it.
func (s *Server) rememberCookie(c echo.Context, ck *http.Cookie) {
	if jar, ok := c.Get(cookiesKey).(map[string]*http.Cookie); ok {
		jar[ck.Name] = ck
	}
	c.Request().AddCookie(ck)
}
