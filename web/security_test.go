package web

import (
	"encoding/base64"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/limit"
	"github.com/locklab/locklab/luaredis"
	"github.com/locklab/locklab/playground"
)

// TestSessionCookie checks the learner's session cookie: 128 random bits,
// HttpOnly, SameSite=Lax, and over TLS Secure with the __Host- prefix.
func TestSessionCookie(t *testing.T) {
	for _, tt := range []struct {
		name   string
		secure bool
		want   string
	}{
		{"plain HTTP", false, "locklab_learner"},
		{"behind TLS", true, "__Host-locklab_learner"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(t)
			cfg.SecureCookies = tt.secure
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewUnstartedServer(s)
			if tt.secure {
				ts.StartTLS()
			} else {
				ts.Start()
			}
			t.Cleanup(ts.Close)
			seen := map[string]bool{}
			for range 2 {
				// A reader gets no id; the first command gives one.
				resp, err := ts.Client().Get(ts.URL + "/topics/distributed-locks")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				for _, c := range resp.Cookies() {
					if strings.HasSuffix(c.Name, "locklab_learner") {
						t.Errorf("a page view set a learner cookie: %v", c)
					}
				}
				req, _ := http.NewRequest("POST", ts.URL+"/api/playground/reset", nil)
				req.Header.Set("Sec-Fetch-Site", "same-origin")
				resp, err = ts.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				var ck *http.Cookie
				for _, c := range resp.Cookies() {
					if strings.HasSuffix(c.Name, "locklab_learner") {
						ck = c
					}
				}
				if ck == nil {
					t.Fatalf("no learner cookie in %v", resp.Header["Set-Cookie"])
				}
				raw, err := base64.RawURLEncoding.DecodeString(ck.Value)
				switch {
				case ck.Name != tt.want:
					t.Errorf("cookie name %q; want %q", ck.Name, tt.want)
				case err != nil || len(raw) != 16:
					t.Errorf("cookie value %q is not 128 bits", ck.Value)
				case !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Path != "/" || ck.Domain != "":
					t.Errorf("cookie %v; want HttpOnly, SameSite=Lax, Path=/, no Domain", ck)
				case ck.Secure != tt.secure:
					t.Errorf("cookie Secure = %v; want %v", ck.Secure, tt.secure)
				case seen[ck.Value]:
					t.Errorf("two visitors got the same id %q", ck.Value)
				}
				seen[ck.Value] = true
			}

			// The cookie is read back under the same name: a learner keeps
			// their sandbox from one request to the next.
			jar, _ := cookiejar.New(nil)
			client := ts.Client()
			client.Jar = jar
			l := &learnerClient{t: t, base: ts.URL, http: client}
			if code, _, body := l.exec("A", "SET k v"); code != 200 {
				t.Fatalf("SET = %d %s", code, body)
			}
			if _, r, _ := l.exec("A", "GET k"); r.Output != `"v"` {
				t.Errorf("GET k = %q; want \"v\" (the session did not stick)", r.Output)
			}
		})
	}
}

// TestAddressLimitIgnoresForwardedFor checks that a client cannot dodge the
// per-address limit by making up X-Forwarded-For, and that a trusted proxy's
// header is believed.
func TestAddressLimitIgnoresForwardedFor(t *testing.T) {
	post := func(base, forwardedFor string) int {
		req, _ := http.NewRequest("POST", base+"/api/playground/reset", nil)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		req.Header.Set("X-Forwarded-For", forwardedFor)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") == "" {
			t.Error("429 without Retry-After")
		}
		return resp.StatusCode
	}
	serve := func(trusted ...netip.Prefix) string {
		cfg := testConfig(t)
		cfg.Limits = limit.Limits{WritesPerAddress: limit.NewMemoryLimiter(1, 3)}
		cfg.TrustedProxies = trusted
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return newServerFor(t, s)
	}

	direct := serve()
	limited := 0
	for i := range 10 {
		if post(direct, "192.0.2."+strconv.Itoa(i+1)) == http.StatusTooManyRequests {
			limited++
		}
	}
	if limited < 6 {
		t.Errorf("10 posts from one address with made-up X-Forwarded-For: %d limited; want at least 6", limited)
	}

	proxied := serve(netip.MustParsePrefix("127.0.0.0/8"))
	for i := range 10 {
		if code := post(proxied, "192.0.2."+strconv.Itoa(i+1)+", 127.0.0.1"); code != 200 {
			t.Errorf("post %d from a distinct client behind a trusted proxy = %d; want 200", i, code)
		}
	}
	limited = 0
	for range 10 {
		if post(proxied, "198.51.100.7") == http.StatusTooManyRequests {
			limited++
		}
	}
	if limited < 6 {
		t.Errorf("10 posts from one client behind a trusted proxy: %d limited; want at least 6", limited)
	}
}

