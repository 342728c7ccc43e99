package worker

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/locklab/locklab/playground"
)

// BenchmarkExec measures one command through a supervisor and its worker,
// from 32 goroutines, as one learner (as bench/http.sh does) and as many;
// the in-process Manager is the reference.
func BenchmarkExec(b *testing.B) {
	const line = "SET lock:invoice:7 3f9a1c PX 30000"
	type execer interface {
		Exec(ctx context.Context, learner string, client playground.Client, line string) (playground.Result, error)
	}
	for _, mode := range []string{"in process", "workers"} {
		for _, learners := range []int{1, 32} {
			b.Run(fmt.Sprintf("%s/%d learners", mode, learners), func(b *testing.B) {
				var e execer
				if mode == "workers" {
					s, err := NewSupervisor(Options{Command: workerCommand("serve")})
					if err != nil {
						b.Fatal(err)
					}
					defer s.Close()
					e = s
				} else {
					m := playground.NewManager(playground.Options{})
					defer m.Close()
					e = m
				}
				var n atomic.Int64
				b.SetParallelism(16) // 32 goroutines on 2 CPUs
				b.RunParallel(func(pb *testing.PB) {
					learner := fmt.Sprintf("learner-%d", n.Add(1)%int64(learners))
					for pb.Next() {
						if res, err := e.Exec(context.Background(), learner, playground.ClientA, line); err != nil || res.Output != "OK" {
							b.Fatalf("%s = %q, %v", line, res.Output, err)
						}
					}
				})
			})
		}
	}
}

// BenchmarkSmallEditToBigKey measures a one-field HSET to a hash as large
// as one key may grow, through a supervisor and its worker: the worker
// reports the whole key to the supervisor's mirror after each write, so
// the cost follows the key's size. With the default key limit of 256 KiB
// it is bounded; "4 MiB key" is the cost without that limit, as when a
// key could take the sandbox's whole data limit.
func BenchmarkSmallEditToBigKey(b *testing.B) {
	for _, keyBytes := range []int{256 << 10, 4 << 20} {
		b.Run(fmt.Sprintf("%d KiB key", keyBytes>>10), func(b *testing.B) {
			s, err := NewSupervisor(Options{Workers: 1, Command: workerCommand("serve"), Playground: playground.Options{
				Limits: playground.Limits{MaxKeyBytes: keyBytes, MaxDataBytes: 4<<20 + 1<<20},
			}})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			value := strings.Repeat("v", 60_000)
			for i := 0; ; i++ {
				res, err := s.Exec(ctx, "ada", playground.ClientA, fmt.Sprintf("HSET h f%d %s", i, value))
				if err != nil {
					break // the key is full
				}
				if res.Output != "(integer) 1" {
					b.Fatalf("HSET = %q", res.Output)
				}
			}
			b.ResetTimer()
			for i := range b.N {
				if _, err := s.Exec(ctx, "ada", playground.ClientA, fmt.Sprintf("HSET h small %d", i)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
