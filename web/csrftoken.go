package web

import (
	"crypto/rand"
	"net/http"
	"time"
)

// tokenLetters are what CSRF tokens are made of, as the CSRF middleware
// makes them: validCSRFToken accepts these and nothing else.
const tokenLetters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

// newCSRFToken makes a token of csrfTokenLength letters from the system's
// random source, each letter equally likely: a byte is used only below
// the largest multiple of 52 (208), so no letter comes up more often.
func newCSRFToken() string {
	var token [csrfTokenLength]byte
	var random [csrfTokenLength + csrfTokenLength/4]byte
	for n := 0; n < len(token); {
		_, _ = rand.Read(random[:]) // never fails (crypto/rand)
		for _, b := range random {
			if b >= 208 {
				continue
			}
			token[n] = tokenLetters[b%52]
			if n++; n == len(token) {
				break
			}
		}
	}
	return string(token[:])
}

// csrfSetCookie is the Set-Cookie value that gives a browser its CSRF
// token, as http.Cookie would write it: for the whole site, until
// csrfCookieAge from now, SameSite=Lax, readable by the page's scripts
// (they send it back in X-CSRF-Token), and Secure behind TLS. Its part
// after the token is the same for every browser within a second, and made
// once a second.
func (s *Server) csrfSetCookie(token string, now time.Time) string {
	tail := s.csrfCookieTail.Load()
	sec := now.Unix()
	if tail == nil || tail.sec != sec {
		ck := http.Cookie{Name: s.csrfCookie(), Value: "x", Path: "/", SameSite: http.SameSiteLaxMode,
			Expires: time.Unix(sec, 0).Add(csrfCookieAge * time.Second), Secure: s.secureCookies}
		v := ck.String()
		tail = &cookieTail{sec: sec, name: s.csrfCookie() + "=", tail: v[len(s.csrfCookie())+2:]}
		s.csrfCookieTail.Store(tail)
	}
	return tail.name + token + tail.tail
}

// cookieTail is a Set-Cookie value's name and the attributes after its
// value, as they are written during the second sec.
type cookieTail struct {
	sec  int64
	name string
	tail string
}
