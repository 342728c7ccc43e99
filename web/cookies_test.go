package web

import (
	"net/http"
	"strings"
	"testing"
)

// stdlibCookie is what net/http makes of the header lines for name.
func stdlibCookie(lines []string, name string) (string, bool) {
	r := &http.Request{Header: http.Header{"Cookie": lines}}
	ck, err := r.Cookie(name)
	if err != nil {
		return "", false
	}
	return ck.Value, true
}

// cookieCases are Cookie headers that net/http reads in ways a quick
// reader could get wrong.
var cookieCases = [][]string{
	nil,
	{""},
	{"locklab_learner=abc"},
	{"  locklab_learner = abc ; _csrf=x"},
	{"_csrf=x; locklab_learner=first; locklab_learner=second"},
	{`locklab_learner="quoted"`},
	{`locklab_learner="`},
	{`locklab_learner=""`},
	{`locklab_learner="a"b"; locklab_learner=after`},
	{"locklab_learner=bad value\\; locklab_learner=good"},
	{"locklab_learner=has space"},
	{"locklab_learner=caf\xc3\xa9; locklab_learner=plain"},
	{"locklab_learner=tab\there"},
	{"locklab_learner"},
	{"locklab_learner="},
	{"locklab_learner=a=b"},
	{";;; ; locklab_learner=x;;"},
	{"Locklab_learner=wrongcase"},
	{"xlocklab_learner=prefix; locklab_learnerx=suffix"},
	{"a=1", "locklab_learner=second-line"},
	{"locklab_learner=first-line", "locklab_learner=second-line"},
	{"\tlocklab_learner=tabbed\t"},
	{"locklab_learner=\x7f"},
	{"locklab_learner=" + strings.Repeat("v", 5000)},
	{strings.Repeat("a=1;", 2999) + "locklab_learner=at-the-limit"},
	{strings.Repeat("a=1;", 3000) + "locklab_learner=over-the-limit"},
	{strings.Repeat("a=1;", 1500), strings.Repeat("b=1;", 1500) + "locklab_learner=over-across-lines"},
}

// TestHeaderCookieReadsAsNetHTTP: the site's cookie reader gives what
// Request.Cookie gives, for every odd header above and every name the
// site reads.
func TestHeaderCookieReadsAsNetHTTP(t *testing.T) {
	names := []string{learnerCookie, csrfCookieBase, hostPrefix + learnerCookie, workshopCookie}
	for _, lines := range cookieCases {
		for _, name := range names {
			got, gotOK := headerCookie(lines, name)
			want, wantOK := stdlibCookie(lines, name)
			if got != want || gotOK != wantOK {
				t.Errorf("headerCookie(%.80q, %q) = %.40q, %v; net/http says %.40q, %v", lines, name, got, gotOK, want, wantOK)
			}
		}
	}
	if v, ok := headerCookie([]string{"_csrf=x; locklab_learner=first; locklab_learner=second"}, learnerCookie); v != "first" || !ok {
		t.Errorf("the first of a name = %q, %v; want first", v, ok) // a check of the check
	}
}

// FuzzHeaderCookie compares the reader with net/http on any header.
func FuzzHeaderCookie(f *testing.F) {
	for _, lines := range cookieCases {
		if len(lines) == 1 && len(lines[0]) < 200 {
			f.Add(lines[0], "")
		}
	}
	f.Add("a=1; locklab_learner=x", "locklab_learner=y")
	f.Fuzz(func(t *testing.T, first, second string) {
		lines := []string{first}
		if second != "" {
			lines = append(lines, second)
		}
		got, gotOK := headerCookie(lines, learnerCookie)
		want, wantOK := stdlibCookie(lines, learnerCookie)
		if got != want || gotOK != wantOK {
			t.Errorf("headerCookie(%q) = %q, %v; net/http says %q, %v", lines, got, gotOK, want, wantOK)
		}
	})
}

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

// BenchmarkCookieRead reads the learner's cookie from a browser's header
// and from the largest header a request may carry (64 KB, the cookie
// last), the site's way and net/http's (which parses every pair).
func BenchmarkCookieRead(b *testing.B) {
	browser := []string{"_csrf=WgSYPbgCiHtbKKttXdIpkJsxdFRMyrkV; locklab_learner=Ab3dEf6hIj9kLm2nOp5qRs"}
	huge := []string{strings.Repeat("a=bcdefghijklmnopqrs; ", 2900) + "locklab_learner=Ab3dEf6hIj9kLm2nOp5qRs"}
	for _, h := range []struct {
		name  string
		lines []string
	}{{"browser", browser}, {"64KB", huge}} {
		b.Run(h.name+"/ours", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := headerCookie(h.lines, learnerCookie); !ok {
					b.Fatal("no cookie")
				}
			}
		})
		b.Run(h.name+"/net-http", func(b *testing.B) {
			b.ReportAllocs()
			r := &http.Request{Header: http.Header{"Cookie": h.lines}}
			for b.Loop() {
				if len(r.Cookies()) == 0 {
					b.Fatal("no cookies")
				}
			}
		})
	}
}
