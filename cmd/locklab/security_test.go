package main

import (
	"io"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/limit"
	"github.com/locklab/locklab/store"
)

func TestSecurityFlags(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	for _, tt := range []struct {
		name    string
		args    []string
		env     map[string]string
		want    securityConfig
		wantErr string
	}{
		{name: "defaults", want: securityConfig{writeRate: 20, addressRate: 200, scriptRate: 2, raceRate: 20, scriptTimeout: time.Second}},
		{name: "from env", env: map[string]string{
			"LOCKLAB_RATE_LIMIT": "5", "LOCKLAB_IP_RATE_LIMIT": "50", "LOCKLAB_SCRIPT_RATE_LIMIT": "1",
			"LOCKLAB_TRUSTED_PROXIES": "10.0.0.0/8, 192.0.2.1", "LOCKLAB_BEHIND_TLS": "true", "LOCKLAB_SCRIPT_TIMEOUT": "250ms",
			"LOCKLAB_RACE_RATE_LIMIT": "7",
		}, want: securityConfig{writeRate: 5, addressRate: 50, scriptRate: 1, raceRate: 7, scriptTimeout: 250 * time.Millisecond, behindTLS: true, trustedProxies: proxyList{
			netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.1/32"),
		}}},
		{name: "flag beats env", args: []string{"-rate-limit", "0"}, env: map[string]string{"LOCKLAB_RATE_LIMIT": "5"},
			want: securityConfig{writeRate: 0, addressRate: 200, scriptRate: 2, raceRate: 20, scriptTimeout: time.Second}},
		{name: "script timeout too long", args: []string{"-script-timeout", "1m"}, wantErr: "-script-timeout must be between"},
		{name: "bad proxy", env: map[string]string{"LOCKLAB_TRUSTED_PROXIES": "10.0.0.0/8,lb.local"}, wantErr: `LOCKLAB_TRUSTED_PROXIES="10.0.0.0/8,lb.local": "lb.local" is neither an address nor a CIDR range`},
		{name: "bad rate", env: map[string]string{"LOCKLAB_SCRIPT_RATE_LIMIT": "lots"}, wantErr: "LOCKLAB_SCRIPT_RATE_LIMIT"},
		{name: "negative rate", args: []string{"-ip-rate-limit", "-1"}, wantErr: "must be 0 (off) or more"},
		{name: "bad tls", env: map[string]string{"LOCKLAB_BEHIND_TLS": "maybe"}, wantErr: "LOCKLAB_BEHIND_TLS"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseFlags(append([]string{"locklab"}, tt.args...), env(tt.env), io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseFlags = %v; want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cfg.security, tt.want) {
				t.Errorf("security config = %+v; want %+v", cfg.security, tt.want)
			}
		})
	}
}

// TestRateLimitZeroTurnsLimitsOff checks LOCKLAB_RATE_LIMIT=0, which
// benchmarks rely on: no limiter at all, scripts' time budget included.
func TestRateLimitZeroTurnsLimitsOff(t *testing.T) {
	st, err := store.OpenBolt(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg, err := parseFlags([]string{"locklab"}, func(k string) string {
		return map[string]string{"LOCKLAB_RATE_LIMIT": "0"}[k]
	}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if l := limits(st, cfg.security); !reflect.DeepEqual(l, limit.Limits{}) {
		t.Errorf("limits with LOCKLAB_RATE_LIMIT=0 = %+v; want none", l)
	}
	cfg, _ = parseFlags([]string{"locklab"}, func(string) string { return "" }, io.Discard)
	l := limits(st, cfg.security)
	if l.Writes == nil || l.WritesPerAddress == nil || l.Scripts == nil || l.ScriptsPerAddress == nil || l.ScriptTime.Learner == nil || l.ScriptTime.Need != 100 {
		t.Errorf("default limits = %+v; want every limit on, scripts needing 100 units (1 s)", l)
	}
}