// TestScriptRateLimit checks that scripts have their own, lower limit: a
// learner sending EVAL after EVAL is stopped while plain commands, and other
// learners' scripts, go on.
func TestScriptRateLimit(t *testing.T) {
	cfg := testConfig(t)
	cfg.Limits = limit.Limits{Scripts: limit.NewMemoryLimiter(1, 2), Writes: limit.NewMemoryLimiter(100, 200)}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	base := newServerFor(t, s)
	a, b := newLearner(t, base), newLearner(t, base)
	limited := 0
	for _, line := range []string{`EVAL "return 1" 0`, `eval "return 1" 0`, `"\x45VAL" "return 1" 0`, `EVALSHA e0e1f9fabfc9d4800c877a703b823ac0578ff8db 0`, `SCRIPT FLUSH`} {
		if code, _, _ := a.exec("A", line); code == http.StatusTooManyRequests {
			limited++
		}
	}
	if limited < 2 {
		t.Errorf("5 scripts at once: %d limited; want at least 2", limited)
	}
	if code, r, body := a.exec("A", "SET k v"); code != 200 || r.Output != "OK" {
		t.Errorf("SET after the script limit = %d %s; want OK", code, body)
	}
	if code, r, body := b.exec("A", `EVAL "return 7" 0`); code != 200 || r.Output != "(integer) 7" {
		t.Errorf("another learner's EVAL = %d %s; want (integer) 7", code, body)
	}
	_, metrics := get(t, base, "/metrics")
	if !strings.Contains(metrics, `locklab_rate_limited_requests_total{limit="scripts"}`) {
		t.Error("/metrics does not count script-limited requests")
	}
}

// TestBodyLimit checks that an oversized body is refused before any
// handler reads it, and nothing changes.
func TestBodyLimit(t *testing.T) {
	ts := newTestServer(t)
	l := newLearner(t, ts.URL)
	big := `{"line":"SET k ` + strings.Repeat("x", 300<<10) + `","client":"A"}`
	code, body := l.do("POST", "/api/playground/exec", "application/json", big)
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(body, `"error"`) {
		t.Errorf("300 KiB body = %d %.200s; want 413 with a JSON error", code, body)
	}
	if ks := l.keys(); len(ks) != 0 {
		t.Errorf("keys after a refused body = %v; want none", ks)
	}
}

func TestValidLearnerID(t *testing.T) {
	for _, tt := range []struct {
		id   string
		want bool
	}{
		{"benchlearner0123456789", true},
		{"AZaz09-_AZaz09-_AZaz09", true},
		{"benchlearner012345678", false},
		{"benchlearner01234567890", false},
		{"benchlearner012345678=", false},
		{"benchlearner012345678é", false},
		{"", false},
	} {
		if got := validLearnerID(tt.id); got != tt.want {
			t.Errorf("validLearnerID(%q) = %v; want %v", tt.id, got, tt.want)
		}
	}
}

// TestScriptTimeBudget checks that scripts are metered by the time they
// run: quick scripts are never held up, a learner whose scripts keep
// running into the deadline is stopped with 429 and Retry-After, and other
// learners' scripts go on. (Quick scripts cost a unit each: a learner could
// run burst-need of them at once before waiting, 100 with the defaults.)
func TestScriptTimeBudget(t *testing.T) {
	cfg := testConfig(t)
	pg := playground.NewManager(playground.Options{Limits: playground.Limits{Script: luaredis.Limits{Timeout: 100 * time.Millisecond}}})
	t.Cleanup(pg.Close)
	cfg.Playground = pg
	const need = 10 // 100 ms in limit.ScriptUnit
	cfg.Limits = limit.Limits{ScriptTime: limit.ScriptBudget{
		Learner: limit.NewMemoryMeter(1, 2*need), Address: limit.NewMemoryMeter(1, 100*need),
		Need: need, LearnerRefill: 1, AddressRefill: 1,
	}}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	base := newServerFor(t, s)
	hog, calm := newLearner(t, base), newLearner(t, base)
	for i := range 5 {
		if code, r, body := calm.exec("A", `EVAL "return 1" 0`); code != 200 || r.Output != "(integer) 1" {
			t.Fatalf("quick script %d = %d %s; want (integer) 1", i, code, body)
		}
	}
	var codes []int
	for range 4 {
		code, _, body := hog.exec("A", `EVAL "while true do end" 0`)
		codes = append(codes, code)
		if code == http.StatusTooManyRequests && !strings.Contains(body, "share of the sandbox's time") {
			t.Errorf("429 body = %s; want it to say why", body)
		}
	}
	if codes[0] != 200 || codes[len(codes)-1] != http.StatusTooManyRequests {
		t.Errorf("four scripts at their deadline got %v; want the first answered and the last refused", codes)
	}
	if code, _, _ := hog.exec("A", "SET k v"); code != 200 {
		t.Errorf("a plain command after the script budget ran out = %d; want 200", code)
	}
	if code, r, body := calm.exec("A", `EVAL "return 2" 0`); code != 200 || r.Output != "(integer) 2" {
		t.Errorf("another learner's script = %d %s; want (integer) 2", code, body)
	}
}
