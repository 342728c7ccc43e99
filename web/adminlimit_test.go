package web

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locklab/locklab/limit"
)

// fakeMeter is a Meter whose units come back only when the test says so.
type fakeMeter struct {
	mu    sync.Mutex
	burst int
	used  map[string]int
	down  bool
	// latency is how long Available takes, as a round trip to Redis does.
	latency time.Duration
}

func newFakeMeter(burst int) *fakeMeter { return &fakeMeter{burst: burst, used: map[string]int{}} }

func (m *fakeMeter) Available(_ context.Context, key string) (int, error) {
	m.mu.Lock()
	down, have := m.down, m.burst-m.used[key]
	m.mu.Unlock()
	// The answer is read at once and arrives later, as from Redis.
	time.Sleep(m.latency)
	if down {
		return 0, errors.New("meter down")
	}
	return have, nil
}

func (m *fakeMeter) Take(_ context.Context, key string, n int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return errors.New("meter down")
	}
	m.used[key] = min(m.used[key]+n, m.burst)
	return nil
}

// refill gives every key its burst back, as a minute's wait would.
func (m *fakeMeter) refill() {
	m.mu.Lock()
	defer m.mu.Unlock()
	clear(m.used)
}

// TestAdminGuessLimit checks the limit on wrong admin tokens: by the form
// and by the Bearer header on every admin route, per address (IPv6 by
// /64) and overall; the right token is refused too once over it, until
// the failures are forgiven; successes cost nothing; and a meter that
// fails refuses every guess.
func TestAdminGuessLimit(t *testing.T) {
	addr, all := newFakeMeter(3), newFakeMeter(5)
	cfg := testConfig(t)
	cfg.AdminToken = adminToken
	cfg.AdminLimits = limit.AdminLimits{PerAddress: addr, Overall: all, AddressPerMinute: 5, OverallPerMinute: 50, AddressBurst: 3}
	cfg.TrustedProxies = nil
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// req sends a request from the client address ip (httptest's
	// RemoteAddr is what RealIP reads without trusted proxies).
	req := func(ip, method, path, bearer string, form url.Values) *httptest.ResponseRecorder {
		t.Helper()
		r := httptest.NewRequest(method, path, strings.NewReader(form.Encode()))
		r.RemoteAddr = ip
		r.Header.Set("Sec-Fetch-Site", "same-origin")
		if form != nil {
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		if bearer != "" {
			r.Header.Set("Authorization", "Bearer "+bearer)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		return w
	}
	const v4, v6a, v6b, v6other = "192.0.2.7:1234", "[2001:db8:1:2::a]:1234", "[2001:db8:1:2:ffff::b]:1234", "[2001:db8:1:3::a]:1234"

	// Successes are free.
	for range 10 {
		if w := req(v4, "GET", "/admin", adminToken, nil); w.Code != 200 {
			t.Fatalf("GET /admin with the right token = %d", w.Code)
		}
	}
	// A wrong Bearer is a 401 on every admin route, and counts.
	for _, p := range []string{"/admin", "/admin/workshops/ABCDEF", "/admin/workshops/ABCDEF/export.csv"} {
		if w := req(v4, "GET", p, "wrong-token-0123456789", nil); w.Code != 401 {
			t.Errorf("GET %s with a wrong token = %d; want 401", p, w.Code)
		}
	}
	// The fourth is refused before the token is looked at, even the
	// right one, with Retry-After; the form too.
	for _, tok := range []string{"wrong-token-0123456789", adminToken} {
		w := req(v4, "GET", "/admin", tok, nil)
		if w.Code != 429 || w.Header().Get("Retry-After") != "12" {
			t.Errorf("guess over the limit = %d Retry-After %q; want 429 12", w.Code, w.Header().Get("Retry-After"))
		}
	}
	if w := req(v4, "POST", "/admin/login", "", url.Values{"token": {adminToken}}); w.Code != 429 {
		t.Errorf("form sign-in over the limit = %d; want 429", w.Code)
	}
	// A signed-in instructor's cookie is no guess and still works.
	w := req("198.51.100.1:1", "POST", "/admin/login", "", url.Values{"token": {adminToken}})
	if w.Code != http.StatusSeeOther {
		t.Fatalf("form sign-in from another address = %d", w.Code)
	}
	ck := w.Result().Cookies()
	r := httptest.NewRequest("GET", "/admin", nil)
	r.RemoteAddr = v4
	for _, c := range ck {
		r.AddCookie(c)
	}
	w = httptest.NewRecorder()
	s.ServeHTTP(w, r)
	if w.Code != 200 || !strings.Contains(w.Body.String(), "Workshops") {
		t.Errorf("cookie sign-in from the limited address = %d; want 200", w.Code)
	}

	// IPv6: one /64 is one address.
	for range 3 {
		req(v6a, "POST", "/admin/login", "", url.Values{"token": {"nope-0123456789abcdef"}})
	}
	if w := req(v6b, "GET", "/admin", adminToken, nil); w.Code != 429 {
		t.Errorf("another address in the same /64 = %d; want 429", w.Code)
	}
	// That made 6 failures overall (3 + 3): past the overall 5, every
	// address that has failed waits, even one wrong guess from a fresh /64;
	// but a /64 that never failed signs in: guessers cannot lock the
	// instructor out.
	if w := req(v6other, "GET", "/admin", adminToken, nil); w.Code != 200 {
		t.Errorf("an address that never failed, over the overall limit = %d; want 200", w.Code)
	}
	req(v6other, "GET", "/admin", "wrong-token-0123456789", nil)
	if w := req(v6other, "GET", "/admin", adminToken, nil); w.Code != 429 || w.Header().Get("Retry-After") != "2" {
		t.Errorf("an address with a failure, over the overall limit = %d Retry-After %q; want 429 2", w.Code, w.Header().Get("Retry-After"))
	}

	// A minute later all is forgiven.
	addr.refill()
	all.refill()
	if w := req(v4, "GET", "/admin", adminToken, nil); w.Code != 200 {
		t.Errorf("after the refill = %d; want 200", w.Code)
	}

	// Fails closed: with the meter down nobody may guess, not even right.
	addr.down = true
	for _, tok := range []string{"wrong-token-0123456789", adminToken} {
		if w := req(v4, "GET", "/admin", tok, nil); w.Code != 503 || w.Header().Get("Retry-After") == "" {
			t.Errorf("guess with the meter down = %d; want 503 with Retry-After", w.Code)
		}
	}
	if w := req(v4, "POST", "/admin/login", "", url.Values{"token": {adminToken}}); w.Code != 503 {
		t.Errorf("form sign-in with the meter down = %d; want 503", w.Code)
	}
}

func TestAddressGroup(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"192.0.2.7", "192.0.2.7"},
		{"::ffff:192.0.2.7", "192.0.2.7"},
		{"2001:db8:1:2::a", "2001:db8:1:2::/64"},
		{"2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"},
		{"not-an-ip", "not-an-ip"},
	} {
		if got := addressGroup(tt.in); got != tt.want {
			t.Errorf("addressGroup(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

// TestWrongBearerWithoutLimits checks that a wrong token is a 401 even
// with no limits configured (it used to be the sign-in page, a 200).
func TestWrongBearerWithoutLimits(t *testing.T) {
	cfg := testConfig(t)
	cfg.AdminToken = adminToken
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/admin", nil)
	r.Header.Set("Authorization", "Bearer wrong-token-0123456789")
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	if w.Code != 401 || w.Header().Get("WWW-Authenticate") == "" {
		t.Errorf("GET /admin with a wrong token = %d, WWW-Authenticate %q; want 401 with a challenge", w.Code, w.Header().Get("WWW-Authenticate"))
	}
}

// TestAdminGuessesAtOnce sends many wrong tokens at the same moment: each
// is counted before the next is checked, so no more get an answer than the
// limit allows, however many arrive together.
func TestAdminGuessesAtOnce(t *testing.T) {
	const burst, guesses = 3, 40
	cfg := testConfig(t)
	cfg.AdminToken = adminToken
	meter := newFakeMeter(burst)
	meter.latency = time.Millisecond // a window for guesses to slip through
	cfg.AdminLimits = limit.AdminLimits{PerAddress: meter, AddressPerMinute: 5}
	cfg.TrustedProxies = nil
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	start := make(chan struct{})
	for range guesses {
		wg.Go(func() {
			r := httptest.NewRequest("GET", "/admin", nil)
			r.RemoteAddr = "192.0.2.7:1234"
			r.Header.Set("Authorization", "Bearer wrong-token-0123456789")
			w := httptest.NewRecorder()
			<-start
			s.ServeHTTP(w, r)
			mu.Lock()
			codes[w.Code]++
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	if codes[http.StatusUnauthorized] != burst || codes[http.StatusTooManyRequests] != guesses-burst {
		t.Errorf("%d wrong tokens at once got %v; want %d answered 401 and the rest 429", guesses, codes, burst)
	}
}

// TestMetricsGuessesApart: wrong metrics tokens count against limits of
// their own, kept apart from the admin token's even on the same meters,
// so that a misconfigured scraper does not lock the instructor out.
func TestMetricsGuessesApart(t *testing.T) {
	addr, all := newFakeMeter(3), newFakeMeter(5)
	cfg := testConfig(t)
	cfg.AdminToken = adminToken
	cfg.MetricsToken = "metrics-token-0123456789abcdef"
	cfg.AdminLimits = limit.AdminLimits{PerAddress: addr, Overall: all, AddressPerMinute: 5, OverallPerMinute: 50, AddressBurst: 3}
	cfg.MetricsLimits = cfg.AdminLimits
	cfg.MetricsLimits.Name = "metrics"
	cfg.TrustedProxies = nil
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req := func(path, bearer string) int {
		r := httptest.NewRequest("GET", path, nil)
		r.RemoteAddr = "192.0.2.7:1234"
		r.Header.Set("Authorization", "Bearer "+bearer)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		return w.Code
	}
	for range 6 {
		req("/metrics", "wrong-token-0123456789")
	}
	if code := req("/metrics", cfg.MetricsToken); code != 429 {
		t.Errorf("the right metrics token after 6 wrong ones = %d; want 429, the metrics limit", code)
	}
	if code := req("/admin", adminToken); code != 200 {
		t.Errorf("the admin token after 6 wrong metrics tokens = %d; want 200: the limits are apart", code)
	}
}
