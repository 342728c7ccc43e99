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
	restore := limitMemory(memoryConfig{limit: 300 << 20})
	if got := debug.SetMemoryLimit(-1); got != 300<<20 {
		t.Errorf("memory limit = %d; want %d", got, 300<<20)
	}
	restore()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("memory limit after restore = %d; want %d back", got, before)
	}
	limitMemory(memoryConfig{})() // no limit: nothing to set or restore
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("memory limit after a zero config = %d; want %d", got, before)
	}
}

func TestGCPercentFor(t *testing.T) {
	for _, tt := range []struct {
		live uint64
		max  int
		want int
	}{
		{live: 3 << 20, max: 400, want: 400},   // a reader's heap: the floor would allow 2033
		{live: 16 << 20, max: 400, want: 300},  // grows to the 64 MiB floor
		{live: 24 << 20, max: 400, want: 166},  // still to the floor
		{live: 32 << 20, max: 400, want: 100},  // from half the floor on, Go's default
		{live: 200 << 20, max: 400, want: 100}, // a full playground's heap is not multiplied
		{live: 0, max: 400, want: 100},         // nothing measured yet
		{live: 3 << 20, max: 150, want: 150},
		{live: 3 << 20, max: 50, want: 50}, // a max under 100 is kept
	} {
		if got := gcPercentFor(tt.live, tt.max, serverGCFloor); got != tt.want {
			t.Errorf("gcPercentFor(%d MiB, %d) = %d; want %d", tt.live>>20, tt.max, got, tt.want)
		}
	}
}

// A sandbox worker's floor is a quarter of what its memory limit leaves
// the heap: 48 MiB for the default 256 MiB.
func TestWorkerGCFloor(t *testing.T) {
	floor := workerGCFloor(256 << 20)
	if floor != 48<<20 {
		t.Fatalf("workerGCFloor(256 MiB) = %d MiB; want 48", floor>>20)
	}
	for _, tt := range []struct {
		live uint64
		want int
	}{
		{live: 2 << 20, want: 400},  // a worker with a few sandboxes
		{live: 20 << 20, want: 140}, // grows to the 48 MiB floor
		{live: 24 << 20, want: 100}, // from half of it on, Go's default
	} {
		if got := gcPercentFor(tt.live, 400, floor); got != tt.want {
			t.Errorf("gcPercentFor(%d MiB, 400, worker floor) = %d; want %d", tt.live>>20, got, tt.want)
		}
	}
}

func TestTuneGCSetsAndRestores(t *testing.T) {
	before := debug.SetGCPercent(77)
	defer debug.SetGCPercent(before)
	stop := tuneGC(300, serverGCFloor)
	got := debug.SetGCPercent(77) // reads what tuneGC set (and sets 77 again)
	stop()
	if got < 100 || got > 300 {
		t.Errorf("GOGC under tuneGC(300) = %d; want 100 to 300", got)
	}
	if after := debug.SetGCPercent(before); after != 77 {
		t.Errorf("GOGC after stop = %d; want 77 back", after)
	}
	tuneGC(0, serverGCFloor)() // 0: nothing to set or restore
	if after := debug.SetGCPercent(before); after != before {
		t.Errorf("GOGC after tuneGC(0) = %d; want %d", after, before)
	}
}
