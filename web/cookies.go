package web

import (
	"net/http"
	"strings"

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

// cookie returns the value of the request's cookie of base name, and
// whether it has one: the first of that name in its Cookie header, as
// Request.Cookie reads it. A cookie set during the request
// (rememberCookie) has taken the browser's place there.
func (s *Server) cookie(c echo.Context, base string) (string, bool) {
	ck, err := c.Request().Cookie(s.cookieName(base))
	if err != nil {
		return "", false
	}
	return ck.Value, true
}

// rememberCookie makes a cookie set during this request the one that
// later reads in it find, in place of any of that name the browser sent.
func (s *Server) rememberCookie(c echo.Context, ck *http.Cookie) {
	dropCookie(c, ck.Name)
	c.Request().AddCookie(ck)
}

// dropCookie removes the cookie called name from the request, for the
// handlers and middleware after this one.
func dropCookie(c echo.Context, name string) {
	req := c.Request()
	var kept []string
	for _, ck := range req.Cookies() {
		if ck.Name != name {
			kept = append(kept, ck.String())
		}
	}
	req.Header.Del("Cookie")
	if len(kept) > 0 {
		req.Header.Set("Cookie", strings.Join(kept, "; "))
	}
}
