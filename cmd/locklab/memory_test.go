package main

import (
	"io"
	"runtime/debug"
	"strings"
	"testing"
)

func TestMemoryFlags(t *testing.T) {
	def := memoryConfig{sandboxData: 128 << 20, perAddress: 50, limit: 512 << 20, gcPercent: 400}
	for _, tt := range []struct {
		args []string
		env  map[string]string
		want memoryConfig
		err  string
	}{
		{want: def},
		{args: []string{"-sandbox-memory", "1GiB", "-sandboxes-per-address", "200", "-memory-limit", "2GiB"},
			want: memoryConfig{sandboxData: 1 << 30, perAddress: 200, limit: 2 << 30, gcPercent: 400}},
		{env: map[string]string{"LOCKLAB_SANDBOX_MEMORY": "64M", "LOCKLAB_SANDBOXES_PER_ADDRESS": "5", "LOCKLAB_MEMORY_LIMIT": "300MiB", "LOCKLAB_GC_PERCENT": "200"},
			want: memoryConfig{sandboxData: 64 << 20, perAddress: 5, limit: 300 << 20, gcPercent: 200}},
		// GOMEMLIMIT and GOGC are left to the runtime, unless the flag says otherwise.
		{env: map[string]string{"GOMEMLIMIT": "700MiB", "GOGC": "50"}, want: memoryConfig{sandboxData: 128 << 20, perAddress: 50}},
		{env: map[string]string{"GOMEMLIMIT": "700MiB", "GOGC": "50"}, args: []string{"-memory-limit", "1G", "-gc-percent", "300"},
			want: memoryConfig{sandboxData: 128 << 20, perAddress: 50, limit: 1 << 30, gcPercent: 300}},
		{args: []string{"-memory-limit", "0", "-gc-percent", "0"}, want: memoryConfig{sandboxData: 128 << 20, perAddress: 50}},
		{args: []string{"-gc-percent", "-5"}, err: "-gc-percent"},
		{env: map[string]string{"LOCKLAB_GC_PERCENT": "x"}, err: "LOCKLAB_GC_PERCENT"},
		{args: []string{"-sandbox-memory", "1MiB"}, err: "at least 4MiB"},
		{args: []string{"-sandboxes-per-address", "0"}, err: "at least 1"},
		{args: []string{"-memory-limit", "10MiB"}, err: "at least 64MiB"},
		{env: map[string]string{"LOCKLAB_SANDBOX_MEMORY": "lots"}, err: "LOCKLAB_SANDBOX_MEMORY"},
	} {
		getenv := func(k string) string { return tt.env[k] }
		cfg, err := parseFlags(append([]string{"locklab"}, tt.args...), getenv, io.Discard)
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("parseFlags(%q, %v) error = %v; want %q", tt.args, tt.env, err, tt.err)
			}
		case err != nil:
			t.Errorf("parseFlags(%q, %v): %v", tt.args, tt.env, err)
		case cfg.memory != tt.want:
			t.Errorf("parseFlags(%q, %v) memory = %+v; want %+v", tt.args, tt.env, cfg.memory, tt.want)
		}
	}
}

func TestLimitMemory(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	gcBefore := debug.SetGCPercent(100)
	debug.SetGCPercent(gcBefore)
	restore := limitMemory(memoryConfig{limit: 300 << 20, gcPercent: 250})
	if got := debug.SetMemoryLimit(-1); got != 300<<20 {
		t.Errorf("memory limit = %d; want %d", got, 300<<20)
	}
	if got := debug.SetGCPercent(250); got != 250 {
		t.Errorf("GOGC = %d; want 250", got)
	}
	restore()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("memory limit after restore = %d; want %d back", got, before)
	}
	if got := debug.SetGCPercent(gcBefore); got != gcBefore {
		t.Errorf("GOGC after restore = %d; want %d back", got, gcBefore)
	}
	limitMemory(memoryConfig{})() // no limit: nothing to set or restore
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("memory limit after a zero config = %d; want %d", got, before)
	}
}
