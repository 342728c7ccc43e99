package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/locklab/locklab/limit"
)

// TestPerAddressLimitsGroupIPv6 checks that an IPv6 client is counted by
// its /64: fresh cookies from ever new addresses of one /64 share one
// address limit, while another /64 has its own.
func TestPerAddressLimitsGroupIPv6(t *testing.T) {
	cfg := testConfig(t)
	cfg.Limits = limit.Limits{WritesPerAddress: limit.NewMemoryLimiter(1, 2)}
	cfg.TrustedProxies = nil
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	exec := func(remote string) int {
		r := httptest.NewRequest("POST", "/api/playground/exec", strings.NewReader(`{"line":"PING","client":"A"}`))
		r.RemoteAddr = remote
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Sec-Fetch-Site", "same-origin")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		return w.Code
	}
	var codes []int
	for _, remote := range []string{"[2001:db8:1:2::1]:1000", "[2001:db8:1:2::2]:1000", "[2001:db8:1:2:ffff::3]:1000"} {
		codes = append(codes, exec(remote))
	}
	if codes[0] != http.StatusOK || codes[1] != http.StatusOK || codes[2] != http.StatusTooManyRequests {
		t.Errorf("three addresses of one /64 got %v; want 200, 200, 429 (one limit for the /64)", codes)
	}
	if code := exec("[2001:db8:1:3::1]:1000"); code != http.StatusOK {
		t.Errorf("an address of another /64 = %d; want 200", code)
	}
}
