package web

import (
	"net/http"
	"slices"

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

// cookieJar is a request's cookies, parsed once: several handlers and
// middleware ask for the learner's and the workshop's cookies on every
// command. The first of a name wins, as in Request.Cookie; a cookie set
// during the request goes first. A request carries a few cookies, and a
// lookup reads them in order.
type cookieJar struct{ cookies []*http.Cookie }

func (j *cookieJar) get(name string) *http.Cookie {
	for _, ck := range j.cookies {
		if ck.Name == name {
			return ck
		}
	}
	return nil
}

func (j *cookieJar) drop(name string) {
	j.cookies = slices.DeleteFunc(j.cookies, func(ck *http.Cookie) bool { return ck.Name == name })
}

// cookie reads the request's cookie of base name. A request without a
// Cookie header costs nothing to read.
func (s *Server) cookie(c echo.Context, base string) (*http.Cookie, error) {
	name := s.cookieName(base)
	jar, ok := c.Get(cookiesKey).(*cookieJar)
	if !ok {
		if len(c.Request().Header["Cookie"]) == 0 {
			return nil, http.ErrNoCookie
		}
		jar = &cookieJar{cookies: c.Request().Cookies()}
		c.Set(cookiesKey, jar)
	}
	if ck := jar.get(name); ck != nil {
		return ck, nil
	}
	return nil, http.ErrNoCookie
}

// rememberCookie makes a cookie set during this request visible to later
// reads in it.
func (s *Server) rememberCookie(c echo.Context, ck *http.Cookie) {
	if jar, ok := c.Get(cookiesKey).(*cookieJar); ok {
		jar.cookies = slices.Insert(jar.cookies, 0, ck)
	}
	c.Request().AddCookie(ck)
}
