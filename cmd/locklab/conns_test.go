package main

import (
	"io"
	"net/netip"
	"strings"
	"testing"
)

func TestConnFlags(t *testing.T) {
	def := connConfig{perAddress: 256, idlePerAddress: 64, streamsPerLearner: 4, streamsPerAddress: 32, streams: 1000}
	for _, tt := range []struct {
		args []string
		env  map[string]string
		want connConfig
		err  string
	}{
		{want: def},
		{args: []string{"-max-conns-per-address", "1000", "-max-idle-conns-per-address", "0", "-max-streams-per-learner", "2", "-max-streams-per-address", "400", "-max-streams", "5000"},
			want: connConfig{perAddress: 1000, idlePerAddress: 0, streamsPerLearner: 2, streamsPerAddress: 400, streams: 5000}},
		{env: map[string]string{"LOCKLAB_MAX_CONNS_PER_ADDRESS": "0", "LOCKLAB_MAX_IDLE_CONNS_PER_ADDRESS": "8", "LOCKLAB_MAX_STREAMS_PER_LEARNER": "1", "LOCKLAB_MAX_STREAMS_PER_ADDRESS": "300", "LOCKLAB_MAX_STREAMS": "600"},
			want: connConfig{perAddress: 0, idlePerAddress: 8, streamsPerLearner: 1, streamsPerAddress: 300, streams: 600}},
		// The flag wins over its variable.
		{env: map[string]string{"LOCKLAB_MAX_STREAMS_PER_ADDRESS": "300"}, args: []string{"-max-streams-per-address", "50"},
			want: connConfig{perAddress: 256, idlePerAddress: 64, streamsPerLearner: 4, streamsPerAddress: 50, streams: 1000}},
		{args: []string{"-max-conns-per-address", "-1"}, err: "-max-conns-per-address"},
		{args: []string{"-max-streams-per-learner", "0"}, err: "at least 1"},
		{args: []string{"-max-streams", "0"}, err: "at least 1"},
		{env: map[string]string{"LOCKLAB_MAX_STREAMS": "many"}, err: "LOCKLAB_MAX_STREAMS"},
	} {
		cfg, err := parseFlags(append([]string{"locklab"}, tt.args...), func(k string) string { return tt.env[k] }, io.Discard)
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("parseFlags(%q, %v) error = %v; want %q", tt.args, tt.env, err, tt.err)
			}
		case err != nil:
			t.Errorf("parseFlags(%q, %v) error = %v", tt.args, tt.env, err)
		case cfg.conns != tt.want:
			t.Errorf("parseFlags(%q, %v).conns = %+v; want %+v", tt.args, tt.env, cfg.conns, tt.want)
		}
	}
}

func TestConnCapsExemptTrustedProxies(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	cc := connConfig{perAddress: 100, idlePerAddress: 10}
	got := cc.connCaps(896, trusted)
	if got.PerAddress != 100 || got.IdlePerAddress != 10 || got.Max != 896 || len(got.Exempt) != 1 || got.Exempt[0] != trusted[0] {
		t.Errorf("connCaps = %+v; want the flags' caps, Max 896 and the trusted proxies exempt", got)
	}
}
