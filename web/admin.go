package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/locklab/locklab/web/views"
)

// Instructors sign in with LOCKLAB_ADMIN_TOKEN, once per browser: the
// server then sets a cookie that holds an expiry and an HMAC of it, so the
// token itself is not kept in the browser. Scripts may send the token as
// "Authorization: Bearer <token>" instead.
const (
	adminCookie = "locklab_admin"
	adminTTL    = 12 * time.Hour
)

func (s *Server) adminEnabled() bool { return s.adminToken != "" }

func (s *Server) adminSig(key []byte, expiry int64) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("admin:" + strconv.FormatInt(expiry, 10) + ":" + s.adminToken))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// isAdmin reports whether the request comes from a signed-in instructor.
// A wrong Bearer token is an error (401), and so is a guess over the
// limits (429, or 503 if they cannot be checked): a client that sent a
// token should hear that it was refused, not get the sign-in page.
func (s *Server) isAdmin(c echo.Context) (bool, error) {
	if !s.adminEnabled() {
		return false, nil
	}
	if auth := c.Request().Header.Get("Authorization"); strings.HasPrefix(auth, "Bearer ") {
		ok, err := s.guessToken(c, func() bool { return s.rightToken(strings.TrimPrefix(auth, "Bearer ")) })
		if err != nil {
			return false, err
		}
		if !ok {
			c.Response().Header().Set("WWW-Authenticate", `Bearer realm="locklab admin"`)
			return false, echo.NewHTTPError(http.StatusUnauthorized, "wrong admin token")
		}
		return true, nil
	}
	return s.hasAdminCookie(c), nil
}

func (s *Server) rightToken(token string) bool {
	return subtle.ConstantTimeCompare([]byte(token), []byte(s.adminToken)) == 1
}

// hasAdminCookie reports whether the request holds a valid sign-in cookie.
// Its HMAC cannot be guessed, so a bad one is not counted as a guess.
func (s *Server) hasAdminCookie(c echo.Context) bool {
	v, ok := s.cookie(c, adminCookie)
	if !ok {
		return false
	}
	exp, sig, ok := strings.Cut(v, ".")
	expiry, err := strconv.ParseInt(exp, 10, 64)
	if !ok || err != nil || time.Now().Unix() > expiry {
		return false
	}
	key, err := s.secret.value(c.Request().Context())
	if err != nil {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(sig), []byte(s.adminSig(key, expiry))) == 1
}

// requireAdmin guards the instructor's pages. Without an admin token the
// feature is off and its pages do not exist.
func (s *Server) requireAdmin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !s.adminEnabled() {
			return echo.NewHTTPError(http.StatusNotFound, "workshop admin is off: set LOCKLAB_ADMIN_TOKEN to turn it on")
		}
		ok, err := s.isAdmin(c)
		if err != nil {
			return err
		}
		if !ok {
			if isAPI(c.Request()) || strings.HasSuffix(c.Path(), "/events") || strings.HasSuffix(c.Path(), ".csv") {
				return echo.NewHTTPError(http.StatusUnauthorized, "sign in as the instructor first")
			}
			return c.Redirect(http.StatusSeeOther, "/admin")
		}
		return next(c)
	}
}

func (s *Server) handleAdminLogin(c echo.Context) error {
	if !s.adminEnabled() {
		return echo.NewHTTPError(http.StatusNotFound, "workshop admin is off: set LOCKLAB_ADMIN_TOKEN to turn it on")
	}
	token := c.FormValue("token")
	ok, err := s.guessToken(c, func() bool { return s.rightToken(token) })
	if err != nil {
		return err
	}
	if !ok {
		m := views.AdminLogin{Page: s.page("Instructor sign-in", "", "admin"), Error: "That token is not right."}
		return render(c, http.StatusUnauthorized, views.AdminLoginPage(m))
	}
	key, err := s.secret.value(c.Request().Context())
	if err != nil {
		return err
	}
	expiry := time.Now().Add(adminTTL).Unix()
	s.setCookie(c, &http.Cookie{
		Name: adminCookie, Value: strconv.FormatInt(expiry, 10) + "." + s.adminSig(key, expiry),
		MaxAge: int(adminTTL / time.Second), HttpOnly: true, SameSite: http.SameSiteStrictMode,
	})
	return c.Redirect(http.StatusSeeOther, "/admin")
}

func (s *Server) handleAdminLogout(c echo.Context) error {
	s.setCookie(c, &http.Cookie{Name: adminCookie, Value: "", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	return c.Redirect(http.StatusSeeOther, "/admin")
}
