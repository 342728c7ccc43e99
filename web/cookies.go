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

// cookie reads the request's cookie of base name.
func (s *Server) cookie(c echo.Context, base string) (*http.Cookie, error) {
	return c.Cookie(s.cookieName(base))
}
