package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/locklab/locklab/internal/redistest"
)

// BenchmarkSaveWaitsForReplica is what WAIT 1 costs a progress save: the
// same answers saved on a master with a replica, by a store that does not
// wait (one node) and one that does (Sentinel and Cluster).
func BenchmarkSaveWaitsForReplica(b *testing.B) {
	master, replica := redistest.Start(b), redistest.Start(b)
	follow(b, replica, master)
	for _, wait := range []bool{false, true} {
		b.Run(fmt.Sprintf("wait=%v", wait), func(b *testing.B) {
			s, err := OpenRedis("redis://" + master)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			s.b.(*redisBackend).replicas.failover = wait
			ctx := context.Background()
			b.ResetTimer()
			for i := range b.N {
				if _, err := s.RecordAnswer(ctx, alice, "locks", fmt.Sprintf("q%d", i%50), true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
