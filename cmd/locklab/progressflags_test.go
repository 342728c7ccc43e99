package main

import (
	"io"
	"strings"
	"testing"

	"github.com/locklab/locklab/limit"
	"github.com/locklab/locklab/store"
)

// TestProgressFlags: -progress-max and -new-learners-per-address take
// their defaults, their environment variables and their flags (which win),
// and refuse what cannot work.
func TestProgressFlags(t *testing.T) {
	for _, tt := range []struct {
		name      string
		env       map[string]string
		args      []string
		max       int64
		newcomers int
		err       string
	}{
		{name: "defaults", max: store.DefaultMaxSize, newcomers: limit.DefaultNewcomersPerDay},
		{name: "env", env: map[string]string{"LOCKLAB_PROGRESS_MAX": "2GiB", "LOCKLAB_NEW_LEARNERS_PER_ADDRESS": "1000"}, max: 2 << 30, newcomers: 1000},
		{name: "flags win", env: map[string]string{"LOCKLAB_PROGRESS_MAX": "2GiB"}, args: []string{"-progress-max", "64MiB", "-new-learners-per-address", "0"}, max: 64 << 20, newcomers: 0},
		{name: "too small", args: []string{"-progress-max", "512KiB"}, err: "-progress-max must be at least 1MiB"},
		{name: "bad env", env: map[string]string{"LOCKLAB_PROGRESS_MAX": "lots"}, err: "LOCKLAB_PROGRESS_MAX"},
		{name: "bad newcomers env", env: map[string]string{"LOCKLAB_NEW_LEARNERS_PER_ADDRESS": "many"}, err: "LOCKLAB_NEW_LEARNERS_PER_ADDRESS"},
		{name: "negative newcomers", args: []string{"-new-learners-per-address", "-1"}, err: "-new-learners-per-address"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseFlags(append([]string{"locklab"}, tt.args...), func(k string) string { return tt.env[k] }, io.Discard)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("parseFlags(%q) error = %v; want one naming %q", tt.args, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseFlags(%q): %v", tt.args, err)
			}
			if cfg.progressMax != tt.max || cfg.newcomers != tt.newcomers {
				t.Errorf("parseFlags(%q) = -progress-max %d, -new-learners-per-address %d; want %d, %d", tt.args, cfg.progressMax, cfg.newcomers, tt.max, tt.newcomers)
			}
		})
	}
}
