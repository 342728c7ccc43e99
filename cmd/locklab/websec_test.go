package main

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/locklab/locklab/internal/redistest"
	"github.com/locklab/locklab/limit"
)

// TestParseFlagsChecksSecrets checks the admin token's minimum length
// (128 bits in base64) and the other checks added with it.
func TestParseFlagsChecksSecrets(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		env  map[string]string
		want string // "" for no error
	}{
		{"no token", nil, nil, ""},
		{"12-character token", nil, map[string]string{"LOCKLAB_ADMIN_TOKEN": "abcdefghijkl"}, "at least 22 characters"},
		{"21-character token", nil, map[string]string{"LOCKLAB_ADMIN_TOKEN": strings.Repeat("a", 21)}, "at least 22 characters"},
		{"22-character token", nil, map[string]string{"LOCKLAB_ADMIN_TOKEN": strings.Repeat("a", 22)}, ""},
		{"no participants", []string{"-max-participants", "0"}, nil, "-max-participants must be at least 1"},
		{"participants from env", nil, map[string]string{"LOCKLAB_MAX_PARTICIPANTS": "x"}, "LOCKLAB_MAX_PARTICIPANTS"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseFlags(append([]string{"locklab"}, tt.args...), func(k string) string { return tt.env[k] }, io.Discard)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("parseFlags = %v; want no error", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("parseFlags = %v; want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestRunMetricsListener checks -metrics-addr and LOCKLAB_METRICS_TOKEN:
// /metrics moves off the public listener to its own, which wants the
// token.
func TestRunMetricsListener(t *testing.T) {
	const token = "metrics-token-0123456789abc"
	base, stderr, _ := startServer(t, map[string]string{"LOCKLAB_METRICS_TOKEN": token}, "-metrics-addr", "127.0.0.1:0")
	m := regexp.MustCompile(`msg="serving metrics" addr=(127\.0\.0\.1:\d+)`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no metrics address in the log:\n%s", stderr)
	}
	if code, _ := fetch(t, base+"/metrics"); code != 404 {
		t.Errorf("GET /metrics on the public listener = %d; want 404", code)
	}
	get := func(auth string) int {
		req, _ := http.NewRequest("GET", "http://"+m[1]+"/metrics", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tt := range []struct {
		auth string
		want int
	}{{"", 401}, {"Bearer wrong", 401}, {"Basic " + token, 401}, {"Bearer " + token, 200}} {
		if code := get(tt.auth); code != tt.want {
			t.Errorf("GET /metrics on -metrics-addr with Authorization %q = %d; want %d", tt.auth, code, tt.want)
		}
	}
}

// TestAdminGuessesSharedAndFailClosed runs two replicas on one real
// redis-server: wrong admin tokens sent to one count on the other, and
// with Redis down no token is checked at all (503), not even the right one.
func TestAdminGuessesSharedAndFailClosed(t *testing.T) {
	const token = "replica-admin-token-0123"
	rs := redistest.StartServer(t)
	env := map[string]string{"LOCKLAB_ADMIN_TOKEN": token, "REDIS_URL": "redis://" + rs.Addr}
	a, _, _ := startServer(t, env)
	b, _, _ := startServer(t, env)
	get := func(base, tok string) (int, string) {
		req, _ := http.NewRequest("GET", base+"/admin", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Retry-After")
	}
	if code, _ := get(a, token); code != 200 {
		t.Fatalf("right token on A = %d", code)
	}
	// The address may get 10 wrong (its burst), across both replicas.
	for i := range limit.AdminFailuresAddressBurst {
		base := a
		if i%2 == 1 {
			base = b
		}
		if code, _ := get(base, "wrong-token-0123456789abc"); code != 401 {
			t.Fatalf("wrong token %d = %d; want 401", i, code)
		}
	}
	for _, base := range []string{a, b} {
		if code, retry := get(base, token); code != 429 || retry != "12" {
			t.Errorf("right token after 10 wrong = %d Retry-After %q; want 429 12", code, retry)
		}
	}
	rs.Stop()
	if code, retry := get(b, token); code != 503 || retry == "" {
		t.Errorf("token with Redis down = %d Retry-After %q; want 503 with Retry-After", code, retry)
	}
}
