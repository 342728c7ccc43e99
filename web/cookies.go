package web

import (
	"net/http"
	"net/textproto"
	"slices"
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

// cookiesKey is where the cookies set during a request are kept in its
// context.
const cookiesKey = "locklab.cookies"

// cookieJar is the cookies set during a request, newest first: a later
// read in the same request finds them before the request's own.
type cookieJar struct{ set []*http.Cookie }

func (j *cookieJar) get(name string) *http.Cookie {
	for _, ck := range j.set {
		if ck.Name == name {
			return ck
		}
	}
	return nil
}

func (j *cookieJar) drop(name string) {
	j.set = slices.DeleteFunc(j.set, func(ck *http.Cookie) bool { return ck.Name == name })
}

// cookie returns the value of the request's cookie of base name, and
// whether it has one: one set during the request first, then the first
// of that name in the Cookie header.
func (s *Server) cookie(c echo.Context, base string) (string, bool) {
	name := s.cookieName(base)
	if jar, ok := c.Get(cookiesKey).(*cookieJar); ok {
		if ck := jar.get(name); ck != nil {
			return ck.Value, true
		}
	}
	return headerCookie(c.Request().Header["Cookie"], name)
}

// maxRequestCookies is net/http's default limit: a request with more
// cookies than this has none.
const maxRequestCookies = 3000

// headerCookie returns the value of the first cookie called name in the
// Cookie header lines, as Request.Cookie(name) reads it (the same
// trimming, quotes and refusal of bad values), but without making a
// Cookie of every pair: several handlers ask for a cookie or two on
// every request, and the others are only skipped. name is a cookie name
// this site uses, so a token.
func headerCookie(lines []string, name string) (string, bool) {
	if len(lines) == 0 {
		return "", false
	}
	n := 0
	for _, line := range lines {
		n += strings.Count(line, ";") + 1
	}
	if n > maxRequestCookies {
		return "", false
	}
	for _, line := range lines {
		var part string
		for len(line) > 0 {
			part, line, _ = strings.Cut(line, ";")
			k, v, _ := strings.Cut(textproto.TrimString(part), "=")
			if textproto.TrimString(k) != name {
				continue
			}
			if len(v) > 1 && v[0] == '"' && v[len(v)-1] == '"' {
				v = v[1 : len(v)-1]
			}
			if validCookieValue(v) {
				return v, true
			}
		}
	}
	return "", false
}

// validCookieValue reports whether every byte of v may be in a cookie
// value, by net/http's rule.
func validCookieValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if b := v[i]; b < 0x20 || b >= 0x7f || b == '"' || b == ';' || b == '\\' {
			return false
		}
	}
	return true
}

// rememberCookie makes a cookie set during this request visible to later
// reads in it.
func (s *Server) rememberCookie(c echo.Context, ck *http.Cookie) {
	jar, ok := c.Get(cookiesKey).(*cookieJar)
	if !ok {
		jar = &cookieJar{}
		c.Set(cookiesKey, jar)
	}
	jar.set = slices.Insert(jar.set, 0, ck)
	c.Request().AddCookie(ck)
}
