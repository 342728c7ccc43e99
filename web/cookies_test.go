package web

import (
	"net/http"
	"testing"
)

// TestCookieSetDuringARequestComesFirst: a cookie the request set (a new
// learner's) is read before one of the same name that the browser sent.
func TestCookieSetDuringARequestComesFirst(t *testing.T) {
	s, err := New(testConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set("Cookie", learnerCookie+"=sent-by-the-browser")
	c := s.echo.NewContext(req, nil)
	if v, ok := s.cookie(c, learnerCookie); v != "sent-by-the-browser" || !ok {
		t.Fatalf("before = %q, %v; want the browser's", v, ok)
	}
	s.rememberCookie(c, &http.Cookie{Name: learnerCookie, Value: "set-now"})
	if v, ok := s.cookie(c, learnerCookie); v != "set-now" || !ok {
		t.Errorf("after = %q, %v; want the one set during the request", v, ok)
	}
	dropCookie(c, learnerCookie)
	if v, ok := s.cookie(c, learnerCookie); ok {
		t.Errorf("after dropping it = %q; want none", v)
	}
}
