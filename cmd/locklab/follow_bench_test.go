package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/internal/redistest"
	"github.com/locklab/locklab/playground"
	"github.com/locklab/locklab/store"
)

// BenchmarkExecSharedSandbox runs a learner's lines on one replica whose
// sandboxes are shared through a real redis-server, as with REDIS_URL:
// what every command costs in round trips to Redis and in saving the
// copy. Run it beside the same benchmark of another version to compare.
func BenchmarkExecSharedSandbox(b *testing.B) {
	for _, tt := range []struct {
		name, line string
		fill       int // keys of 60,000 bytes written first
	}{
		{"write", "SET lock:bench tok PX 30000", 0},
		{"read", "GET lock:bench", 0},
		{"script", `EVAL "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], 30000) end return 0" 1 lock:bench tok`, 0},
		// A sandbox near its 4 MiB: each write saves all of it.
		{"write-full-sandbox", "SET lock:bench tok PX 30000", 65},
	} {
		b.Run(tt.name, func(b *testing.B) {
			st, err := store.OpenRedis("redis://" + redistest.Start(b))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			copies, ok := st.SandboxCopies()
			if !ok {
				b.Fatal("a Redis store gives no sandbox copies")
			}
			m := playground.NewManager(playground.Options{IdleTimeout: 30 * time.Minute, SandboxCopies: copies})
			b.Cleanup(m.Close)
			const learner = "benchlearner0123456789"
			// A lesson's worth of keys, so that a copy is not empty.
			for _, line := range []string{"SET lock:bench tok PX 30000", "RPUSH events a b c d e f g h", "HSET owner id 7 host web-1", "INCR fence"} {
				if _, err := m.Exec(context.Background(), learner, playground.ClientA, line); err != nil {
					b.Fatal(err)
				}
			}
			for i := range tt.fill {
				line := fmt.Sprintf("SET fill:%d %s", i, strings.Repeat("x", 60_000))
				if _, err := m.Exec(context.Background(), learner, playground.ClientA, line); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := m.Exec(context.Background(), learner, playground.ClientA, tt.line); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
